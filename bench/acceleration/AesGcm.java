// Measures the JDK's AES-GCM throughput, the cipher of the TLS suites the JDK engine runs, so
// that the JVM flags which switch hardware AES off can be checked to really change speed.
// Run with `java AesGcm.java [seconds]`; prints MB/s for 16 KiB records (TLS's maximum).
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

public class AesGcm {
    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        byte[] key = new byte[16], iv = new byte[12], record = new byte[16384], out = new byte[16384 + 16];
        Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
        SecretKeySpec k = new SecretKeySpec(key, "AES");
        // Warm up so the JIT compiles (and, when allowed, uses the intrinsics).
        long counter = 0;
        for (int i = 0; i < 20000; i++) {
            iv[0] = (byte) counter; iv[1] = (byte) (counter >> 8); iv[2] = (byte) (counter++ >> 16);
            c.init(Cipher.ENCRYPT_MODE, k, new GCMParameterSpec(128, iv));
            c.doFinal(record, 0, record.length, out, 0);
        }
        long bytes = 0, start = System.nanoTime(), end = start + (long) (seconds * 1e9);
        while (System.nanoTime() < end) {
            iv[0] = (byte) counter; iv[1] = (byte) (counter >> 8); iv[2] = (byte) (counter >> 16); iv[3] = (byte) (counter++ >> 24);
            c.init(Cipher.ENCRYPT_MODE, k, new GCMParameterSpec(128, iv));
            bytes += c.doFinal(record, 0, record.length, out, 0) - 16;
        }
        System.out.printf("%.0f%n", bytes / ((System.nanoTime() - start) / 1e9) / 1e6);
    }
}
