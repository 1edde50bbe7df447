// Damages rows of the YCSB table behind the benchmark client's back, so that the tests can show
// its write check finds what it must:
//   java -cp <driver class path> HBaseDamage.java QUORUM ZKPORT (put ROW FIELD HEX | delete ROW)...
// A put writes the value an hour in the client's future, so it wins over every cell the client
// wrote; a delete removes every version of the row. Prints "damage done N".
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;

public class HBaseDamage {
    public static void main(String[] args) throws Exception {
        Configuration conf = HBaseConfiguration.create();
        conf.set("hbase.zookeeper.quorum", args[0]);
        conf.set("hbase.zookeeper.property.clientPort", args[1]);
        byte[] family = Bytes.toBytes("family");
        long future = System.currentTimeMillis() + 3_600_000L;
        int done = 0;
        try (Connection c = ConnectionFactory.createConnection(conf); Table t = c.getTable(TableName.valueOf("usertable"))) {
            for (int i = 2; i < args.length; ) {
                switch (args[i]) {
                    case "put" -> {
                        t.put(new Put(Bytes.toBytes(args[i + 1])).addColumn(family, Bytes.toBytes(args[i + 2]), future, Bytes.fromHex(args[i + 3])));
                        i += 4;
                    }
                    case "delete" -> {
                        t.delete(new Delete(Bytes.toBytes(args[i + 1])));
                        i += 2;
                    }
                    default -> throw new IllegalArgumentException("unknown operation " + args[i]);
                }
                done++;
            }
        }
        System.out.println("damage done " + done);
    }
}
