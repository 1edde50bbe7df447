package hbase

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/kerberos"
)

// Secret keys of the Kerberos identities.
const (
	// PrincipalsKey is the managed KDC's principals file: the key version tickets are issued with.
	PrincipalsKey = "principals"
	// KeysKey is every key version the services hold: the served one, plus the next one a
	// rotation pre-publishes or the previous one it retired.
	KeysKey      = "keys"
	KeytabKey    = "service.keytab" // a role's keytab
	ClientKeytab = "client.keytab"  // the client principal's keytab
	PrincipalKey = "principal"      // the client principal's name
)

// RotatedForAnnotation on the principals Secret records the value of the datastore's
// v1alpha1.RotateKeytabsAnnotation that its keys answer, so each value rotates them once.
const RotatedForAnnotation = "datastore.secured.dev/keytabs-rotated-for"

// KeyOperation is what Identities does to the keys that exist.
type KeyOperation int

const (
	// KeepKeys keeps every principal's keys: keytabs already mounted stay valid.
	KeepKeys KeyOperation = iota
	// RotateKeys pre-publishes a new key version of every principal in the keytabs; the KDC
	// keeps issuing tickets with the current one, which every pod can still decrypt.
	RotateKeys
	// PromoteKeys makes the KDC issue tickets with the newest version, once every pod holds
	// it. The previous version stays in the keytabs, for tickets issued before, until the
	// next rotation.
	PromoteKeys
)

// Keys is what the principals Secret stores: the versions the KDC serves and those the
// services hold.
type Keys struct{ Served, Held []kerberos.Credential }

// KeysOf reads the principals Secret's data (nil before there is one). A Secret written
// before key versions existed has no KeysKey: the services hold what the KDC serves.
func KeysOf(data map[string][]byte) (Keys, error) {
	served, err := kerberos.ParsePrincipals(data[PrincipalsKey])
	if err != nil {
		return Keys{}, fmt.Errorf("key %s: %w", PrincipalsKey, err)
	}
	held, err := kerberos.ParsePrincipals(data[KeysKey])
	if err != nil {
		return Keys{}, fmt.Errorf("key %s: %w", KeysKey, err)
	}
	if _, ok := data[KeysKey]; !ok {
		held = served
	}
	return Keys{Served: served, Held: held}, nil
}

// Pending: a rotation has pre-published keys the KDC does not serve yet.
func (k Keys) Pending() bool { return k.HeldVersion() > k.ServedVersion() }

// ServedVersion is the highest key version the KDC issues tickets with (0 with no keys).
func (k Keys) ServedVersion() int { return maxVersion(k.Served) }

// HeldVersion is the highest key version in the keytabs; pods restart when it changes.
func (k Keys) HeldVersion() int { return maxVersion(k.Held) }

func maxVersion(creds []kerberos.Credential) int {
	v := 0
	for _, c := range creds {
		v = max(v, c.KVNO)
	}
	return v
}

// Identities renders the Secrets carrying a datastore's Kerberos identities: the KDC's
// principals file and the held keys, one keytab per role with the keys of all its pods, and
// the client's keytab. Principals of new pods get a first key; principals of pods scaled away
// are dropped; op says what happens to the keys of the others.
func Identities(ds *v1alpha1.SecuredDatastore, domain string, existing Keys, op KeyOperation, newPassword func() (string, error)) ([]*corev1.Secret, error) {
	served, held := map[string]kerberos.Credential{}, map[string][]kerberos.Credential{}
	for _, c := range existing.Served {
		served[c.Principal] = c
	}
	for _, c := range existing.Held {
		held[c.Principal] = append(held[c.Principal], c)
	}
	// versions returns the principal's keys after op: the served one first, all held ones.
	versions := func(p string) (kerberos.Credential, []kerberos.Credential, error) {
		cur, ok := served[p]
		if !ok {
			pw, err := newPassword()
			c := kerberos.Credential{Principal: p, KVNO: 1, Password: pw}
			return c, []kerberos.Credential{c}, err
		}
		keys := slices.Clone(held[p])
		if !slices.Contains(keys, cur) {
			keys = append(keys, cur)
		}
		slices.SortFunc(keys, func(a, b kerberos.Credential) int { return a.KVNO - b.KVNO })
		newest := keys[len(keys)-1]
		switch op {
		case RotateKeys:
			if newest.KVNO >= 255 {
				return cur, nil, fmt.Errorf("principal %s has used all 255 key versions: delete Secret %s to issue new keys to every pod", p, NamesOf(ds).PrincipalsSecret())
			}
			pw, err := newPassword()
			return cur, []kerberos.Credential{cur, {Principal: p, KVNO: newest.KVNO + 1, Password: pw}}, err
		case PromoteKeys:
			return newest, keys[max(0, len(keys)-2):], nil
		}
		return cur, keys, nil
	}
	n := NamesOf(ds)
	var allServed, allHeld []kerberos.Credential
	role := func(principals []string) ([]byte, error) {
		var creds []kerberos.Credential
		for _, p := range principals {
			s, h, err := versions(p)
			if err != nil {
				return nil, err
			}
			allServed, allHeld, creds = append(allServed, s), append(allHeld, h...), append(creds, h...)
		}
		return kerberos.Keytab(creds)
	}
	var secrets []*corev1.Secret
	byRole := Principals(ds, domain)
	for _, r := range Roles {
		if len(byRole[r]) == 0 {
			continue
		}
		keytab, err := role(byRole[r])
		if err != nil {
			return nil, err
		}
		secrets = append(secrets, secret(ds, n.KeytabSecret(r), r, map[string][]byte{KeytabKey: keytab}))
	}
	keytab, err := role([]string{ClientPrincipal(ds)})
	if err != nil {
		return nil, err
	}
	secrets = append(secrets,
		secret(ds, n.ClientKeytabSecret(), "", map[string][]byte{ClientKeytab: keytab, PrincipalKey: []byte(ClientPrincipal(ds))}),
		secret(ds, n.PrincipalsSecret(), KDC, map[string][]byte{PrincipalsKey: kerberos.PrincipalsFile(allServed), KeysKey: kerberos.PrincipalsFile(allHeld)}))
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
