// Prints every cipher suite SunJSSE supports, one per line. Run with a java.security override
// that empties jdk.tls.disabledAlgorithms, or disabled suites are hidden.
import javax.net.ssl.SSLContext;

public class ListSuites {
    public static void main(String[] args) throws Exception {
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, null, null);
        for (String s : ctx.getSupportedSSLParameters().getCipherSuites()) {
            System.out.println(s);
        }
    }
}
