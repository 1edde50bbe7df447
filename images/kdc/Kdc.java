// The managed KDC: Apache Kerby's KDC serving the principals the operator declares.
//   java -cp <kerby jars> Kdc.java REALM HOST PORT PRINCIPALS_FILE
// PRINCIPALS_FILE (a Secret the operator owns) has one "principal password" per line. The
// operator derives every keytab from the same passwords, so the KDC keeps no state of its own
// and may restart at any time. The file is read again whenever it changes: new principals are
// added, changed passwords replace the keys, removed principals are deleted.
// Prints "KDC ready" once it serves, and each change as "principals: +a ~b -c" (names only).
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.kerby.kerberos.kerb.server.KdcConfigKey;
import org.apache.kerby.kerberos.kerb.server.SimpleKdcServer;

public class Kdc {
    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: Kdc REALM HOST PORT PRINCIPALS_FILE");
            System.exit(2);
        }
        String realm = args[0];
        Path file = Path.of(args[3]);
        SimpleKdcServer kdc = new SimpleKdcServer();
        kdc.setWorkDir(Files.createTempDirectory("kdc").toFile());
        kdc.setKdcRealm(realm);
        kdc.setKdcHost(args[1]);
        kdc.setKdcTcpPort(Integer.parseInt(args[2]));
        kdc.setAllowUdp(false);
        // AES only: the keytabs the operator writes hold AES-256 and AES-128 keys.
        kdc.getKdcConfig().setString(KdcConfigKey.ENCRYPTION_TYPES, "aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96");
        kdc.init();
        Map<String, String> known = new HashMap<>();
        sync(kdc, realm, file, known);
        kdc.start();
        System.out.println("KDC ready");
        long seen = Files.getLastModifiedTime(file).toMillis();
        while (true) {
            Thread.sleep(2000);
            long now = Files.exists(file) ? Files.getLastModifiedTime(file).toMillis() : seen;
            if (now != seen) {
                seen = now;
                try {
                    sync(kdc, realm, file, known);
                } catch (Exception e) {
                    System.out.println("principals not reloaded: " + e.getMessage());
                }
            }
        }
    }

    static void sync(SimpleKdcServer kdc, String realm, Path file, Map<String, String> known) throws Exception {
        Map<String, String> want = new HashMap<>();
        for (String line : Files.readAllLines(file)) {
            line = line.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\\s+", 2);
            if (f.length != 2 || !f[0].endsWith("@" + realm)) {
                throw new IllegalArgumentException("a line is not \"principal@" + realm + " password\"");
            }
            want.put(f[0], f[1]);
        }
        StringBuilder changes = new StringBuilder();
        for (String p : Map.copyOf(known).keySet()) {
            if (!want.containsKey(p)) {
                kdc.deletePrincipal(p);
                known.remove(p);
                changes.append(" -").append(p);
            }
        }
        for (Map.Entry<String, String> e : want.entrySet()) {
            String old = known.get(e.getKey());
            if (e.getValue().equals(old)) {
                continue;
            }
            if (old != null) {
                kdc.deletePrincipal(e.getKey());
            }
            kdc.createPrincipal(e.getKey(), e.getValue());
            known.put(e.getKey(), e.getValue());
            changes.append(old == null ? " +" : " ~").append(e.getKey());
        }
        System.out.println("principals:" + (changes.length() == 0 ? " unchanged" : changes));
    }
}
