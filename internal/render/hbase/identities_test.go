package hbase

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"secured.dev/operator/internal/kerberos"
)

func counter() func() (string, error) {
	n := 0
	return func() (string, error) { n++; return fmt.Sprintf("pw-%d", n), nil }
}

// stored is what the controller reads back: the principals Secret's keys.
func stored(t *testing.T, secrets []*corev1.Secret) Keys {
	t.Helper()
	k, err := KeysOf(secrets[len(secrets)-1].Data)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func keytabOf(t *testing.T, secrets []*corev1.Secret, name string) *keytab.Keytab {
	t.Helper()
	for _, s := range secrets {
		if s.Name == name {
			kt := keytab.New()
			if err := kt.Unmarshal(s.Data[KeytabKey]); err != nil {
				t.Fatal(err)
			}
			return kt
		}
	}
	t.Fatalf("no Secret %s", name)
	return nil
}

// Identities are stable: principals keep their passwords across reconciles, a scale-up adds
// principals for the new pods only, and each role's keytab holds exactly its pods' keys.
func TestIdentitiesKeepPasswordsAndFollowTheTopology(t *testing.T) {
	ds, _ := sampleDatastore(t)
	first, err := Identities(ds, "cluster.local", Keys{}, KeepKeys, counter())
	if err != nil {
		t.Fatal(err)
	}
	principals := string(first[len(first)-1].Data[PrincipalsKey])
	// ZooKeeper, nn and HTTP on the NameNode, dn and HTTP on 3 DataNodes, 2 Masters, 3
	// RegionServers, the client.
	if got := strings.Count(principals, "\n"); got != 1+2+3*2+2+3+1 {
		t.Errorf("%d principals:\n%s", got, principals)
	}
	again, err := Identities(ds, "cluster.local", stored(t, first), KeepKeys, counter())
	if err != nil {
		t.Fatal(err)
	}
	if string(again[len(again)-1].Data[PrincipalsKey]) != principals {
		t.Error("a second reconcile changed passwords: every mounted keytab would stop working")
	}

	ds.Spec.HBase.RegionServers = ptr.To[int32](4)
	grown, err := Identities(ds, "cluster.local", stored(t, first), KeepKeys, func() (string, error) { return "new", nil })
	if err != nil {
		t.Fatal(err)
	}
	after := string(grown[len(grown)-1].Data[PrincipalsKey])
	if !strings.Contains(after, "hbase/events-rs-3.events-rs.db.svc.cluster.local@EVENTS.DB 1 new\n") || strings.Count(after, " new\n") != 1 {
		t.Errorf("scaling to 4 RegionServers gave:\n%s", after)
	}
	if got := len(keytabOf(t, grown, "events-rs-keytab").Entries); got != 4*2 {
		t.Errorf("RegionServer keytab has %d entries; want 4 principals × 2 key types", got)
	}
}

// A rotation first adds version 2 to every keytab while the KDC keeps serving version 1
// (pods restart to load it); the promotion then makes the KDC serve version 2 and keeps
// version 1 in the keytabs for tickets issued before. The next rotation retires version 1.
func TestRotationPrepublishesThenPromotes(t *testing.T) {
	ds, _ := sampleDatastore(t)
	pw := counter()
	v1, err := Identities(ds, "cluster.local", Keys{}, KeepKeys, pw)
	if err != nil {
		t.Fatal(err)
	}
	rs0 := "hbase/events-rs-0.events-rs.db.svc.cluster.local"
	versions := func(kt *keytab.Keytab) []int {
		var out []int
		for _, e := range kt.Entries {
			if e.Principal.Components[0]+"/"+e.Principal.Components[1] == rs0 && e.Key.KeyType == kerberos.EncryptionTypes[0] {
				out = append(out, int(e.KVNO8))
			}
		}
		return out
	}
	steps := []struct {
		op             KeyOperation
		served, held   int
		pending        bool
		keytabVersions string
	}{
		{RotateKeys, 1, 2, true, "[1 2]"},
		{KeepKeys, 1, 2, true, "[1 2]"},
		{PromoteKeys, 2, 2, false, "[1 2]"},
		{KeepKeys, 2, 2, false, "[1 2]"},
		{RotateKeys, 2, 3, true, "[2 3]"},
	}
	cur := v1
	for i, st := range steps {
		next, err := Identities(ds, "cluster.local", stored(t, cur), st.op, pw)
		if err != nil {
			t.Fatal(err)
		}
		k := stored(t, next)
		if k.ServedVersion() != st.served || k.HeldVersion() != st.held || k.Pending() != st.pending {
			t.Errorf("step %d: served %d held %d pending %v; want %d %d %v", i, k.ServedVersion(), k.HeldVersion(), k.Pending(), st.served, st.held, st.pending)
		}
		if got := fmt.Sprint(versions(keytabOf(t, next, "events-rs-keytab"))); got != st.keytabVersions {
			t.Errorf("step %d: RegionServer keytab versions %s, want %s", i, got, st.keytabVersions)
		}
		cur = next
	}
	// The promoted key is the one the keytab pre-published.
	kt := keytabOf(t, cur, "events-rs-keytab")
	if _, _, err := kt.GetEncryptionKey(types.NewPrincipalName(3, rs0), "EVENTS.DB", 3, kerberos.EncryptionTypes[0]); err != nil {
		t.Error(err)
	}
}

func TestCorruptPrincipalsFileIsRefusedWithoutQuotingIt(t *testing.T) {
	_, err := KeysOf(map[string][]byte{PrincipalsKey: []byte("client@EVENTS.DB secret\nsecret-without-principal\n")})
	if err == nil || !strings.Contains(err.Error(), "line 2") || strings.Contains(err.Error(), "secret-without") {
		t.Errorf("%v", err)
	}
}
