// Prints what YCSB 0.17.0's own generators produce, for internal/ycsb's tests to compare with:
//   hash N...            one Utils.fnvhash64 value per argument
//   counts GEN DRAWS     how often each value 0..999 came out of GEN in DRAWS draws
//   keys ORDER PAD N...  CoreWorkload's key name for each key number, with insertorder ORDER
//                        (hashed or ordered) and zeropadding PAD
//   values LEN COUNT     for each position of COUNT RandomByteIterator values of LEN bytes,
//                        the distinct bytes seen there, as a sorted hex string
// GEN is uniform, zipfian, scrambled, hotspot or latest, each over 1000 items as CoreWorkload
// builds them for recordcount=1000.
import site.ycsb.RandomByteIterator;
import site.ycsb.Utils;
import site.ycsb.generator.*;

public class YcsbReference {
    public static void main(String[] args) {
        if (args[0].equals("hash")) {
            for (int i = 1; i < args.length; i++) {
                System.out.println(Utils.fnvhash64(Long.parseLong(args[i])));
            }
            return;
        }
        if (args[0].equals("keys")) {
            java.util.Properties p = new java.util.Properties();
            p.setProperty("insertorder", args[1]);
            p.setProperty("zeropadding", args[2]);
            p.setProperty("operationcount", "1000");
            site.ycsb.measurements.Measurements.setProperties(p);
            site.ycsb.workloads.CoreWorkload w = new site.ycsb.workloads.CoreWorkload();
            try {
                w.init(p);
                java.lang.reflect.Method m = site.ycsb.workloads.CoreWorkload.class.getDeclaredMethod("buildKeyName", long.class);
                m.setAccessible(true);
                for (int i = 3; i < args.length; i++) {
                    System.out.println(m.invoke(w, Long.parseLong(args[i])));
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
            return;
        }
        if (args[0].equals("values")) {
            int len = Integer.parseInt(args[1]);
            java.util.BitSet[] seen = new java.util.BitSet[len];
            for (int i = 0; i < len; i++) {
                seen[i] = new java.util.BitSet(256);
            }
            for (int n = Integer.parseInt(args[2]); n > 0; n--) {
                byte[] v = new RandomByteIterator(len).toArray();
                for (int i = 0; i < len; i++) {
                    seen[i].set(v[i] & 0xff);
                }
            }
            for (java.util.BitSet s : seen) {
                StringBuilder out = new StringBuilder();
                for (int b = s.nextSetBit(0); b >= 0; b = s.nextSetBit(b + 1)) {
                    out.append(String.format("%02x", b));
                }
                System.out.println(out);
            }
            return;
        }
        NumberGenerator gen;
        switch (args[1]) {
            case "uniform": gen = new UniformLongGenerator(0, 999); break;
            case "zipfian": gen = new ZipfianGenerator(0, 999); break;
            case "scrambled": gen = new ScrambledZipfianGenerator(0, 999); break;
            case "hotspot": gen = new HotspotIntegerGenerator(0, 999, 0.2, 0.8); break;
            case "latest": gen = new SkewedLatestGenerator(new AcknowledgedCounterGenerator(1000)); break;
            default: throw new IllegalArgumentException(args[1]);
        }
        long[] counts = new long[1000];
        int draws = Integer.parseInt(args[2]);
        for (int i = 0; i < draws; i++) {
            counts[gen.nextValue().intValue()]++;
        }
        StringBuilder out = new StringBuilder();
        for (long c : counts) {
            out.append(c).append('\n');
        }
        System.out.print(out);
    }
}
