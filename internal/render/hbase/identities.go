package hbase

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/kerberos"
)

// Secret keys of the Kerberos identities.
const (
	PrincipalsKey = "principals"     // the managed KDC's principals file
	KeytabKey     = "service.keytab" // a role's keytab
	ClientKeytab  = "client.keytab"  // the client principal's keytab
	PrincipalKey  = "principal"      // the client principal's name
)

// Identities renders the Secrets carrying a datastore's Kerberos identities: the KDC's
// principals file, one keytab per role with the keys of all its pods, and the client's keytab.
// existing is the principals file the KDC serves now (nil at first): a principal keeps its
// password, so keytabs already mounted stay valid; new pods get new principals, and principals
// of pods scaled away are dropped.
func Identities(ds *v1alpha1.SecuredDatastore, domain string, existing []byte, newPassword func() (string, error)) ([]*corev1.Secret, error) {
	known, err := parsePrincipals(existing)
	if err != nil {
		return nil, fmt.Errorf("Secret %s: %w", NamesOf(ds).PrincipalsSecret(), err)
	}
	credential := func(p string) (kerberos.Credential, error) {
		if pw, ok := known[p]; ok {
			return kerberos.Credential{Principal: p, Password: pw}, nil
		}
		pw, err := newPassword()
		return kerberos.Credential{Principal: p, Password: pw}, err
	}
	n := NamesOf(ds)
	var all []kerberos.Credential
	var secrets []*corev1.Secret
	byRole := Principals(ds, domain)
	for _, r := range Roles {
		var creds []kerberos.Credential
		for _, p := range byRole[r] {
			c, err := credential(p)
			if err != nil {
				return nil, err
			}
			creds = append(creds, c)
		}
		if len(creds) == 0 {
			continue
		}
		keytab, err := kerberos.Keytab(creds)
		if err != nil {
			return nil, err
		}
		all = append(all, creds...)
		secrets = append(secrets, secret(ds, n.KeytabSecret(r), r, map[string][]byte{KeytabKey: keytab}))
	}
	client, err := credential(ClientPrincipal(ds))
	if err != nil {
		return nil, err
	}
	keytab, err := kerberos.Keytab([]kerberos.Credential{client})
	if err != nil {
		return nil, err
	}
	all = append(all, client)
	secrets = append(secrets,
		secret(ds, n.ClientKeytabSecret(), "", map[string][]byte{ClientKeytab: keytab, PrincipalKey: []byte(client.Principal)}),
		secret(ds, n.PrincipalsSecret(), KDC, map[string][]byte{PrincipalsKey: kerberos.PrincipalsFile(all)}))
	return secrets, nil
}

func secret(ds *v1alpha1.SecuredDatastore, name string, r Role, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: meta(ds, name, r),
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
}

// parsePrincipals reads a principals file; the error never quotes a line (it holds a password).
func parsePrincipals(b []byte) (map[string]string, error) {
	out := map[string]string{}
	s := bufio.NewScanner(bytes.NewReader(b))
	for i := 1; s.Scan(); i++ {
		line := strings.TrimSpace(s.Text())
		if line == "" {
			continue
		}
		p, pw, ok := strings.Cut(line, " ")
		if !ok || pw == "" || !strings.Contains(p, "@") {
			return nil, fmt.Errorf("line %d of the principals file is not \"principal@REALM password\"", i)
		}
		out[p] = pw
	}
	return out, s.Err()
}
