// Package testpki is a certificate authority for tests: it issues server and client
// certificates (ECDSA or RSA) and writes them in the shape of cert-manager's Secrets.
package testpki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// CA issues certificates.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA certificate (a Secret's ca.crt).
	PEM []byte
}

// New creates a CA.
func New(t testing.TB) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &CA{cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// Issued is a certificate and its PKCS#8 key.
type Issued struct {
	CertPEM, KeyPEM []byte
	TLS             tls.Certificate
}

// Issue signs a certificate for the names (DNS names or IP addresses), usable for server and
// client authentication (internode TLS is mutual). RSA keys serve suites with _RSA_
// authentication; ECDSA keys the rest.
func (ca *CA) Issue(t testing.TB, rsaKey bool, names ...string) Issued {
	t.Helper()
	return ca.issue(t, rsaKey, nil, names...)
}

// IssueClient signs a client certificate (ECDSA) whose only subject alternative name is the
// URI, such as a SPIFFE ID.
func (ca *CA) IssueClient(t testing.TB, uri string) Issued {
	t.Helper()
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	return ca.issue(t, false, u)
}

func (ca *CA) issue(t testing.TB, rsaKey bool, uri *url.URL, names ...string) Issued {
	t.Helper()
	var key crypto.Signer
	var err error
	if rsaKey {
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	} else {
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	cn := "client"
	if len(names) > 0 {
		cn = names[0]
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if uri != nil {
		tmpl.URIs = []*url.URL{uri}
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	out := Issued{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}),
	}
	if out.TLS, err = tls.X509KeyPair(out.CertPEM, out.KeyPEM); err != nil {
		t.Fatal(err)
	}
	return out
}

// WriteSecret issues a certificate for the names and writes the files cert-manager's Secret
// holds into dir: tls.key (PKCS#8), tls.crt, ca.crt, and tls-combined.pem (key then chain).
func (ca *CA) WriteSecret(t testing.TB, dir string, names ...string) {
	t.Helper()
	ca.WriteSecretWithKey(t, dir, false, names...)
}

// KeystorePassword protects keystore.p12, as the password Secret cert-manager is given would.
const KeystorePassword = "test-keystore-password"

// WriteSecretWithKey is WriteSecret with an RSA key when rsaKey is set (for suites with _RSA_
// authentication), else ECDSA. It also writes keystore.p12 (PKCS#12, KeystorePassword), as
// cert-manager does for a Certificate with keystores.pkcs12.
func (ca *CA) WriteSecretWithKey(t testing.TB, dir string, rsaKey bool, names ...string) {
	t.Helper()
	c := ca.Issue(t, rsaKey, names...)
	p12, err := pkcs12.Modern.Encode(c.TLS.PrivateKey, c.TLS.Leaf, []*x509.Certificate{ca.cert}, KeystorePassword)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"tls.key": c.KeyPEM, "tls.crt": c.CertPEM, "ca.crt": ca.PEM,
		"tls-combined.pem": append(append([]byte{}, c.KeyPEM...), c.CertPEM...),
		"keystore.p12":     p12,
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
