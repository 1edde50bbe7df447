// The data-plane tests' HBase client: creates a table, puts a value, gets and scans it back
// through HBase's own client, with the configuration on the classpath.
//   java -cp <client conf>:<hbase jars> HBaseSmoke.java TABLE VALUE [PRINCIPAL KEYTAB]
// Prints "smoke ok" and exits 0 when every step read back what was written. With
// -Dsmoke.encryption=AES the column family is encrypted (HBase's transparent encryption), and
// with -Dsmoke.flush=true the table is flushed after the puts, so its HFile is on HDFS.
import java.util.Arrays;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.security.provider.SaslClientAuthenticationProviders;
import org.apache.hadoop.security.UserGroupInformation;

public class HBaseSmoke {
    public static void main(String[] args) throws Exception {
        Configuration conf = HBaseConfiguration.create();
        if (args.length == 4) {
            UserGroupInformation.setConfiguration(conf);
            UserGroupInformation.loginUserFromKeytab(args[2], args[3]);
        }
        // HBase 2.6's RPC connection registry first asks for the cluster id with authentication
        // off, and the client builds its table of SASL providers once per JVM, from the first
        // configuration it sees: built from that one, every later connection offers SIMPLE to
        // a Kerberos cluster. Building it from ours first keeps Kerberos.
        SaslClientAuthenticationProviders.getInstance(conf);
        byte[] family = Bytes.toBytes("f"), qualifier = Bytes.toBytes("q"), value = Bytes.toBytes(args[1]);
        TableName name = TableName.valueOf(args[0]);
        try (Connection c = ConnectionFactory.createConnection(conf); Admin admin = c.getAdmin()) {
            ColumnFamilyDescriptorBuilder cf = ColumnFamilyDescriptorBuilder.newBuilder(family);
            String encryption = System.getProperty("smoke.encryption", "");
            if (!encryption.isEmpty()) {
                cf.setEncryptionType(encryption);
            }
            // smoke.readBack: the table and its rows were written by an earlier run; only read them.
            boolean readBack = Boolean.getBoolean("smoke.readBack");
            if (!readBack) {
                admin.createTable(TableDescriptorBuilder.newBuilder(name).setColumnFamily(cf.build()).build());
            }
            try (Table table = c.getTable(name)) {
                for (int i = 0; i < 3 && !readBack; i++) {
                    table.put(new Put(Bytes.toBytes("row-" + i)).addColumn(family, qualifier, value));
                }
                Result got = table.get(new Get(Bytes.toBytes("row-1")));
                if (!Arrays.equals(got.getValue(family, qualifier), value)) {
                    throw new IllegalStateException("get returned " + got);
                }
                int rows = 0;
                try (ResultScanner scanner = table.getScanner(new Scan())) {
                    for (Result r : scanner) {
                        if (!Arrays.equals(r.getValue(family, qualifier), value)) {
                            throw new IllegalStateException("scan returned " + r);
                        }
                        rows++;
                    }
                }
                if (rows != 3) {
                    throw new IllegalStateException("scan returned " + rows + " rows, want 3");
                }
                if (Boolean.getBoolean("smoke.flush")) {
                    admin.flush(name);
                }
            }
        }
        System.out.println("smoke ok");
    }
}
