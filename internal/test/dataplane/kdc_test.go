package dataplane

import (
	"os"
	"testing"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"

	"secured.dev/operator/internal/kerberos"
)

// The managed KDC (images/kdc/Kdc.java) rotates keys the way the operator does: keytabs first
// gain the next key version while tickets still name the current one; after the promotion,
// tickets name the new version. Throughout, a service with the rotated keytab accepts every
// ticket, old or new, and a client logs in from its rotated keytab; a keytab without the new
// version cannot read the new tickets (so the rotation really changed the keys).
func TestKDCRotatesKeysWithoutBreakingTickets(t *testing.T) {
	const realm = "ROTATE.TEST"
	service := kerberos.Service("hbase", "rs-0.rotate.test", realm)
	user := "app@" + realm
	k := StartKDC(t, realm, "127.0.0.86", 18801, service, user)
	cfg, err := config.Load(k.Krb5Conf())
	if err != nil {
		t.Fatal(err)
	}
	keytabOf := func(principal string) *keytab.Keytab {
		t.Helper()
		path := t.TempDir() + "/kt"
		k.WriteKeytab(t, path, principal)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		kt := keytab.New()
		if err := kt.Unmarshal(b); err != nil {
			t.Fatal(err)
		}
		return kt
	}
	// ticket logs the client in from its keytab and asks for a ticket to the service.
	ticket := func(clientKeytab *keytab.Keytab) messages.Ticket {
		t.Helper()
		cl := client.NewWithKeytab("app", realm, clientKeytab, cfg, client.DisablePAFXFAST(true))
		defer cl.Destroy()
		if err := cl.Login(); err != nil {
			t.Fatalf("client login from its keytab: %v", err)
		}
		tkt, _, err := cl.GetServiceTicket("hbase/rs-0.rotate.test")
		if err != nil {
			t.Fatalf("service ticket: %v", err)
		}
		return tkt
	}
	accepts := func(kt *keytab.Keytab, tkt messages.Ticket) bool {
		return tkt.DecryptEncPart(kt, nil) == nil
	}

	v1Service := keytabOf(service)
	first := ticket(keytabOf(user))
	if first.EncPart.KVNO != 1 || !accepts(v1Service, first) {
		t.Fatalf("before any rotation: ticket version %d, accepted %v", first.EncPart.KVNO, accepts(v1Service, first))
	}

	k.Rotate(t, service, user)
	rotatedService, rotatedUser := keytabOf(service), keytabOf(user)
	pre := ticket(rotatedUser)
	if pre.EncPart.KVNO != 1 || !accepts(rotatedService, pre) || !accepts(v1Service, pre) {
		t.Errorf("keys pre-published: ticket version %d (want 1), accepted by the rotated keytab %v and the old one %v",
			pre.EncPart.KVNO, accepts(rotatedService, pre), accepts(v1Service, pre))
	}

	k.Promote(t)
	post := ticket(rotatedUser)
	if post.EncPart.KVNO != 2 || !accepts(rotatedService, post) {
		t.Errorf("keys promoted: ticket version %d (want 2), accepted by the rotated keytab %v", post.EncPart.KVNO, accepts(rotatedService, post))
	}
	if accepts(v1Service, post) {
		t.Error("a keytab with only version 1 read a ticket after the promotion: the key did not change")
	}
	if !accepts(rotatedService, first) {
		t.Error("a ticket issued before the rotation is no longer accepted")
	}
}
