package dev.secured.ycsb;

import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import org.HdrHistogram.ConcurrentHistogram;

/**
 * The measured window of a run and the warm-up before it, as internal/k6ycsb's gate keeps them
 * for the k6 driver: operations that start in the warm-up are run and discarded; the window
 * opens when a fixed warm-up has passed (warmup.seconds) or, between warmup.min and warmup.max
 * seconds, as soon as the throughput is steady (the gate's rule: over the last 10 whole seconds
 * a coefficient of variation of at most 0.10 and a second half within 5% of the first); it
 * closes after window.seconds or once window.operations measured operations have started. YCSB
 * measures from its own start and cannot leave a warm-up out, so the window keeps its own
 * latencies, counts and CPU time, and the summary is made of them.
 */
final class Window {
  enum Phase { WARMUP, RUN, OVER }

  static final int STEADY_WINDOW = 10;
  static final double STEADY_MAX_CV = 0.10, STEADY_MAX_TREND = 0.05;

  private final long minNanos, maxNanos, durationNanos, operations;
  private final boolean untilSteady;
  /** Operations completed in each second of the warm-up, for the steadiness check. */
  private final AtomicLongArray warm;
  private final AtomicLong started = new AtomicLong();
  private final Map<String, Stats> stats = new ConcurrentHashMap<>();

  private final Object lock = new Object();
  private volatile long first; // the first operation's start, System.nanoTime()
  private int checked; // whole seconds of warm-up last judged
  // The window's start (0 while warming up): read without the lock by every operation once the
  // window is open, so that measuring takes no lock and no clock but System.nanoTime().
  private volatile long measured;
  private boolean steady;
  private long startMillis, startCPUNanos; // the window's start, on the wall clock and in CPU time
  private volatile long deadline = Long.MAX_VALUE; // System.nanoTime() at which the window closes

  /** The last counted operation's end, System.nanoTime(). */
  private final AtomicLong endNanos = new AtomicLong();
  /** The process's CPU time when the first thread found the window over; -1 until then. */
  private final AtomicLong endCPUNanos = new AtomicLong(-1);

  /** Latencies, successes and failures of one kind of operation inside the window. */
  static final class Stats {
    final ConcurrentHistogram micros = new ConcurrentHistogram(3);
    final AtomicLong errors = new AtomicLong();
  }

  private Window(long minNanos, long maxNanos, boolean untilSteady, long durationNanos, long operations) {
    this.minNanos = minNanos;
    this.maxNanos = maxNanos;
    this.untilSteady = untilSteady;
    this.durationNanos = durationNanos;
    this.operations = operations;
    this.warm = new AtomicLongArray((int) Math.min(maxNanos / 1_000_000_000L + 1, 86_400));
  }

  /**
   * The window the properties describe: warmup.seconds, or warmup.min and warmup.max (seconds)
   * for a warm-up until steady; window.seconds or window.operations (at least one).
   */
  static Window of(Properties p) {
    long seconds = Long.parseLong(p.getProperty("window.seconds", "0"));
    long ops = Long.parseLong(p.getProperty("window.operations", "0"));
    if (seconds <= 0 && ops <= 0) {
      throw new IllegalArgumentException("window.seconds or window.operations must be positive");
    }
    long duration = seconds > 0 ? seconds * 1_000_000_000L : Long.MAX_VALUE;
    String max = p.getProperty("warmup.max");
    if (max != null) {
      long lo = Long.parseLong(p.getProperty("warmup.min", "0")), hi = Long.parseLong(max);
      if (lo < 0 || hi < lo) {
        throw new IllegalArgumentException("warmup.min " + lo + " must be between 0 and warmup.max " + hi);
      }
      return new Window(lo * 1_000_000_000L, hi * 1_000_000_000L, true, duration, ops);
    }
    long fixed = Long.parseLong(p.getProperty("warmup.seconds", "0"));
    if (fixed < 0) {
      throw new IllegalArgumentException("warmup.seconds must not be negative");
    }
    return new Window(fixed * 1_000_000_000L, fixed * 1_000_000_000L, false, duration, ops);
  }

