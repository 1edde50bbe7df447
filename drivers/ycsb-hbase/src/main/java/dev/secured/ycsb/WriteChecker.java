package dev.secured.ycsb;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Reads back what a write history says must be there and judges every key-field whose latest
 * write was acknowledged: verified, lost, stale, corrupted or unreadable. The same rules as
 * internal/writecheck's Checker (its tests are the specification), so both drivers report
 * "writes" alike. HBase reads a row from the region that holds it, so every read is strongly
 * consistent. Values never appear in the result; keys and timestamps do.
 */
final class WriteChecker {
  private static final int WORKERS = 8, ATTEMPTS = 3;
  private static final DateTimeFormatter WHEN = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

  /** Reads a record's fields as the client wrote them (opened, when client-side protected). */
  interface Reader {
    /** The row's values by field number; null when no record has the key. */
    Map<Integer, byte[]> read(Table table, long key) throws IOException;
  }

  /** What a key-field must hold: its latest acknowledged write (ties: every tag), or an unacknowledged one at least as recent. */
  private static final class Expectation {
    boolean acked;
    long stamp;
    final List<Long> tags = new ArrayList<>();
    final List<long[]> unacked = new ArrayList<>(); // {stamp, tag}
  }

  private enum Outcome { VERIFIED, LOST, STALE, CORRUPTED, UNREADABLE, UNKNOWN_VALUE }

  private record Verdict(long key, int field, Outcome outcome, long tag, String why) {}

  private final Connection connection;
  private final TableName table;
  private final Reader reader;

  WriteChecker(Connection connection, TableName table, Reader reader) {
    this.connection = connection;
    this.table = table;
    this.reader = reader;
  }

  static String name(long key) {
    return "user" + key;
  }

  /** The summary's "writes" (internal/benchresult.Writes). */
  Map<String, Object> check(Path history) throws IOException, InterruptedException {
    long[] acknowledged = {0};
    Map<Long, TreeMap<Integer, Expectation>> want = new HashMap<>();
    WriteHistory.each(history, e -> {
      Expectation x = want.computeIfAbsent(e.key(), k -> new TreeMap<>()).computeIfAbsent(e.field(), f -> new Expectation());
      if (!e.acked()) {
        x.unacked.add(new long[] {e.stamp(), e.tag()});
        return;
      }
      acknowledged[0]++;
      if (!x.acked || e.stamp() > x.stamp) {
        x.acked = true;
        x.stamp = e.stamp();
        x.tags.clear();
        x.tags.add(e.tag());
      } else if (e.stamp() == x.stamp) {
        x.tags.add(e.tag());
      }
    });
    long checked = 0;
    for (TreeMap<Integer, Expectation> fields : want.values()) {
      fields.values().removeIf(x -> !x.acked); // nothing was promised
      for (Expectation x : fields.values()) {
        x.unacked.removeIf(s -> s[0] < x.stamp);
      }
      checked += fields.size();
    }
    want.values().removeIf(Map::isEmpty);
    List<Long> keys = new ArrayList<>(want.keySet());
    keys.sort(null);
    List<Verdict> verdicts = readAll(keys, want);

    // A sealed value that is not the expected one: an older write of this history (stale), or
    // one from before it (lost).
    Map<Long, Map<Integer, Long>> olders = new HashMap<>(), found = new HashMap<>();
    for (Verdict v : verdicts) {
      if (v.outcome() == Outcome.UNKNOWN_VALUE) {
        olders.computeIfAbsent(v.key(), k -> new HashMap<>()).put(v.field(), v.tag());
      }
    }
    if (!olders.isEmpty()) {
      WriteHistory.each(history, e -> {
        Long tag = olders.getOrDefault(e.key(), Map.of()).get(e.field());
        if (tag != null && tag == e.tag() && e.stamp() < want.get(e.key()).get(e.field()).stamp) {
          found.computeIfAbsent(e.key(), k -> new HashMap<>()).put(e.field(), e.stamp());
        }
      });
    }
    Map<Outcome, Long> counts = new HashMap<>();
    String firstProblem = "";
    for (Verdict v : verdicts) {
      Outcome o = v.outcome();
      String why = v.why();
      if (o == Outcome.UNKNOWN_VALUE) {
        long expected = want.get(v.key()).get(v.field()).stamp;
        Long at = found.getOrDefault(v.key(), Map.of()).get(v.field());
        if (at != null) {
          o = Outcome.STALE;
          why = "holds the value written at " + when(at) + ", older than the write acknowledged at " + when(expected);
        } else {
          o = Outcome.LOST;
          why = "the write acknowledged at " + when(expected) + " is not there, and neither is any later one: it holds a value from before this history";
        }
      }
      counts.merge(o, 1L, Long::sum);
      if (o != Outcome.VERIFIED && firstProblem.isEmpty()) {
        firstProblem = name(v.key()) + " field" + v.field() + ": " + why;
      }
    }
    Map<String, Object> w = new LinkedHashMap<>();
    w.put("acknowledged", acknowledged[0]);
    w.put("checked", checked);
    w.put("verified", counts.getOrDefault(Outcome.VERIFIED, 0L));
    w.put("lost", counts.getOrDefault(Outcome.LOST, 0L));
    w.put("stale", counts.getOrDefault(Outcome.STALE, 0L));
    w.put("corrupted", counts.getOrDefault(Outcome.CORRUPTED, 0L));
    w.put("unreadable", counts.getOrDefault(Outcome.UNREADABLE, 0L));
    w.put("consistency", "STRONG");
    if (!firstProblem.isEmpty()) {
      w.put("firstProblem", firstProblem);
    }
    return w;
  }

