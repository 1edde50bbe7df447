package dev.secured.ycsb;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Operations completed per second of the run, as internal/benchresult's Series counts them for
 * the k6 driver, so a run's summary shows whether its window was steady and CPU accounting can
 * divide a container's CPU between two instants by the operations between them. Counts go into
 * 100 ms slots from the JVM's start; the exporter sums ten per second from the run's start.
 * Thread-safe and allocation-free on the hot path.
 */
final class Series {
  private static final int SLOT_MILLIS = 100, SLOTS = 36_000; // an hour; later operations count in the last slot
  /** The summary keeps at most this many points, as benchresult.MaxSeriesPoints. */
  static final int MAX_POINTS = 120;

  private final long origin = System.currentTimeMillis();
  private final AtomicLongArray slots = new AtomicLongArray(SLOTS);

  void add(long nowMillis) {
    slots.incrementAndGet((int) Math.min(Math.max((nowMillis - origin) / SLOT_MILLIS, 0), SLOTS - 1));
  }

  /**
   * The counts of the whole seconds from start to end, in steps of as many seconds as keep them
   * within MAX_POINTS; the last, partial second is left out. Element 0 of the result is the step.
   */
  List<Long> points(long startMillis, long endMillis) {
    int seconds = (int) Math.min((endMillis - startMillis) / 1000, SLOTS / 10);
    List<Long> out = new ArrayList<>();
    if (seconds <= 0) {
      return out;
    }
    int step = (seconds + MAX_POINTS - 1) / MAX_POINTS;
    out.add((long) step);
    long first = (startMillis - origin) / SLOT_MILLIS;
    for (int i = 0; i + step <= seconds; i += step) {
      long sum = 0;
      for (long s = first + i * 10L; s < first + (i + step) * 10L; s++) {
        if (s >= 0 && s < SLOTS) {
          sum += slots.get((int) s);
        }
      }
      out.add(sum);
    }
    return out;
  }
}
