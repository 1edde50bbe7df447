// Checks the YCSB HBase driver's FieldCrypt against pkg/fieldcrypt's test vectors, which the Go
// test hands over as tab-separated lines (hex and base64 fields):
//   name cipher signature keyId keyHex nonceHex signingKeyPEMb64 verifyingKeyPEMb64 valueHex contextHex envelopeHex deterministic
//   java -cp <driver jar> FieldCryptVectors.java VECTORS.tsv
// Prints "vectors ok N" when every envelope opens to its value, every deterministic one is
// sealed to the same bytes, and a flipped byte or another context never opens.
import dev.secured.ycsb.FieldCrypt;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.TreeMap;

public class FieldCryptVectors {
    public static void main(String[] args) throws Exception {
        HexFormat hex = HexFormat.of();
        int n = 0;
        for (String line : Files.readAllLines(Path.of(args[0]))) {
            String[] f = line.split("\t", -1);
            int c = Arrays.asList(FieldCrypt.CIPHERS).indexOf(f[1]), s = Arrays.asList(FieldCrypt.SIGNATURES).indexOf(f[2]);
            TreeMap<Integer, byte[]> keys = new TreeMap<>();
            if (c != 0) {
                keys.put(Integer.parseInt(f[3]), hex.parseHex(f[4]));
            }
            PrivateKey signer = null;
            PublicKey verifier = null;
            if (s != 0) {
                KeyFactory kf = KeyFactory.getInstance(FieldCrypt.algorithm(s));
                signer = kf.generatePrivate(new PKCS8EncodedKeySpec(FieldCrypt.pem(Base64.getDecoder().decode(f[6]), "PRIVATE KEY")));
                verifier = kf.generatePublic(new X509EncodedKeySpec(FieldCrypt.pem(Base64.getDecoder().decode(f[7]), "PUBLIC KEY")));
            }
            FieldCrypt k = new FieldCrypt(c, keys, s, signer, verifier);
            byte[] value = hex.parseHex(f[8]), context = hex.parseHex(f[9]), env = hex.parseHex(f[10]);
            if (!Arrays.equals(k.open(env, context), value)) {
                throw new IllegalStateException(f[0] + ": opened to another value");
            }
            byte[] sealed = k.seal(value, context, hex.parseHex(f[5]));
            if (Boolean.parseBoolean(f[11]) && !Arrays.equals(sealed, env)) {
                throw new IllegalStateException(f[0] + ": sealed " + hex.formatHex(sealed) + ", want " + hex.formatHex(env));
            }
            if (!Arrays.equals(k.open(sealed, context), value)) {
                throw new IllegalStateException(f[0] + ": its own envelope does not open");
            }
            for (int i = 0; i < env.length; i++) {
                byte[] bad = env.clone();
                bad[i] ^= 1;
                try {
                    k.open(bad, context);
                    throw new IllegalStateException(f[0] + ": opened with byte " + i + " flipped");
                } catch (java.security.GeneralSecurityException expected) {
                }
            }
            try {
                k.open(env, FieldCryptVectorsHelper.with(context, (byte) 'x'));
                throw new IllegalStateException(f[0] + ": opened in another context");
            } catch (java.security.GeneralSecurityException expected) {
            }
            n++;
        }
        System.out.println("vectors ok " + n);
    }
}

class FieldCryptVectorsHelper {
    static byte[] with(byte[] a, byte b) {
        byte[] out = Arrays.copyOf(a, a.length + 1);
        out[a.length] = b;
        return out;
    }
}
