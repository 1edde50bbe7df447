// The managed KDC: Apache Kerby's KDC serving the principals the operator declares.
//   java -cp <kerby jars> Kdc.java REALM HOST PORT PRINCIPALS_FILE
// PRINCIPALS_FILE (a Secret the operator owns) has one "principal kvno password" per line
// ("principal password" is version 1). The operator derives every keytab from the same
// passwords, so the KDC keeps no state of its own and may restart at any time. The file is
// read again whenever it changes: new principals are added, a changed version or password
// replaces the keys (tickets then name the new version), removed principals are deleted.
// Prints "KDC ready" once it serves, and each change as "principals: +a ~b -c" (names only).
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.kerby.kerberos.kerb.request.KrbIdentity;
import org.apache.kerby.kerberos.kerb.server.KdcConfigKey;
import org.apache.kerby.kerberos.kerb.server.SimpleKdcServer;
import org.apache.kerby.kerberos.kerb.type.base.EncryptionKey;

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
        // No pre-authentication: during a key rotation, keytabs hold a key version the KDC does
        // not serve yet, and Java and gokrb5 pre-authenticate with a keytab's newest key. The AS
        // reply names its key version instead, which any keytab holding it can read. What
        // pre-authentication protects against, guessing a password offline from an AS reply,
        // is moot: every password here is 256 random bits.
        kdc.getKdcConfig().setBoolean(KdcConfigKey.PREAUTH_REQUIRED, false);
        kdc.init();
        Map<String, Key> known = new HashMap<>();
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

    record Key(int kvno, String password) {}

    static void sync(SimpleKdcServer kdc, String realm, Path file, Map<String, Key> known) throws Exception {
        Map<String, Key> want = new HashMap<>();
        int n = 0;
        for (String line : Files.readAllLines(file)) {
            n++;
            line = line.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\\s+");
            // Errors name the line, never quote it: it holds a password.
            if (f.length < 2 || f.length > 3 || !f[0].endsWith("@" + realm)) {
                throw new IllegalArgumentException("line " + n + " is not \"principal@" + realm + " kvno password\"");
            }
            want.put(f[0], f.length == 2 ? new Key(1, f[1]) : new Key(Integer.parseInt(f[1]), f[2]));
        }
        StringBuilder changes = new StringBuilder();
        for (String p : Map.copyOf(known).keySet()) {
            if (!want.containsKey(p)) {
                kdc.deletePrincipal(p);
                known.remove(p);
                changes.append(" -").append(p);
            }
        }
        for (Map.Entry<String, Key> e : want.entrySet()) {
            Key old = known.get(e.getKey());
            Key key = e.getValue();
            if (key.equals(old)) {
                continue;
            }
            if (old != null) {
                kdc.deletePrincipal(e.getKey());
            }
            kdc.createPrincipal(e.getKey(), key.password());
            if (key.kvno() != 1) {
                KrbIdentity id = kdc.getKadmin().getPrincipal(e.getKey());
                for (EncryptionKey k : id.getKeys().values()) {
                    k.setKvno(key.kvno());
                }
                id.setKeyVersion(key.kvno());
                kdc.getKadmin().getIdentityBackend().updateIdentity(id);
            }
            known.put(e.getKey(), key);
            changes.append(old == null ? " +" : " ~").append(e.getKey()).append(" v").append(key.kvno());
        }
        System.out.println("principals:" + (changes.length() == 0 ? " unchanged" : changes));
    }
}
