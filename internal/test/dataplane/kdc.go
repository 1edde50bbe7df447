package dataplane

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"secured.dev/operator/internal/kerberos"
	"secured.dev/operator/internal/test/samples"
)

// KDC is the managed KDC (images/kdc/Kdc.java, Apache Kerby from Maven Central) serving the
// test's principals, with keytabs derived by internal/kerberos exactly as the operator derives them.
type KDC struct {
	Realm string
	// Address is host:port.
	Address string
	Dir     string
	// held: every key version of each principal that keytabs get; served: the one the KDC
	// issues tickets with.
	held   map[string][]kerberos.Credential
	served map[string]kerberos.Credential
	file   string
	proc   *process
}

// StartKDC serves realm on address:port (TCP) with the principals (name/host@REALM or
// name@REALM), each also written to <first component>.keytab in the KDC's directory.
func StartKDC(t testing.TB, realm, address string, port int, principals ...string) *KDC {
	t.Helper()
	lib, err := exec.Command(filepath.Join(samples.RepoRoot(), "hack", "build", "kdc-jars.sh")).Output()
	if err != nil {
		t.Fatalf("resolving Kerby's jars: %v", err)
	}
	k := &KDC{Realm: realm, Address: fmt.Sprintf("%s:%d", address, port), Dir: t.TempDir(), held: map[string][]kerberos.Credential{}, served: map[string]kerberos.Credential{}}
	byName := map[string][]string{}
	var all []kerberos.Credential
	for _, p := range principals {
		pw, err := kerberos.NewPassword()
		if err != nil {
			t.Fatal(err)
		}
		c := kerberos.Credential{Principal: p, KVNO: 1, Password: pw}
		k.held[p], k.served[p] = []kerberos.Credential{c}, c
		all = append(all, c)
		name := strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '@' })[0]
		byName[name] = append(byName[name], p)
	}
	for name, ps := range byName {
		k.WriteKeytab(t, k.Keytab(name), ps...)
	}
	k.file = filepath.Join(k.Dir, "principals")
	write(t, k.file, string(kerberos.PrincipalsFile(all)))
	write(t, k.Krb5Conf(), kerberos.Krb5Conf(realm, k.Address))
	args := javaProgram(t, filepath.Join(samples.RepoRoot(), "images", "kdc", "Kdc.java"), strings.TrimSpace(string(lib))+"/*").
		args(realm, address, fmt.Sprint(port), k.file)
	k.proc = startProcess(t, "KDC on "+address, java(context.Background(), args...), "KDC ready", time.Minute)
	return k
}

// WriteKeytab writes the keys of the principals to path, as the operator writes a pod's keytab.
func (k *KDC) WriteKeytab(t testing.TB, path string, principals ...string) {
	t.Helper()
	var creds []kerberos.Credential
	for _, p := range principals {
		c, ok := k.held[p]
		if !ok {
			t.Fatalf("the KDC serves no principal %s", p)
		}
		creds = append(creds, c...)
	}
	b, err := kerberos.Keytab(creds)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Rotate adds the next key version of each principal to the keytabs written from now on; the
// KDC keeps issuing tickets with the current one until Promote (the operator's RotateKeys).
func (k *KDC) Rotate(t testing.TB, principals ...string) {
	t.Helper()
	for _, p := range principals {
		pw, err := kerberos.NewPassword()
		if err != nil {
			t.Fatal(err)
		}
		cur := k.served[p]
		k.held[p] = []kerberos.Credential{cur, {Principal: p, KVNO: cur.KVNO + 1, Password: pw}}
	}
}

// Promote makes the KDC issue tickets with the newest version of every key and waits until
// it has reloaded its principals file (the operator's PromoteKeys).
func (k *KDC) Promote(t testing.TB) {
	t.Helper()
	var all []kerberos.Credential
	for p, keys := range k.held {
		k.served[p] = keys[len(keys)-1]
		all = append(all, k.served[p])
	}
	reloads := strings.Count(k.proc.Log(), "principals: ")
	write(t, k.file, string(kerberos.PrincipalsFile(all)))
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(k.proc.Log(), "principals: ") == reloads {
		if time.Now().After(deadline) {
			t.Fatalf("the KDC did not reload its principals:\n%s", tail(k.proc.Log(), 10))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Krb5Conf is the client configuration that points at this KDC.
func (k *KDC) Krb5Conf() string { return filepath.Join(k.Dir, "krb5.conf") }

// Keytab of the principals whose first component is name.
func (k *KDC) Keytab(name string) string { return filepath.Join(k.Dir, name+".keytab") }

// JVMOption points a JVM at this KDC.
func (k *KDC) JVMOption() string { return "-Djava.security.krb5.conf=" + k.Krb5Conf() }

func write(t testing.TB, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}