  /** Reads every key once, WORKERS at a time, and returns the verdicts in key and field order. */
  private List<Verdict> readAll(List<Long> keys, Map<Long, TreeMap<Integer, Expectation>> want) throws IOException, InterruptedException {
    List<List<Verdict>> perKey = new ArrayList<>(java.util.Collections.nCopies(keys.size(), (List<Verdict>) null));
    ExecutorService pool = Executors.newFixedThreadPool(WORKERS);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int w = 0; w < WORKERS; w++) {
        int first = w;
        workers.add(pool.submit(() -> {
          try (Table t = connection.getTable(table)) {
            for (int i = first; i < keys.size(); i += WORKERS) {
              perKey.set(i, judge(t, keys.get(i), want.get(keys.get(i))));
            }
          }
          return null;
        }));
      }
      for (Future<?> f : workers) {
        f.get(); // also publishes the worker's verdicts to this thread
      }
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IOException("reading back: " + e.getCause(), e.getCause());
    } finally {
      pool.shutdownNow();
    }
    List<Verdict> all = new ArrayList<>();
    perKey.forEach(all::addAll);
    return all;
  }

  private List<Verdict> judge(Table t, long key, TreeMap<Integer, Expectation> fields) throws InterruptedException {
    Map<Integer, byte[]> row = null;
    IOException failure = null;
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (attempt > 0) {
        Thread.sleep(attempt * 500L); // a server that restarted a moment ago is not a lost write
      }
      try {
        row = reader.read(t, key);
        failure = null;
        break;
      } catch (IOException e) {
        failure = e;
      }
    }
    List<Verdict> out = new ArrayList<>();
    for (Map.Entry<Integer, Expectation> f : fields.entrySet()) {
      Expectation x = f.getValue();
      int field = f.getKey();
      byte[] v = row == null ? null : row.get(field);
      if (failure != null) {
        out.add(new Verdict(key, field, Outcome.UNREADABLE, 0, "unreadable: " + failure));
      } else if (row == null) {
        out.add(new Verdict(key, field, Outcome.LOST, 0, "the write acknowledged at " + when(x.stamp) + " is not there: no record has the key"));
      } else if (v == null) {
        out.add(new Verdict(key, field, Outcome.LOST, 0, "the write acknowledged at " + when(x.stamp) + " is not there: the field is empty"));
      } else {
        Long tag = WriteHistory.unseal(name(key), field, v);
        if (tag == null) {
          out.add(new Verdict(key, field, Outcome.CORRUPTED, 0, "the value's seal does not match its key, field and content"));
        } else if (x.tags.contains(tag) || x.unacked.stream().anyMatch(s -> s[1] == tag)) {
          out.add(new Verdict(key, field, Outcome.VERIFIED, tag, ""));
        } else {
          out.add(new Verdict(key, field, Outcome.UNKNOWN_VALUE, tag, ""));
        }
      }
    }
    return out;
  }

  private static String when(long micros) {
    return WHEN.format(Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000));
  }

  /** Reads a row of the benchmark table: fieldN qualifiers by N. */
  static Map<Integer, byte[]> fields(Result r, byte[] family) {
    if (r.isEmpty()) {
      return null;
    }
    Map<Integer, byte[]> out = new HashMap<>();
    for (Map.Entry<byte[], byte[]> e : r.getFamilyMap(family).entrySet()) {
      String q = Bytes.toString(e.getKey());
      if (q.startsWith("field")) {
        try {
          out.put(Integer.parseInt(q.substring(5)), e.getValue());
        } catch (NumberFormatException ignored) {
          // not a YCSB field
        }
      }
    }
    return out;
  }

  static Get get(long key, byte[] family) {
    return new Get(Bytes.toBytes(name(key))).addFamily(family);
  }
}
