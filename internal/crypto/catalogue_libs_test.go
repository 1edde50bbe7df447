package crypto

// These tests hold the catalogue's library columns to the real libraries on the test machine
// (hack/build/prereqs.sh installs OpenSSL and a JRE), so a wrong row cannot hide.

import (
	"crypto/tls"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"secured.dev/operator/internal/test/tier"
)

func TestGoColumnMatchesCryptoTLS(t *testing.T) {
	goSuites := map[uint16]*tls.CipherSuite{}
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		goSuites[s.ID] = s
	}
	for _, s := range All() {
		g, known := goSuites[s.ID]
		if known != (s.Libraries&LibGo != 0) {
			t.Errorf("%s: catalogue says Go=%v, crypto/tls says %v", s.Name, s.Libraries&LibGo != 0, known)
			continue
		}
		if known {
			if g.Name != s.Name {
				t.Errorf("0x%04X: Go calls it %s, we call it %s", s.ID, g.Name, s.Name)
			}
			if lo, hi := slices.Min(g.SupportedVersions), slices.Max(g.SupportedVersions); lo != s.MinVersion || hi != s.MaxVersion {
				t.Errorf("%s: Go negotiates it in %s-%s, catalogue says %s-%s", s.Name, ProtocolName(lo), ProtocolName(hi), ProtocolName(s.MinVersion), ProtocolName(s.MaxVersion))
			}
		}
		delete(goSuites, s.ID)
	}
	for id, g := range goSuites {
		t.Errorf("Go knows 0x%04X %s; the catalogue does not", id, g.Name)
	}
}

func TestOpenSSLColumnMatchesOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatal("openssl is needed to check the catalogue; run hack/build/prereqs.sh")
	}
	var tls13 []string
	for _, s := range Filter(Suite.TLS13) {
		tls13 = append(tls13, s.Name)
	}
	out, err := exec.Command("openssl", "ciphers", "-stdname", "-V", "-ciphersuites", strings.Join(tls13, ":"), "ALL:COMPLEMENTOFALL:@SECLEVEL=0").CombinedOutput()
	if err != nil {
		t.Fatalf("openssl ciphers: %v\n%s", err, out)
	}
	listed := map[uint16]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		// 0xC0,0x2F - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 - ECDHE-RSA-AES128-GCM-SHA256 TLSv1.2 Kx=ECDH ...
		f := strings.Fields(line)
		if len(f) < 6 {
			t.Fatalf("unexpected openssl output %q", line)
		}
		id, err := strconv.ParseUint(strings.ReplaceAll(strings.ReplaceAll(f[0], "0x", ""), ",", ""), 16, 16)
		if err != nil {
			t.Fatalf("code point in %q: %v", line, err)
		}
		listed[uint16(id)] = true
		s, ok := LookupID(uint16(id))
		if !ok {
			t.Errorf("OpenSSL knows %s (%s); the catalogue does not", f[2], f[4])
			continue
		}
		if s.Name != f[2] || s.OpenSSLName != f[4] {
			t.Errorf("0x%04X: OpenSSL says %s / %s, catalogue %s / %s", id, f[2], f[4], s.Name, s.OpenSSLName)
		}
		minVersion := map[string]uint16{"SSLv3": VersionTLS10, "TLSv1": VersionTLS10, "TLSv1.2": VersionTLS12, "TLSv1.3": VersionTLS13}[f[5]]
		if minVersion != s.MinVersion {
			t.Errorf("%s: OpenSSL's minimum protocol is %s, catalogue says %s", s.Name, f[5], ProtocolName(s.MinVersion))
		}
	}
	for _, s := range All() {
		if s.Libraries&LibOpenSSL != 0 && !listed[s.ID] {
			t.Errorf("%s: catalogue says OpenSSL knows it, but this OpenSSL does not list it", s.Name)
		}
	}
}

func TestJDKColumnMatchesSunJSSE(t *testing.T) {
	tier.Full(t, "a JVM")
	if _, err := exec.LookPath("java"); err != nil {
		t.Fatal("java is needed to check the catalogue; run hack/build/prereqs.sh")
	}
	props := filepath.Join(t.TempDir(), "java.security")
	if err := os.WriteFile(props, []byte("jdk.tls.disabledAlgorithms=\njdk.tls.legacyAlgorithms=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("java", "-Djava.security.properties="+props, filepath.Join("testdata", "ListSuites.java")).CombinedOutput()
	if err != nil {
		t.Fatalf("java: %v\n%s", err, out)
	}
	jdk := map[string]bool{}
	for _, name := range strings.Fields(string(out)) {
		if strings.HasSuffix(name, "_SCSV") {
			continue // signalling values, not suites
		}
		jdk[name] = true
		if s, ok := LookupAny(name); !ok || s.JSSEName != name || s.Libraries&LibJDK == 0 {
			t.Errorf("the JDK knows %s; the catalogue's JDK column does not", name)
		}
	}
	for _, s := range All() {
		if s.Libraries&LibJDK != 0 && !jdk[s.JSSEName] {
			t.Errorf("%s: catalogue says the JDK knows it as %q, but this JDK does not list it", s.Name, s.JSSEName)
		}
	}
}
