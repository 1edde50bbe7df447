package kerberos

import (
	"strings"
	"testing"

	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/types"
)

// A keytab holds one AES-256 and one AES-128 key per principal, salted with the principal's own
// name, and is a pure function of its credentials.
func TestKeytabHoldsAESKeysOfEveryPrincipal(t *testing.T) {
	creds := []Credential{{Principal: Service("hbase", "rs-0.example", "EXAMPLE"), Password: "p1"}, {Principal: "ycsb@EXAMPLE", Password: "p2"}}
	b, err := Keytab(creds)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Keytab(creds)
	if string(again) != string(b) {
		t.Error("the same credentials gave two different keytabs")
	}
	kt := keytab.New()
	if err := kt.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	for _, p := range []types.PrincipalName{types.NewPrincipalName(3, "hbase/rs-0.example"), types.NewPrincipalName(1, "ycsb")} {
		for _, e := range EncryptionTypes {
			if _, kvno, err := kt.GetEncryptionKey(p, "EXAMPLE", 0, e); err != nil || kvno != 1 {
				t.Errorf("%s etype %d: kvno %d, %v", p.PrincipalNameString(), e, kvno, err)
			}
		}
	}
	k1, _, _ := kt.GetEncryptionKey(types.NewPrincipalName(3, "hbase/rs-0.example"), "EXAMPLE", 0, EncryptionTypes[0])
	other, _ := Keytab([]Credential{{Principal: "hbase/rs-1.example@EXAMPLE", Password: "p1"}})
	kt2 := keytab.New()
	if err := kt2.Unmarshal(other); err != nil {
		t.Fatal(err)
	}
	k2, _, _ := kt2.GetEncryptionKey(types.NewPrincipalName(3, "hbase/rs-1.example"), "EXAMPLE", 0, EncryptionTypes[0])
	if string(k1.KeyValue) == string(k2.KeyValue) {
		t.Error("two principals with one password share a key: the salt must include the principal")
	}
}

func TestBadCredentialsAreRefusedByName(t *testing.T) {
	for _, c := range []Credential{{Principal: "hbase/host", Password: "x"}, {Principal: "ycsb@EXAMPLE"}} {
		if _, err := Keytab([]Credential{c}); err == nil || !strings.Contains(err.Error(), c.Principal) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

func TestPrincipalsFileIsSortedOneLinePerPrincipal(t *testing.T) {
	got := string(PrincipalsFile([]Credential{{"b@R", "2"}, {"a@R", "1"}}))
	if got != "a@R 1\nb@R 2\n" {
		t.Errorf("%q", got)
	}
}

func TestPasswordsAreRandom(t *testing.T) {
	a, _ := NewPassword()
	b, _ := NewPassword()
	if a == b || len(a) < 40 {
		t.Errorf("%q %q", a, b)
	}
}
