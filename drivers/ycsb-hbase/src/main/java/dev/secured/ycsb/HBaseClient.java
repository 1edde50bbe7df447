package dev.secured.ycsb;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableExistsException;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.security.provider.SaslClientAuthenticationProviders;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.security.UserGroupInformation;

import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * YCSB binding for HBase 2.6 through hbase-shaded-client. Every YCSB property whose name starts
 * with hbase., hadoop., zookeeper. or dfs. goes into the client's Configuration unchanged, so
 * the security the operator renders into hbase-site.xml (hbase.security.authentication,
 * hbase.rpc.protection, hbase.client.netty.tls.*, ...) is the security the benchmark speaks.
 * With principal and keytab set, the JVM logs in from the keytab before connecting. One
 * Connection is shared by all YCSB threads (it is thread-safe); each thread has its own Table.
 */
public class HBaseClient extends DB {
  private static final Object LOCK = new Object();
  private static Connection connection;
  private static RemoteWriter remoteWriter;
  private static int users;
  /** How the session is secured, for the summary: e.g. "kerberos/privacy", "tls", "plaintext". */
  static volatile String security = "plaintext";
  /** Client-side protection (clientside.* properties), shared by every thread; null without. */
  private static FieldCrypt crypt;
  /** The summary's clientSide: cipher, signature and fields; null without. */
  static volatile Map<String, Object> clientSide;
  private static int protectedFields;
  /** The first thread's properties: the write check after the run connects with them. */
  private static Properties properties;
  /** Operations completed per second, for the summary. */
  static final Series series = new Series();
  /**
   * Whether a call here is a whole YCSB operation, so that calls can be counted into the series
   * when no GatedWorkload counts operations: not with read-modify-writes, two calls each.
   */
  static volatile boolean callsAreOperations;
  /** Whether one of the thread's calls failed since GatedWorkload last cleared it. */
  static final ThreadLocal<Boolean> failed = ThreadLocal.withInitial(() -> Boolean.FALSE);
  /** Whether the thread's operation belongs to a warm-up (GatedWorkload sets it). */
  static final ThreadLocal<Boolean> warmingUp = ThreadLocal.withInitial(() -> Boolean.FALSE);
  /** Every write of the run, when writehistory names a file; null without. */
  private static WriteHistory history;

  private Table table;
  private byte[] family;
  private String tableName;

  @Override
  public void init() throws DBException {
    Properties p = getProperties();
    family = Bytes.toBytes(p.getProperty("columnfamily", "family"));
    tableName = p.getProperty("table", "usertable");
    synchronized (LOCK) {
      if (connection == null) {
        properties = p;
        callsAreOperations = Double.parseDouble(p.getProperty("readmodifywriteproportion", "0")) == 0;
        loadClientSide(p);
        openHistory(p);
        connection = connect(p);
        String url = p.getProperty("prometheus.remotewrite.url");
        if (url != null && !url.isEmpty()) {
          remoteWriter = new RemoteWriter(url, tags(p), 5);
        }
        if (Boolean.parseBoolean(p.getProperty("createtable", "false"))) {
          createTable(p);
        }
      }
      users++;
    }
    try {
      table = connection.getTable(TableName.valueOf(p.getProperty("table", "usertable")));
    } catch (IOException e) {
      throw new DBException("opening table: " + e, e);
    }
  }

  /**
   * clientside.cipher, clientside.signature, clientside.fields (the first N fields; all when 0
   * or unset) and clientside.keydir (the datastore's client-keys Secret, mounted) protect values
   * as pkg/fieldcrypt does, each bound to table/row/family:qualifier.
   */
  private static void loadClientSide(Properties p) throws DBException {
    String cipher = p.getProperty("clientside.cipher", "None"), signature = p.getProperty("clientside.signature", "None");
    if (cipher.equals("None") && signature.equals("None")) {
      return;
    }
    try {
      crypt = FieldCrypt.load(java.nio.file.Path.of(p.getProperty("clientside.keydir", "")), cipher, signature);
    } catch (IOException | java.security.GeneralSecurityException | IllegalArgumentException e) {
      throw new DBException("clientside: " + e, e);
    }
    int fields = Integer.parseInt(p.getProperty("fieldcount", "10"));
    protectedFields = Integer.parseInt(p.getProperty("clientside.fields", "0"));
    if (protectedFields <= 0 || protectedFields > fields) {
      protectedFields = fields;
    }
    Map<String, Object> cs = new java.util.LinkedHashMap<>();
    cs.put("cipher", cipher);
    cs.put("signature", signature);
    cs.put("fields", protectedFields);
    clientSide = cs;
  }

