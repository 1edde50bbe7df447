package dev.secured.ycsb;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.xerial.snappy.Snappy;

/**
 * Publishes the driver's operations to Prometheus by remote write, under the k6 driver's
 * names, so dashboards and queries serve both drivers: k6_ycsb_operation_duration_seconds (a
 * native histogram, schema 3 like k6's), k6_ycsb_operations_total and k6_ycsb_errors_total,
 * labelled op, profile, protocol and suite plus the tags given. The protobuf of the remote-write
 * protocol (prometheus/prompb) is small enough to write by hand.
 */
final class RemoteWriter {
  private static final int SCHEMA = 3; // buckets grow by 2^(1/8), about 9%

  private final String url;
  private final Map<String, String> tags;
  private final Map<String, Series> series = new ConcurrentHashMap<>();
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "remote-write");
    t.setDaemon(true);
    return t;
  });

  /** Prefixes the key of a warm-up operation's series (no operation name starts with it). */
  private static final String WARMUP = "warmup:";

  /** One operation type's cumulative histogram and counters. */
  private static final class Series {
    final Map<Integer, AtomicLong> buckets = new ConcurrentHashMap<>();
    final AtomicLong count = new AtomicLong(), errors = new AtomicLong(), sumNanos = new AtomicLong();
  }

  RemoteWriter(String url, Map<String, String> tags, long intervalSeconds) {
    this.url = url;
    this.tags = new TreeMap<>(tags);
    timer.scheduleAtFixedRate(this::pushQuietly, intervalSeconds, intervalSeconds, TimeUnit.SECONDS);
  }

  /**
   * Records an operation; one of a warm-up is published under scenario "warmup", as the k6
   * driver's warm-up scenario is, so that dashboards and queries of the run leave it out.
   */
  void record(String op, boolean warmUp, long nanos, boolean ok) {
    Series s = series.computeIfAbsent(warmUp ? WARMUP + op : op, k -> new Series());
    if (!ok) {
      s.errors.incrementAndGet();
      return;
    }
    double seconds = nanos / 1e9;
    int index = (int) Math.ceil(Math.log(seconds) / Math.log(2) * (1 << SCHEMA));
    s.buckets.computeIfAbsent(index, k -> new AtomicLong()).incrementAndGet();
    s.count.incrementAndGet();
    s.sumNanos.addAndGet(nanos);
  }

  private void pushQuietly() {
    try {
      push();
    } catch (IOException | InterruptedException e) {
      System.err.println("remote write to " + url + ": " + e);
    }
  }

  /** Sends the current state; the last call (at the end of the run) must succeed. */
  synchronized void push() throws IOException, InterruptedException {
    long now = System.currentTimeMillis();
    ByteArrayOutputStream req = new ByteArrayOutputStream();
    for (Map.Entry<String, Series> e : series.entrySet()) {
      Series s = e.getValue();
      Map<String, String> labels = new TreeMap<>(tags);
      String op = e.getKey();
      if (op.startsWith(WARMUP)) {
        op = op.substring(WARMUP.length());
        labels.put("scenario", "warmup");
      }
      labels.put("op", op);
      bytes(req, 1, timeSeries("k6_ycsb_operation_duration_seconds", labels, null, histogram(s, now)));
      bytes(req, 1, timeSeries("k6_ycsb_operations_total", labels, sample(s.count.get(), now), null));
      bytes(req, 1, timeSeries("k6_ycsb_errors_total", labels, sample(s.errors.get(), now), null));
    }
    HttpRequest r = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/x-protobuf").header("Content-Encoding", "snappy")
        .header("X-Prometheus-Remote-Write-Version", "0.1.0")
        .POST(HttpRequest.BodyPublishers.ofByteArray(Snappy.compress(req.toByteArray()))).build();
    HttpResponse<String> resp = http.send(r, HttpResponse.BodyHandlers.ofString());
    if (resp.statusCode() / 100 != 2) {
      throw new IOException("HTTP " + resp.statusCode() + ": " + resp.body());
    }
  }

  void close() throws IOException, InterruptedException {
    timer.shutdownNow();
    push();
  }

  private static byte[] timeSeries(String name, Map<String, String> series, byte[] sample, byte[] histogram) throws IOException {
    Map<String, String> labels = new TreeMap<>(series);
    labels.put("__name__", name);
    ByteArrayOutputStream ts = new ByteArrayOutputStream();
    for (Map.Entry<String, String> l : labels.entrySet()) {
      ByteArrayOutputStream label = new ByteArrayOutputStream();
      bytes(label, 1, l.getKey().getBytes(StandardCharsets.UTF_8));
      bytes(label, 2, l.getValue().getBytes(StandardCharsets.UTF_8));
      bytes(ts, 1, label.toByteArray());
    }
    if (sample != null) {
      bytes(ts, 2, sample);
    }
    if (histogram != null) {
      bytes(ts, 4, histogram);
    }
    return ts.toByteArray();
  }

  private static byte[] sample(double value, long millis) {
    ByteArrayOutputStream s = new ByteArrayOutputStream();
    fixed64(s, 1, Double.doubleToLongBits(value));
    tag(s, 2, 0);
    varint(s, millis);
    return s.toByteArray();
  }

  /** A cumulative native histogram: positive spans of consecutive buckets and count deltas. */
  private static byte[] histogram(Series s, long millis) {
    TreeMap<Integer, Long> counts = new TreeMap<>();
    s.buckets.forEach((i, c) -> counts.put(i, c.get()));
    long total = 0;
    for (long c : counts.values()) {
      total += c;
    }
    ByteArrayOutputStream h = new ByteArrayOutputStream();
    tag(h, 1, 0);
    varint(h, total); // count_int
    fixed64(h, 3, Double.doubleToLongBits(s.sumNanos.get() / 1e9));
    tag(h, 4, 0);
    varint(h, zigzag(SCHEMA));
    fixed64(h, 5, Double.doubleToLongBits(0));
    tag(h, 6, 0);
    varint(h, 0); // zero_count_int
    List<int[]> spans = new ArrayList<>();
    ByteArrayOutputStream deltas = new ByteArrayOutputStream();
    Integer prev = null;
    long prevCount = 0;
    for (Map.Entry<Integer, Long> b : counts.entrySet()) {
      if (prev == null || b.getKey() != prev + 1) {
        spans.add(new int[] {prev == null ? b.getKey() : b.getKey() - prev - 1, 0});
      }
      spans.get(spans.size() - 1)[1]++;
      varint(deltas, zigzag(b.getValue() - prevCount));
      prevCount = b.getValue();
      prev = b.getKey();
    }
    for (int[] span : spans) {
      ByteArrayOutputStream sp = new ByteArrayOutputStream();
      tag(sp, 1, 0);
      varint(sp, zigzag(span[0]));
      tag(sp, 2, 0);
      varint(sp, span[1]);
      bytes(h, 11, sp.toByteArray());
    }
    if (deltas.size() > 0) {
      bytes(h, 12, deltas.toByteArray()); // packed sint64
    }
    tag(h, 15, 0);
    varint(h, millis);
    return h.toByteArray();
  }

  private static long zigzag(long v) {
    return (v << 1) ^ (v >> 63);
  }

  private static void tag(ByteArrayOutputStream out, int field, int wireType) {
    varint(out, ((long) field << 3) | wireType);
  }

  private static void varint(ByteArrayOutputStream out, long v) {
    while ((v & ~0x7FL) != 0) {
      out.write((int) ((v & 0x7F) | 0x80));
      v >>>= 7;
    }
    out.write((int) v);
  }

  private static void fixed64(ByteArrayOutputStream out, int field, long bits) {
    tag(out, field, 1);
    for (int i = 0; i < 8; i++) {
      out.write((int) (bits >>> (8 * i)));
    }
  }

  private static void bytes(ByteArrayOutputStream out, int field, byte[] b) {
    tag(out, field, 2);
    varint(out, b.length);
    out.write(b, 0, b.length);
  }
}
