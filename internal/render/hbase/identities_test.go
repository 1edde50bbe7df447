package hbase

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jcmturner/gokrb5/v8/keytab"
	"k8s.io/utils/ptr"
)

func counter() func() (string, error) {
	n := 0
	return func() (string, error) { n++; return fmt.Sprintf("pw-%d", n), nil }
}

// Identities are stable: principals keep their passwords across reconciles, a scale-up adds
// principals for the new pods only, and each role's keytab holds exactly its pods' keys.
func TestIdentitiesKeepPasswordsAndFollowTheTopology(t *testing.T) {
	ds, _ := sampleDatastore(t)
	first, err := Identities(ds, "cluster.local", nil, counter())
	if err != nil {
		t.Fatal(err)
	}
	principals := string(first[len(first)-1].Data[PrincipalsKey])
	// nn and HTTP on the NameNode, dn and HTTP on 3 DataNodes, the Master, 3 RegionServers, the client.
	if got := strings.Count(principals, "\n"); got != 2+3*2+1+3+1 {
		t.Errorf("%d principals:\n%s", got, principals)
	}
	again, err := Identities(ds, "cluster.local", []byte(principals), counter())
	if err != nil {
		t.Fatal(err)
	}
	if string(again[len(again)-1].Data[PrincipalsKey]) != principals {
		t.Error("a second reconcile changed passwords: every mounted keytab would stop working")
	}

	ds.Spec.HBase.RegionServers = ptr.To[int32](4)
	grown, err := Identities(ds, "cluster.local", []byte(principals), func() (string, error) { return "new", nil })
	if err != nil {
		t.Fatal(err)
	}
	after := string(grown[len(grown)-1].Data[PrincipalsKey])
	if !strings.Contains(after, "hbase/events-rs-3.events-rs.db.svc.cluster.local@EVENTS.DB new\n") || strings.Count(after, " new\n") != 1 {
		t.Errorf("scaling to 4 RegionServers gave:\n%s", after)
	}
	for _, s := range grown {
		if s.Name != "events-rs-keytab" {
			continue
		}
		kt := keytab.New()
		if err := kt.Unmarshal(s.Data[KeytabKey]); err != nil {
			t.Fatal(err)
		}
		if got := len(kt.Entries); got != 4*2 {
			t.Errorf("RegionServer keytab has %d entries; want 4 principals × 2 key types", got)
		}
	}
}

func TestCorruptPrincipalsFileIsRefusedWithoutQuotingIt(t *testing.T) {
	ds, _ := sampleDatastore(t)
	_, err := Identities(ds, "cluster.local", []byte("client@EVENTS.DB secret\nsecret-without-principal\n"), counter())
	if err == nil || !strings.Contains(err.Error(), "line 2") || strings.Contains(err.Error(), "secret-without") {
		t.Errorf("%v", err)
	}
}