  /** Whether YCSB's field (fieldN) is protected: N below clientside.fields. */
  private static boolean isProtected(byte[] qualifier) {
    String q = Bytes.toString(qualifier);
    if (crypt == null || !q.startsWith("field")) {
      return false;
    }
    try {
      return Integer.parseInt(q.substring(5)) < protectedFields;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  /** What a protected value is bound to: table/row/family:qualifier. */
  private static byte[] context(String table, byte[] family, byte[] row, byte[] qualifier) {
    return Bytes.toBytes(table + "/" + Bytes.toString(row) + "/" + Bytes.toString(family) + ":" + Bytes.toString(qualifier));
  }

  private static Connection connect(Properties p) throws DBException {
    Configuration conf = HBaseConfiguration.create();
    for (String name : p.stringPropertyNames()) {
      if (name.startsWith("hbase.") || name.startsWith("hadoop.") || name.startsWith("zookeeper.") || name.startsWith("dfs.")) {
        conf.set(name, p.getProperty(name));
      }
    }
    String principal = p.getProperty("principal"), keytab = p.getProperty("keytab");
    try {
      if (principal != null && keytab != null) {
        conf.set("hadoop.security.authentication", "kerberos");
        UserGroupInformation.setConfiguration(conf);
        UserGroupInformation.loginUserFromKeytab(principal, keytab);
      }
      // HBase 2.6's RPC connection registry first asks for the cluster id with authentication
      // off, and the client builds its table of SASL providers once per JVM, from the first
      // configuration it sees: built from that one, every later connection offers SIMPLE to a
      // Kerberos cluster. Building it from ours first keeps Kerberos.
      SaslClientAuthenticationProviders.getInstance(conf);
      security = describe(conf);
      return ConnectionFactory.createConnection(conf);
    } catch (IOException e) {
      throw new DBException("connecting to HBase (" + conf.get("hbase.client.bootstrap.servers") + "): " + e, e);
    }
  }

  /**
   * Creates the table if it does not exist, split at user1..user9 so that hashed YCSB keys
   * spread over ten regions from the start (the load phase sets createtable=true).
   */
  private static void createTable(Properties p) throws DBException {
    TableName name = TableName.valueOf(p.getProperty("table", "usertable"));
    try (Admin admin = connection.getAdmin()) {
      if (admin.tableExists(name)) {
        return;
      }
      byte[][] splits = new byte[9][];
      for (int i = 0; i < splits.length; i++) {
        splits[i] = Bytes.toBytes("user" + (i + 1));
      }
      ColumnFamilyDescriptorBuilder family =
          ColumnFamilyDescriptorBuilder.newBuilder(Bytes.toBytes(p.getProperty("columnfamily", "family")));
      // HBase encrypts the HFiles of a column family only when the family asks for it; the
      // operator sets this with engine-level encryption at rest.
      String encryption = p.getProperty("columnfamily.encryption", "");
      if (!encryption.isEmpty()) {
        family.setEncryptionType(encryption);
      }
      admin.createTable(TableDescriptorBuilder.newBuilder(name).setColumnFamily(family.build()).build(), splits);
    } catch (TableExistsException e) {
      // another client of the load phase was first
    } catch (IOException e) {
      throw new DBException("creating table " + name + ": " + e, e);
    }
  }

  /**
   * writehistory=FILE records every write of the run (internal/writecheck's format): each
   * value sealed, each cell stamped with the client's clock so that HBase keeps the write the
   * history calls latest, whatever order concurrent writes arrive in.
   */
  private static void openHistory(Properties p) throws DBException {
    String path = p.getProperty("writehistory", "");
    if (path.isEmpty()) {
      return;
    }
    if (Integer.parseInt(p.getProperty("fieldlength", "100")) < WriteHistory.MIN_VALUE_LEN) {
      throw new DBException("writehistory seals every value in its last " + WriteHistory.TAG_LEN + " bytes: set fieldlength to at least " + WriteHistory.MIN_VALUE_LEN);
    }
    if (Integer.parseInt(p.getProperty("zeropadding", "1")) > 1) {
      throw new DBException("writehistory names records user<number>: leave zeropadding at 1");
    }
    try {
      history = WriteHistory.append(java.nio.file.Path.of(path));
    } catch (IOException e) {
      throw new DBException("writehistory: " + e, e);
    }
  }

  /**
   * With verifywrites=true, reads back every write of the history whose latest attempt was
   * acknowledged, on a connection of its own (the run's is closed), and returns the summary's
   * "writes"; null when not asked. The exporter calls it after the run's time is taken.
   */
  static Map<String, Object> verifyWrites() throws IOException, InterruptedException {
    Properties p = properties;
    if (p == null || !Boolean.parseBoolean(p.getProperty("verifywrites", "false"))) {
      return null;
    }
    byte[] family = Bytes.toBytes(p.getProperty("columnfamily", "family"));
    String table = p.getProperty("table", "usertable");
    try (Connection c = connect(p)) {
      WriteChecker checker = new WriteChecker(c, TableName.valueOf(table), (t, key) -> {
        Map<Integer, byte[]> row = WriteChecker.fields(t.get(WriteChecker.get(key, family)), family);
        if (row != null && crypt != null) {
          for (Map.Entry<Integer, byte[]> f : row.entrySet()) {
            byte[] q = Bytes.toBytes("field" + f.getKey());
            if (isProtected(q)) {
              try {
                f.setValue(crypt.open(f.getValue(), context(table, family, Bytes.toBytes(WriteChecker.name(key)), q)));
              } catch (java.security.GeneralSecurityException e) {
                throw new IOException("field" + f.getKey() + " does not open: " + e.getMessage(), e);
              }
            }
          }
        }
        return row;
      });
      return checker.check(java.nio.file.Path.of(p.getProperty("writehistory")));
    } catch (DBException e) {
      throw new IOException(e.getMessage(), e);
    }
  }

  /** The labels of the published series: prometheus.tags (k=v,...) and the session's. */
  private static Map<String, String> tags(Properties p) {
    Map<String, String> tags = new HashMap<>();
    for (String kv : p.getProperty("prometheus.tags", "").split(",")) {
      int eq = kv.indexOf('=');
      if (eq > 0) {
        tags.put(kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
      }
    }
    tags.put("profile", p.getProperty("profile", "unnamed"));
    tags.put("protocol", security);
    tags.put("suite", "none");
    tags.put("scenario", System.getenv().getOrDefault("YCSB_PHASE", "run"));
    return tags;
  }

  /** Names the session's protection the way the summary reports it. */
  static String describe(Configuration conf) {
    String s = conf.getBoolean("hbase.client.netty.tls.enabled", false) ? "tls" : "";
    if ("kerberos".equalsIgnoreCase(conf.get("hbase.security.authentication"))) {
      // The level asked for first: the others only carry the session through a live change of
      // the datastore's level.
      String asked = conf.get("hbase.rpc.protection", "authentication").split(",")[0].trim();
      s += (s.isEmpty() ? "" : "+") + "kerberos/" + asked;
    }
    return s.isEmpty() ? "plaintext" : s;
  }

  @Override
  public void cleanup() throws DBException {
    try {
      table.close();
      synchronized (LOCK) {
        if (--users == 0) {
          connection.close();
          connection = null;
          if (history != null) {
            history.close();
            history = null;
          }
          if (remoteWriter != null) {
            remoteWriter.close();
            remoteWriter = null;
          }
        }
      }
    } catch (IOException e) {
      throw new DBException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DBException("publishing the last samples was interrupted", e);
    }
  }

  @Override
  public Status read(String t, String key, Set<String> fields, Map<String, ByteIterator> result) {
    Get get = new Get(Bytes.toBytes(key));
    if (fields == null) {
      get.addFamily(family);
    } else {
      for (String f : fields) {
        get.addColumn(family, Bytes.toBytes(f));
      }
    }
    return call("read", () -> {
      Result r = table.get(get);
      if (r.isEmpty()) {
        return Status.NOT_FOUND;
      }
      copy(r, result);
      return Status.OK;
    });
  }

  @Override
  public Status scan(String t, String startKey, int count, Set<String> fields, Vector<HashMap<String, ByteIterator>> result) {
    Scan scan = new Scan().withStartRow(Bytes.toBytes(startKey)).setLimit(count).setCaching(count);
    if (fields == null) {
      scan.addFamily(family);
    } else {
      for (String f : fields) {
        scan.addColumn(family, Bytes.toBytes(f));
      }
    }
    return call("scan", () -> {
      try (ResultScanner rs = table.getScanner(scan)) {
        for (Result r : rs) {
          HashMap<String, ByteIterator> row = new HashMap<>();
          copy(r, row);
          result.add(row);
        }
      }
      return Status.OK;
    });
  }

  @Override
  public Status update(String t, String key, Map<String, ByteIterator> values) {
    return put("update", key, values);
  }

  @Override
  public Status insert(String t, String key, Map<String, ByteIterator> values) {
    return put("insert", key, values);
  }

  private Status put(String op, String key, Map<String, ByteIterator> values) {
    byte[] row = Bytes.toBytes(key);
    Put put = new Put(row);
    WriteHistory h = history;
    long stamp = System.currentTimeMillis(), keyNumber = 0;
    List<long[]> written = null; // {field, tag} of each value, for the history
    if (h != null) {
      written = new ArrayList<>(values.size());
      try {
        keyNumber = Long.parseLong(key.substring(4));
      } catch (NumberFormatException | IndexOutOfBoundsException ex) {
        SummaryExporter.firstError(op + ": writehistory: the key " + key + " is not user<number>");
        return Status.BAD_REQUEST;
      }
    }
    for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
      byte[] q = Bytes.toBytes(e.getKey()), v = e.getValue().toArray();
      if (written != null) {
        int field;
        try {
          field = Integer.parseInt(e.getKey().substring(5));
        } catch (NumberFormatException | IndexOutOfBoundsException ex) {
          SummaryExporter.firstError(op + ": writehistory: the field " + e.getKey() + " is not field<number>");
          return Status.BAD_REQUEST;
        }
        written.add(new long[] {field, WriteHistory.seal(key, field, v)});
      }
      if (isProtected(q)) {
        try {
          v = crypt.seal(v, context(tableName, family, row, q));
        } catch (java.security.GeneralSecurityException ex) {
          SummaryExporter.firstError(op + ": sealing " + e.getKey() + ": " + ex);
          return Status.ERROR;
        }
      }
      if (written != null) {
        put.addColumn(family, q, stamp, v);
      } else {
        put.addColumn(family, q, v);
      }
    }
    Status s = call(op, () -> {
      table.put(put);
      return Status.OK;
    });
    if (written != null) {
      for (long[] w : written) {
        h.record(new WriteHistory.Entry(keyNumber, (int) w[0], stamp * 1000, w[1], s.isOk()));
      }
    }
    return s;
  }

  @Override
  public Status delete(String t, String key) {
    return call("delete", () -> {
      table.delete(new Delete(Bytes.toBytes(key)));
      return Status.OK;
    });
  }

  /** Copies a row's values, opening the protected ones: a value that does not open fails the read. */
  private void copy(Result r, Map<String, ByteIterator> into) throws IOException {
    for (Map.Entry<byte[], byte[]> e : r.getFamilyMap(family).entrySet()) {
      byte[] v = e.getValue();
      if (isProtected(e.getKey())) {
        try {
          v = crypt.open(v, context(tableName, family, r.getRow(), e.getKey()));
        } catch (java.security.GeneralSecurityException ex) {
          throw new IOException(Bytes.toString(e.getKey()) + " of " + Bytes.toString(r.getRow()) + ": " + ex.getMessage(), ex);
        }
      }
      into.put(Bytes.toString(e.getKey()), new ByteArrayByteIterator(v));
    }
  }

  /** An HBase call that may fail with an IOException. */
  private interface Call {
    Status run() throws IOException;
  }

  /**
   * Runs a call, timed into the published series; a failure is an ERROR status, and the first
   * one is kept for the summary.
   */
  private static Status call(String op, Call c) {
    long start = System.nanoTime();
    Status s;
    try {
      s = c.run();
    } catch (IOException e) {
      SummaryExporter.firstError(op + ": " + e);
      s = Status.ERROR;
    }
    if (!s.isOk()) {
      failed.set(Boolean.TRUE);
    }
    RemoteWriter w = remoteWriter;
    if (w != null) {
      w.record(op, warmingUp.get(), System.nanoTime() - start, s.isOk());
    }
    if (s.isOk() && callsAreOperations && GatedWorkload.window == null) {
      series.add(System.currentTimeMillis());
    }
    return s;
  }
}
