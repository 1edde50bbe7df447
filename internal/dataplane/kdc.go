package dataplane

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"secured.dev/operator/internal/samples"
)

// KDC is a real Kerberos KDC (Apache Kerby from Maven Central, testdata/Kdc.java) with the
// test's principals and their keytabs.
type KDC struct {
	Realm string
	Dir   string
	proc  *process
}

// StartKDC serves realm on address:port (TCP) with the principals, each exported to
// <first component>.keytab in the KDC's directory.
func StartKDC(t testing.TB, realm, address string, port int, principals ...string) *KDC {
	t.Helper()
	lib, err := exec.Command(filepath.Join(samples.RepoRoot(), "hack", "kdc-jars.sh")).Output()
	if err != nil {
		t.Fatalf("resolving Kerby's jars: %v", err)
	}
	k := &KDC{Realm: realm, Dir: t.TempDir()}
	args := []string{"-cp", strings.TrimSpace(string(lib)) + "/*", filepath.Join(samples.RepoRoot(), "internal", "dataplane", "testdata", "Kdc.java"),
		k.Dir, realm, address, fmt.Sprint(port)}
	k.proc = startProcess(t, "KDC on "+address, exec.Command("java", append(args, principals...)...), "KDC ready", time.Minute)
	t.Cleanup(k.proc.stop)
	return k
}

// Krb5Conf is the client configuration that points at this KDC.
func (k *KDC) Krb5Conf() string { return filepath.Join(k.Dir, "krb5.conf") }

// Keytab of the principal whose first component is name.
func (k *KDC) Keytab(name string) string { return filepath.Join(k.Dir, name+".keytab") }

// JVMOption points a JVM at this KDC.
func (k *KDC) JVMOption() string { return "-Djava.security.krb5.conf=" + k.Krb5Conf() }
