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
	creds := []Credential{{Principal: Service("hbase", "rs-0.example", "EXAMPLE"), KVNO: 1, Password: "p1"}, {Principal: "ycsb@EXAMPLE", KVNO: 1, Password: "p2"}}
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
	other, _ := Keytab([]Credential{{Principal: "hbase/rs-1.example@EXAMPLE", KVNO: 1, Password: "p1"}})
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
	for _, c := range []Credential{{Principal: "hbase/host", KVNO: 1, Password: "x"}, {Principal: "ycsb@EXAMPLE", KVNO: 1}, {Principal: "ycsb@EXAMPLE", Password: "x"}} {
		if _, err := Keytab([]Credential{c}); err == nil || !strings.Contains(err.Error(), c.Principal) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

func TestPrincipalsFileIsSortedOneLinePerPrincipal(t *testing.T) {
	creds := []Credential{{"b@R", 2, "pw2"}, {"a@R", 1, "pw1"}}
	got := PrincipalsFile(creds)
	if string(got) != "a@R 1 pw1\nb@R 2 pw2\n" {
		t.Errorf("%q", got)
	}
	back, err := ParsePrincipals(got)
	if err != nil || len(back) != 2 || back[1] != creds[0] {
		t.Errorf("parsed back %+v, %v", back, err)
	}
}

// Files written before key versions existed still parse, as version 1; a bad line is named by
// number and never quoted (it holds a password).
func TestParsePrincipalsReadsOldFilesAndHidesPasswords(t *testing.T) {
	old, err := ParsePrincipals([]byte("a@R secret1\n\n"))
	if err != nil || len(old) != 1 || old[0] != (Credential{"a@R", 1, "secret1"}) {
		t.Errorf("%+v, %v", old, err)
	}
	for _, bad := range []string{"a@R x secret2", "a secret2", "a@R 1 secret2 more", "a@R 0 secret2"} {
		_, err := ParsePrincipals([]byte("a@R 1 ok\n" + bad + "\n"))
		if err == nil || !strings.Contains(err.Error(), "line 2") || strings.Contains(err.Error(), "secret2") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// A rotated principal's keytab holds both versions, and each is found by its number.
func TestKeytabHoldsEveryVersionGiven(t *testing.T) {
	b, err := Keytab([]Credential{{"hbase/h@R", 1, "old"}, {"hbase/h@R", 2, "new"}})
	if err != nil {
		t.Fatal(err)
	}
	kt := keytab.New()
	if err := kt.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	name := types.NewPrincipalName(3, "hbase/h")
	k1, v1, err1 := kt.GetEncryptionKey(name, "R", 1, EncryptionTypes[0])
	k2, v2, err2 := kt.GetEncryptionKey(name, "R", 2, EncryptionTypes[0])
	if err1 != nil || err2 != nil || v1 != 1 || v2 != 2 || string(k1.KeyValue) == string(k2.KeyValue) {
		t.Errorf("versions %d %d (%v %v): want two different keys 1 and 2", v1, v2, err1, err2)
	}
}

func TestPasswordsAreRandom(t *testing.T) {
	a, _ := NewPassword()
	b, _ := NewPassword()
	if a == b || len(a) < 40 {
		t.Errorf("%q %q", a, b)
	}
}
