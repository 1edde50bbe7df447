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

  /** YCSB's names of the operations and the summary's. */
  private static final String[][] OPERATIONS = {
      {"READ", "read"}, {"UPDATE", "update"}, {"INSERT", "insert"}, {"SCAN", "scan"}, {"READ-MODIFY-WRITE", "readmodifywrite"}};

  private static Map<String, Object> latency(String op, long count, long failed, long p50, long p95, long p99, long max) {
    Map<String, Object> l = new LinkedHashMap<>();
    l.put("operation", op);
    l.put("count", count);
    if (failed > 0) {
      l.put("errors", failed);
    }
    l.put("p50", p50);
    l.put("p95", p95);
    l.put("p99", p99);
    l.put("max", max);
    return l;
  }

  @Override
  public void close() throws IOException {
    Instant end = Instant.now();
    long ops = 0, errors = 0;
    List<Map<String, Object>> latencies = new ArrayList<>();
    Window window = GatedWorkload.window;
    long startMillis = end.toEpochMilli() - get("OVERALL", "RunTime(ms)"), endMillis = end.toEpochMilli();
    double cpu = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime() / 1e9;
    if (window != null) {
      // The measured window only: YCSB's own figures include the warm-up.
      if (window.opened()) {
        startMillis = window.startMillis();
        endMillis = window.endMillis();
      } else {
        firstError("no operation started after the warm-up: the run ended before its measured window");
        startMillis = endMillis;
      }
      cpu = window.cpuSeconds();
      for (String[] op : OPERATIONS) {
        Window.Stats st = window.stats().get(op[0]);
        if (st == null) {
          continue;
        }
        long count = st.micros.getTotalCount(), failed = st.errors.get();
        latencies.add(latency(op[1], count, failed, st.micros.getValueAtPercentile(50), st.micros.getValueAtPercentile(95),
            st.micros.getValueAtPercentile(99), st.micros.getMaxValue()));
        ops += count;
        errors += failed;
      }
    } else {
      // YCSB also measures a read-modify-write's read and update as a READ and an UPDATE; the
      // summary counts each operation once, as the k6 driver does (their latencies stay mixed
      // in).
      long rmw = get("READ-MODIFY-WRITE", "Operations");
      for (String[] op : OPERATIONS) {
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
        // YCSB measures a failed operation under "<OP>-FAILED": "Operations" counts successes,
        // and the failures appear only among the op's return codes.
        if (count == 0 && failed == 0) {
          continue; // only read-modify-writes' reads or updates
        }
        latencies.add(latency(op[1], count, failed, get(op[0], "50thPercentileLatency(us)"), get(op[0], "95thPercentileLatency(us)"),
            get(op[0], "99thPercentileLatency(us)"), get(op[0], "MaxLatency(us)")));
        ops += count;
        errors += failed;
      }
    }
    Map<String, Object> s = new LinkedHashMap<>();
    s.put("version", "benchresult.secured.dev/v1");
    s.put("driver", "ycsb-hbase");
    s.put("phase", System.getenv().getOrDefault("YCSB_PHASE", "run"));
    s.put("start", Instant.ofEpochMilli(startMillis).toString());
    s.put("end", Instant.ofEpochMilli(endMillis).toString());
    s.put("protocol", HBaseClient.security);
    if (HBaseClient.clientSide != null) {
      s.put("clientSide", HBaseClient.clientSide);
    }
    s.put("operations", ops);
    s.put("errors", errors);
    s.put("droppedIterations", 0);
    s.put("clientCPUSeconds", cpu);
    if (!firstError.isEmpty()) {
      s.put("firstError", firstError);
    }
    s.put("latencies", latencies);
    List<Long> points = HBaseClient.series.points(startMillis, endMillis);
    if (points.size() > 1 && (window != null || HBaseClient.callsAreOperations)) {
      s.put("series", points.subList(1, points.size()));
      s.put("seriesStepSeconds", points.get(0));
    }
    if (window != null && window.warmUp() != null) {
      s.put("warmUp", window.warmUp());
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
