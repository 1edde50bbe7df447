package dev.secured.ycsb;

import java.util.Properties;

import site.ycsb.DB;
import site.ycsb.WorkloadException;
import site.ycsb.workloads.CoreWorkload;

/**
 * YCSB's core workload with a warm-up before its measured window (see Window): every thread
 * asks the window which phase an operation starting now belongs to, runs it as CoreWorkload
 * would, and reports how it went; once the window is over, the thread stops, so a warm-up that
 * ends early does not leave the run idling until YCSB's maxexecutiontime.
 */
public class GatedWorkload extends CoreWorkload {
  static volatile Window window;

  @Override
  public void init(Properties p) throws WorkloadException {
    super.init(p);
    try {
      window = Window.of(p);
    } catch (IllegalArgumentException e) {
      throw new WorkloadException(e.getMessage(), e);
    }
  }

  @Override
  public boolean doTransaction(DB db, Object threadState) {
    Window w = window;
    Window.Phase phase = w.phaseAt(System.nanoTime());
    if (phase == Window.Phase.OVER) {
      return false;
    }
    String op = operationchooser.nextString();
    if (op == null) {
      return false;
    }
    HBaseClient.failed.set(Boolean.FALSE);
    HBaseClient.warmingUp.set(phase == Window.Phase.WARMUP);
    long start = System.nanoTime();
    switch (op) {
    case "READ":
      doTransactionRead(db);
      break;
    case "UPDATE":
      doTransactionUpdate(db);
      break;
    case "INSERT":
      doTransactionInsert(db);
      break;
    case "SCAN":
      doTransactionScan(db);
      break;
    default:
      doTransactionReadModifyWrite(db);
      op = "READ-MODIFY-WRITE";
    }
    boolean ok = !HBaseClient.failed.get();
    if (w.done(phase, op, start, System.nanoTime(), ok) && ok) {
      HBaseClient.series.add(System.currentTimeMillis());
    }
    return true;
  }
}
