package dev.secured.ycsb;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.codehaus.jackson.map.ObjectMapper;

import site.ycsb.measurements.exporter.MeasurementsExporter;

/**
 * A YCSB measurements exporter writing the summary the operator reads from a benchmark pod's
 * termination message (internal/benchresult, version benchresult.secured.dev/v1), so that the
 * JVM driver and the k6 driver report alike. Run YCSB with
 * -p measurementexporter=dev.secured.ycsb.SummaryExporter -p exportfile=FILE
 * -p hdrhistogram.percentiles=50,95,99 (YCSB_PHASE names the phase: load or run).
 */
public class SummaryExporter implements MeasurementsExporter {
  private static volatile String firstError = "";

  private final OutputStream out;
  private final Map<String, Map<String, Number>> metrics = new LinkedHashMap<>();

  public SummaryExporter(OutputStream out) {
    this.out = out;
  }

  static void firstError(String message) {
    synchronized (SummaryExporter.class) {
      if (firstError.isEmpty()) {
        firstError = message.length() > 500 ? message.substring(0, 500) : message;
      }
    }
  }

  @Override
  public void write(String metric, String measurement, int value) {
    put(metric, measurement, value);
  }

  @Override
  public void write(String metric, String measurement, long value) {
    put(metric, measurement, value);
  }

  @Override
  public void write(String metric, String measurement, double value) {
    put(metric, measurement, value);
  }

  private void put(String metric, String measurement, Number value) {
    metrics.computeIfAbsent(metric, m -> new LinkedHashMap<>()).put(measurement, value);
  }

  private long get(String metric, String measurement) {
    Number n = metrics.getOrDefault(metric, Map.of()).get(measurement);
    return n == null ? 0 : n.longValue();
  }

  @Override
  public void close() throws IOException {
    Instant end = Instant.now();
    // YCSB also measures a read-modify-write's read and update as a READ and an UPDATE; the
    // summary counts each operation once, as the k6 driver does (their latencies stay mixed in).
    long rmw = get("READ-MODIFY-WRITE", "Operations");
    long ops = 0, errors = 0;
    List<Map<String, Object>> latencies = new ArrayList<>();
    for (String[] op : new String[][] {{"READ", "read"}, {"UPDATE", "update"}, {"INSERT", "insert"}, {"SCAN", "scan"}, {"READ-MODIFY-WRITE", "readmodifywrite"}}) {
      if (!metrics.containsKey(op[0]) && !metrics.containsKey(op[0] + "-FAILED")) {
        continue;
      }
      long count = get(op[0], "Operations"), failed = 0;
      if (op[0].equals("READ") || op[0].equals("UPDATE")) {
        count -= rmw;
      }
      for (Map.Entry<String, Number> m : metrics.getOrDefault(op[0], Map.of()).entrySet()) {
        if (m.getKey().startsWith("Return=") && !m.getKey().equals("Return=OK")) {
          failed += m.getValue().longValue();
        }
      }
      Map<String, Object> l = new LinkedHashMap<>();
      l.put("operation", op[1]);
      // YCSB measures a failed operation under "<OP>-FAILED": "Operations" counts successes,
      // and the failures appear only among the op's return codes.
      l.put("count", count);
      if (count == 0 && failed == 0) {
        continue; // only read-modify-writes' reads or updates
      }
      if (failed > 0) {
        l.put("errors", failed);
      }
      l.put("p50", get(op[0], "50thPercentileLatency(us)"));
      l.put("p95", get(op[0], "95thPercentileLatency(us)"));
      l.put("p99", get(op[0], "99thPercentileLatency(us)"));
      l.put("max", get(op[0], "MaxLatency(us)"));
      latencies.add(l);
      ops += count;
      errors += failed;
    }
    Map<String, Object> s = new LinkedHashMap<>();
    s.put("version", "benchresult.secured.dev/v1");
    s.put("driver", "ycsb-hbase");
    s.put("phase", System.getenv().getOrDefault("YCSB_PHASE", "run"));
    s.put("start", end.minusMillis(get("OVERALL", "RunTime(ms)")).toString());
    s.put("end", end.toString());
    s.put("protocol", HBaseClient.security);
    if (HBaseClient.clientSide != null) {
      s.put("clientSide", HBaseClient.clientSide);
    }
    s.put("operations", ops);
    s.put("errors", errors);
    s.put("droppedIterations", 0);
    s.put("clientCPUSeconds", ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime() / 1e9);
    if (!firstError.isEmpty()) {
      s.put("firstError", firstError);
    }
    s.put("latencies", latencies);
    Series per = HBaseClient.series;
    if (per != null) {
      List<Long> points = per.points(end.toEpochMilli() - get("OVERALL", "RunTime(ms)"), end.toEpochMilli());
      if (points.size() > 1) {
        s.put("series", points.subList(1, points.size()));
        s.put("seriesStepSeconds", points.get(0));
      }
    }
    // After the run's end is taken: reading back does not count in the run's time.
    try {
      Map<String, Object> writes = HBaseClient.verifyWrites();
      if (writes != null) {
        s.put("writes", writes);
      }
    } catch (IOException | RuntimeException e) {
      firstError("verifying writes: " + e);
      s.put("firstError", firstError);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("verifying writes was interrupted", e);
    }
    out.write(new ObjectMapper().writeValueAsString(s).getBytes(StandardCharsets.UTF_8));
    out.close();
  }
}
