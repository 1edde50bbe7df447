// A Kerberos KDC for the data-plane tests: Apache Kerby's SimpleKdcServer on TCP.
//   java -cp <kerby jars> Kdc.java WORKDIR REALM HOST PORT PRINCIPAL...
// Each principal gets a random key, exported to WORKDIR/<first component>.keytab; the client
// configuration is WORKDIR/krb5.conf. Prints "KDC ready" and serves until killed.
import java.io.File;
import java.nio.file.Files;
import org.apache.kerby.kerberos.kerb.server.SimpleKdcServer;

public class Kdc {
    public static void main(String[] args) throws Exception {
        File dir = new File(args[0]);
        SimpleKdcServer kdc = new SimpleKdcServer();
        kdc.setWorkDir(dir);
        kdc.setKdcRealm(args[1]);
        kdc.setKdcHost(args[2]);
        kdc.setKdcTcpPort(Integer.parseInt(args[3]));
        kdc.setAllowUdp(false);
        kdc.init();
        for (int i = 4; i < args.length; i++) {
            String principal = args[i];
            kdc.createPrincipal(principal);
            String name = principal.split("[/@]")[0];
            kdc.getKadmin().exportKeytab(new File(dir, name + ".keytab"), principal);
        }
        // Host names are addresses here: no canonicalisation, no reverse lookups.
        Files.writeString(new File(dir, "krb5.conf").toPath(), String.join("\n",
            "[libdefaults]",
            "  default_realm = " + args[1],
            "  dns_lookup_kdc = false",
            "  dns_lookup_realm = false",
            "  dns_canonicalize_hostname = false",
            "  rdns = false",
            "  udp_preference_limit = 1",
            "  forwardable = true",
            "[realms]",
            "  " + args[1] + " = {",
            "    kdc = " + args[2] + ":" + args[3],
            "  }",
            ""));
        kdc.start();
        System.out.println("KDC ready");
        Thread.currentThread().join();
    }
}
