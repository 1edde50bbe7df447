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
	"strings"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"
)

// Credential is a principal and its password.
type Credential struct {
	// Principal with its realm, e.g. hbase/rs-0.example@EXAMPLE.
	Principal string
	Password  string
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

// Keytab writes the keys of the credentials, version 1 of each key, as a keytab file.
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
		for _, e := range EncryptionTypes {
			// The timestamp is informational; a fixed one keeps the keytab a function of its inputs.
			if err := kt.AddEntry(name, realm, c.Password, time.Unix(0, 0).UTC(), 1, e); err != nil {
				return nil, fmt.Errorf("principal %s: %w", c.Principal, err)
			}
		}
	}
	return kt.Marshal()
}

// PrincipalsFile is what the managed KDC serves (images/kdc/Kdc.java): one "principal password"
// per line, sorted. It is secret material and lives only in a Secret.
func PrincipalsFile(creds []Credential) []byte {
	lines := make([]string, 0, len(creds))
	for _, c := range creds {
		lines = append(lines, c.Principal+" "+c.Password)
	}
	slices.Sort(lines)
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.Bytes()
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
