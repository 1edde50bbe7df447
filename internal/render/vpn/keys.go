package vpn

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"time"

	"secured.dev/operator/api/v1alpha1"
)

// Certificate lifetimes of OpenVPN tunnels. Member certificates are reissued by Ensure when
// less than renewBefore is left, and the sidecar restarts its tunnels when its files change.
const (
	caLifetime     = 10 * 365 * 24 * time.Hour
	memberLifetime = 365 * 24 * time.Hour
	renewBefore    = 30 * 24 * time.Hour
)

// Keys are a tunnel's secrets.
type Keys struct {
	// WireGuard: each member's private key, base64 as `wg genkey` prints it.
	WireGuard map[string]string
	// CA signs OpenVPN members' certificates.
	CA *PEMPair
	// Certs: each OpenVPN member's certificate and key.
	Certs map[string]PEMPair
}

// PEMPair is a certificate and its private key.
type PEMPair struct{ CertPEM, KeyPEM []byte }

// Ensure returns keys for every member of the plan: the ones it has, new ones for members
// without, and reissued OpenVPN certificates that would expire within renewBefore. Keys of
// members no longer in the plan are dropped. changed reports whether anything differs from
// have.
func Ensure(p Plan, have Keys, now time.Time) (out Keys, changed bool, err error) {
	switch p.Type {
	case v1alpha1.VPNWireGuard:
		out.WireGuard = map[string]string{}
		for _, m := range p.Members {
			if k, ok := have.WireGuard[m.Name]; ok {
				if _, err := PublicKey(k); err == nil {
					out.WireGuard[m.Name] = k
					continue
				}
			}
			if out.WireGuard[m.Name], err = NewWireGuardKey(); err != nil {
				return Keys{}, false, err
			}
			changed = true
		}
		changed = changed || len(have.WireGuard) != len(out.WireGuard)
	case v1alpha1.VPNOpenVPN:
		out.CA = have.CA
		if out.CA == nil || expiresBefore(out.CA.CertPEM, now.Add(renewBefore)) {
			if out.CA, err = newCA(now); err != nil {
				return Keys{}, false, err
			}
			changed = true
		}
		ca, err := parsePair(*out.CA)
		if err != nil {
			return Keys{}, false, fmt.Errorf("tunnel CA: %w", err)
		}
		out.Certs = map[string]PEMPair{}
		for _, m := range p.Members {
			if c, ok := have.Certs[m.Name]; ok && !changed && !expiresBefore(c.CertPEM, now.Add(renewBefore)) {
				out.Certs[m.Name] = c
				continue
			}
			if out.Certs[m.Name], err = issue(ca, m.Name, now); err != nil {
				return Keys{}, false, err
			}
			changed = true
		}
		changed = changed || len(have.Certs) != len(out.Certs)
	default:
		return Keys{}, false, fmt.Errorf("no tunnel of type %q", p.Type)
	}
	return out, changed, nil
}

// NewWireGuardKey returns a Curve25519 private key, clamped as `wg genkey` does.
func NewWireGuardKey() (string, error) {
	k, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return "", err
	}
	b := k.Bytes()
	b[0] &= 248
	b[31] = b[31]&127 | 64
	return base64.StdEncoding.EncodeToString(b), nil
}

// PublicKey derives the WireGuard public key of a base64 private key (`wg pubkey`).
func PublicKey(private string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(private)
	if err != nil || len(raw) != 32 {
		return "", fmt.Errorf("not a base64 Curve25519 key")
	}
	k, err := ecdh.X25519().NewPrivateKey(raw)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(k.PublicKey().Bytes()), nil
}

func newCA(now time.Time) (*PEMPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "secured-datastore tunnel CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(caLifetime),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	p, err := encode(der, key)
	return &p, err
}

type signer struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// issue signs a member certificate: its name is the common name the peers verify
// (verify-x509-name), and it serves both ends of a pair (TLS server and client).
func issue(ca signer, name string, now time.Time) (PEMPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return PEMPair{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(memberLifetime),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return PEMPair{}, err
	}
	return encode(der, key)
}

func encode(der []byte, key *ecdsa.PrivateKey) (PEMPair, error) {
	k, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return PEMPair{}, err
	}
	return PEMPair{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: k}),
	}, nil
}

func parsePair(p PEMPair) (signer, error) {
	cb, _ := pem.Decode(p.CertPEM)
	kb, _ := pem.Decode(p.KeyPEM)
	if cb == nil || kb == nil {
		return signer{}, fmt.Errorf("not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return signer{}, err
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return signer{}, err
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok {
		return signer{}, fmt.Errorf("not an ECDSA key")
	}
	return signer{cert, ec}, nil
}

// expiresBefore reports whether the PEM certificate ends before t; unreadable counts as expired.
func expiresBefore(certPEM []byte, t time.Time) bool {
	b, _ := pem.Decode(certPEM)
	if b == nil {
		return true
	}
	c, err := x509.ParseCertificate(b.Bytes)
	return err != nil || c.NotAfter.Before(t)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// KeysFrom reads back the keys of the plan's members from the public and keys Secrets' data
// (SecretData's two); what is missing is left for Ensure to make.
func KeysFrom(p Plan, public, keys map[string][]byte) Keys {
	var k Keys
	switch p.Type {
	case v1alpha1.VPNWireGuard:
		k.WireGuard = map[string]string{}
		for _, m := range p.Members {
			if b, ok := keys[KeyFile(m.Name)]; ok {
				k.WireGuard[m.Name] = strings.TrimSpace(string(b))
			}
		}
	case v1alpha1.VPNOpenVPN:
		if len(public[CAFile]) > 0 && len(keys[CAKeyFile]) > 0 {
			k.CA = &PEMPair{CertPEM: public[CAFile], KeyPEM: keys[CAKeyFile]}
		}
		k.Certs = map[string]PEMPair{}
		for _, m := range p.Members {
			c, key := public[CertFile(m.Name)], keys[KeyFile(m.Name)]
			if len(c) > 0 && len(key) > 0 {
				k.Certs[m.Name] = PEMPair{CertPEM: c, KeyPEM: key}
			}
		}
	}
	return k
}
