// Package kerberos creates the Kerberos identities of a datastore: principals, their
// passwords, the keytabs derived from them, the managed KDC's principals file, and krb5.conf.
//
// The operator is the source of truth: it draws a random password per principal and hands the
// same password to the KDC (which derives the keys) and to the keytab writer (which derives the
// same keys with the same salt), so no kadmin protocol is needed and the KDC keeps no state.
package kerberos

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"
)

// Credential is one version of a principal's keys: the principal, the key version number
// (kvno) and the password the keys derive from.
type Credential struct {
	// Principal with its realm, e.g. hbase/rs-0.example@EXAMPLE.
	Principal string
	// KVNO is the key version, from 1; a rotation adds the next one. Tickets name the version
	// that encrypts them, so a keytab holding two versions accepts tickets of either.
	KVNO     int
	Password string
}

// EncryptionTypes are the keys a keytab holds and the managed KDC issues: AES only, strongest first.
var EncryptionTypes = []int32{etypeID.AES256_CTS_HMAC_SHA1_96, etypeID.AES128_CTS_HMAC_SHA1_96}

// Service is the principal of a service on a host: service/host@REALM. Hosts are the names peers
// use to reach the service, never a reverse lookup's answer.
func Service(service, host, realm string) string {
	return service + "/" + host + "@" + realm
}

// NewPassword draws a random password (256 bits).
func NewPassword() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// Keytab writes the keys of the credentials, each at its version, as a keytab file.
func Keytab(creds []Credential) ([]byte, error) {
	kt := keytab.New()
	for _, c := range creds {
		name, realm, ok := strings.Cut(c.Principal, "@")
		if !ok || name == "" || realm == "" {
			return nil, fmt.Errorf("principal %q has no realm: write it as name@REALM", c.Principal)
		}
		if c.Password == "" {
			return nil, fmt.Errorf("principal %s has no password", c.Principal)
		}
		if c.KVNO < 1 || c.KVNO > 255 {
			return nil, fmt.Errorf("principal %s: key version %d is not in 1..255", c.Principal, c.KVNO)
		}
		for _, e := range EncryptionTypes {
			// The timestamp is informational; a fixed one keeps the keytab a function of its inputs.
			if err := kt.AddEntry(name, realm, c.Password, time.Unix(0, 0).UTC(), uint8(c.KVNO), e); err != nil {
				return nil, fmt.Errorf("principal %s: %w", c.Principal, err)
			}
		}
	}
	return kt.Marshal()
}

// PrincipalsFile is what the managed KDC serves (images/kdc/Kdc.java): one "principal kvno
// password" per line, sorted. It is secret material and lives only in a Secret.
func PrincipalsFile(creds []Credential) []byte {
	lines := make([]string, 0, len(creds))
	for _, c := range creds {
		lines = append(lines, fmt.Sprintf("%s %d %s", c.Principal, c.KVNO, c.Password))
	}
	slices.Sort(lines)
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.Bytes()
}

// ParsePrincipals reads a principals file. A line without a version ("principal password",
// written before versions existed) is version 1. The error names the line, never quotes it:
// it holds a password.
func ParsePrincipals(b []byte) ([]Credential, error) {
	var out []Credential
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		c := Credential{KVNO: 1}
		switch len(f) {
		case 0:
			continue
		case 2:
			c.Principal, c.Password = f[0], f[1]
		case 3:
			kvno, err := strconv.Atoi(f[1])
			if err != nil || kvno < 1 || kvno > 255 {
				return nil, fmt.Errorf("line %d of the principals file has no key version in 1..255", i+1)
			}
			c.Principal, c.KVNO, c.Password = f[0], kvno, f[2]
		default:
			return nil, fmt.Errorf("line %d of the principals file is not \"principal@REALM kvno password\"", i+1)
		}
		if !strings.Contains(c.Principal, "@") {
			return nil, fmt.Errorf("line %d of the principals file names no realm", i+1)
		}
		out = append(out, c)
	}
	return out, nil
}

// Krb5Conf is the Kerberos client configuration for a realm served by kdc (host:port). Host
// names are taken as given: Kubernetes pod addresses reverse-resolve to names no principal has,
// so canonicalisation and reverse lookups are off. TCP only: the managed KDC serves no UDP.
func Krb5Conf(realm, kdc string) string {
	return strings.Join([]string{
		"[libdefaults]",
		"  default_realm = " + realm,
		"  dns_lookup_kdc = false",
		"  dns_lookup_realm = false",
		"  dns_canonicalize_hostname = false",
		"  rdns = false",
		"  udp_preference_limit = 1",
		"  default_tkt_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96",
		"  default_tgs_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96",
		"  permitted_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96",
		"[realms]",
		"  " + realm + " = {",
		"    kdc = " + kdc,
		"  }",
		"",
	}, "\n")
}