  /** The phase of an operation starting at now (System.nanoTime()). */
  Phase phaseAt(long now) {
    if (measured == 0) {
      synchronized (lock) {
        if (first == 0) {
          first = now;
        }
        long elapsed = now - first;
        int secs = (int) (elapsed / 1_000_000_000L);
        if (elapsed >= maxNanos) {
          open(now, false);
        } else if (untilSteady && elapsed >= minNanos && secs > checked) {
          checked = secs;
          if (steady(secs)) {
            open(now, true);
          }
        }
        if (measured == 0) {
          return Phase.WARMUP;
        }
      }
    }
    if (now >= deadline || operations > 0 && started.incrementAndGet() > operations) {
      // Once: the client's CPU time is taken when the window is over, not after every
      // operation (a window of operations may still finish a few in flight, one per thread).
      endCPUNanos.compareAndSet(-1, cpuNanos());
      return Phase.OVER;
    }
    return Phase.RUN;
  }

  private void open(long now, boolean isSteady) {
    steady = isSteady;
    startMillis = System.currentTimeMillis();
    startCPUNanos = cpuNanos();
    deadline = durationNanos == Long.MAX_VALUE ? Long.MAX_VALUE : now + durationNanos;
    measured = now; // last: a thread that reads it without the lock sees the deadline too
  }

  /**
   * Records an operation that started in phase at start and ended at end, and says whether it
   * counts in the window: one that ended after the window closed does not, as k6 does not count
   * an operation its scenario's end interrupts.
   */
  boolean done(Phase phase, String operation, long start, long end, boolean ok) {
    if (phase == Phase.WARMUP) {
      if (ok) {
        int second = (int) ((end - first) / 1_000_000_000L);
        if (second >= 0 && second < warm.length()) {
          warm.incrementAndGet(second);
        }
      }
      return false;
    }
    if (phase != Phase.RUN || end > deadline) {
      return false;
    }
    Stats s = stats.computeIfAbsent(operation, k -> new Stats());
    if (ok) {
      s.micros.recordValue(Math.max((end - start) / 1_000, 0));
    } else {
      s.errors.incrementAndGet();
    }
    endNanos.accumulateAndGet(end, Math::max);
    return true;
  }

  private boolean steady(int seconds) {
    if (seconds < STEADY_WINDOW) {
      return false;
    }
    long[] w = new long[STEADY_WINDOW];
    for (int i = 0; i < STEADY_WINDOW; i++) {
      w[i] = warm.get(seconds - STEADY_WINDOW + i);
    }
    return steady(w);
  }

  /** The gate's rule (internal/k6ycsb/steady.go) on the last STEADY_WINDOW per-second counts. */
  static boolean steady(long[] w) {
    double sum = 0;
    for (long x : w) {
      sum += x;
    }
    double mean = sum / w.length;
    if (mean == 0) {
      return false;
    }
    double ss = 0;
    for (long x : w) {
      ss += (x - mean) * (x - mean);
    }
    if (Math.sqrt(ss / (w.length - 1)) / mean > STEADY_MAX_CV) {
      return false;
    }
    int half = w.length / 2;
    double a = 0, b = 0;
    for (int i = 0; i < half; i++) {
      a += w[i];
      b += w[half + i];
    }
    return Math.abs(b - a) <= STEADY_MAX_TREND * a;
  }

  private static long cpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  /** Whether the window opened: false when no operation outlasted the warm-up. */
  boolean opened() {
    synchronized (lock) {
      return measured != 0;
    }
  }

  /** The window's start and end on the wall clock (ms), its end the last counted operation's. */
  long startMillis() {
    synchronized (lock) {
      return startMillis;
    }
  }

  long endMillis() {
    synchronized (lock) {
      return startMillis + Math.max(endNanos.get() - measured, 0) / 1_000_000;
    }
  }

  /** The client's CPU time inside the window, in seconds; up to now if no thread saw it end. */
  double cpuSeconds() {
    synchronized (lock) {
      long end = endCPUNanos.get();
      return Math.max((end < 0 ? cpuNanos() : end) - startCPUNanos, 0) / 1e9;
    }
  }

  /** How long the warm-up took and whether it ended steady, for a warm-up until steady. */
  Map<String, Object> warmUp() {
    synchronized (lock) {
      if (!untilSteady || measured == 0) {
        return null;
      }
      Map<String, Object> w = new LinkedHashMap<>();
      w.put("seconds", Math.round((measured - first) / 1e8) / 10.0);
      w.put("steady", steady);
      return w;
    }
  }

  /** The window's operations by kind, in the order they were first seen. */
  Map<String, Stats> stats() {
    return stats;
  }
}
