package vpn

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"

	"secured.dev/operator/api/v1alpha1"
	goldenfile "secured.dev/operator/internal/test/golden"
)

var nodeNames = []string{"ledger-0", "ledger-1", "ledger-2"}

func hosts(n int) []string {
	var out []string
	for i := range n {
		out = append(out, nodeNames[i]+".ledger-nodes.shop.svc.cluster.local")
	}
	return out
}

func plan(t *testing.T, s v1alpha1.VPNSettings, nodes int) Plan {
	t.Helper()
	p, err := NewPlan(s, nodeNames[:nodes], hosts(nodes))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Fixed keys make the configurations golden; real ones come from Ensure.
var fixedKeys = Keys{WireGuard: map[string]string{
	"ledger-0": "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=",
	"ledger-1": "WAmgVYXkbT2bCtdcDwolI88/iVi/aV3/PHcUBTQSYmo=",
	"ledger-2": "8MoGkDk5GoJ8Q9U3I4JfhwPnNeF+dLEnAKQcFdJlHlk=",
}}

func TestWireGuardConfigs(t *testing.T) {
	p := plan(t, v1alpha1.VPNSettings{Type: v1alpha1.VPNWireGuard}, 3)
	data, _, err := SecretData(p, fixedKeys, []byte("key server"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := data[WireGuardFile("client-0")]; ok {
		t.Error("a tunnel for node-to-node traffic has client slots")
	}
	goldenfile.Check(t, "wireguard.ledger-0.conf", data[WireGuardFile("ledger-0")])
	if string(data[AddressesFile]) != "ledger-0 100.80.0.1\nledger-1 100.80.0.2\nledger-2 100.80.0.3\n" {
		t.Errorf("addresses:\n%s", data[AddressesFile])
	}
}

// Clients join only when the scope includes client traffic; they peer with nodes, not with
// each other, and only they keep their path open.
func TestOpenVPNConfigs(t *testing.T) {
	p := plan(t, v1alpha1.VPNSettings{Type: v1alpha1.VPNOpenVPN, Scope: v1alpha1.VPNScopeAll, OpenVPN: &v1alpha1.OpenVPNSettings{Cipher: "CHACHA20-POLY1305"}}, 2)
	if len(p.Members) != 2+ClientSlots || p.Members[2].Address.String() != "100.80.255.1" {
		t.Fatalf("members %+v", p.Members)
	}
	keys, changed, err := Ensure(p, Keys{}, time.Now())
	if err != nil || !changed {
		t.Fatalf("Ensure: %v, changed %v", err, changed)
	}
	data, _, err := SecretData(p, keys, []byte("key server"))
	if err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, "openvpn.ledger-0--ledger-1.conf", data[OpenVPNFile("ledger-0", "ledger-1")])
	goldenfile.Check(t, "openvpn.client-0--ledger-1.conf", data[OpenVPNFile("client-0", "ledger-1")])
	if _, ok := data[OpenVPNFile("client-0", "client-1")]; ok {
		t.Error("clients tunnel to each other")
	}
	var tunnels int
	for name := range data {
		if strings.HasPrefix(name, "ledger-1--") {
			tunnels++
		}
	}
	if tunnels != 1+ClientSlots {
		t.Errorf("ledger-1 has %d tunnels, want one per other member", tunnels)
	}
	if pp := p.Ports(); pp.Port.IntVal != OpenVPNBasePort || *pp.EndPort != int32(OpenVPNBasePort+len(p.Members)-1) {
		t.Errorf("ports %+v", pp)
	}
}

// Keys survive reconciles: Ensure keeps what the Secret holds, adds keys for new members and
// drops those of members that left; a new CA reissues every certificate.
func TestEnsureKeepsKeys(t *testing.T) {
	for _, typ := range []v1alpha1.VPNType{v1alpha1.VPNWireGuard, v1alpha1.VPNOpenVPN} {
		t.Run(string(typ), func(t *testing.T) {
			now := time.Now()
			three := plan(t, v1alpha1.VPNSettings{Type: typ}, 3)
			keys, _, err := Ensure(three, Keys{}, now)
			if err != nil {
				t.Fatal(err)
			}
			public, private, err := SecretData(three, keys, nil)
			if err != nil {
				t.Fatal(err)
			}
			read := KeysFrom(three, public, private)
			if again, changed, err := Ensure(three, read, now); err != nil || changed || string(fingerprint(again, "ledger-2")) != string(fingerprint(keys, "ledger-2")) {
				t.Fatalf("a second Ensure changed the keys (%v, %v)", changed, err)
			}
			two := plan(t, v1alpha1.VPNSettings{Type: typ}, 2)
			shrunk, changed, err := Ensure(two, read, now)
			if err != nil || !changed || fingerprint(shrunk, "ledger-2") != nil || string(fingerprint(shrunk, "ledger-1")) != string(fingerprint(keys, "ledger-1")) {
				t.Errorf("scaling down: changed %v, %v; ledger-2 must go and ledger-1 stay", changed, err)
			}
			if typ == v1alpha1.VPNOpenVPN {
				expiring, changed, err := Ensure(three, read, now.Add(memberLifetime-renewBefore/2))
				if err != nil || !changed || string(fingerprint(expiring, "ledger-0")) == string(fingerprint(keys, "ledger-0")) {
					t.Errorf("a certificate within %s of expiry is not reissued (%v, %v)", renewBefore, changed, err)
				}
			}
		})
	}
}

func fingerprint(k Keys, member string) []byte {
	if w, ok := k.WireGuard[member]; ok {
		return []byte(w)
	}
	if c, ok := k.Certs[member]; ok {
		return c.CertPEM
	}
	return nil
}

// The public key we put in peers' configurations is the one wg derives from the private key.
func TestPublicKeyMatchesWireGuardTools(t *testing.T) {
	wg, err := exec.LookPath("wg")
	if err != nil {
		t.Fatalf("wg is not installed (make prereqs installs wireguard-tools): %v", err)
	}
	priv, err := NewWireGuardKey()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(wg, "pubkey")
	cmd.Stdin = strings.NewReader(priv)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := PublicKey(priv); got != strings.TrimSpace(string(out)) {
		t.Errorf("PublicKey %s, wg pubkey %s", got, out)
	}
	if _, err := PublicKey("not a key"); err == nil {
		t.Error("a malformed key has a public key")
	}
}

func TestPodSecurityProblem(t *testing.T) {
	if msg := PodSecurityProblem("shop", map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}); !strings.Contains(msg, "pod-security.kubernetes.io/enforce=privileged") || !strings.Contains(msg, "NET_ADMIN") {
		t.Errorf("baseline: %q", msg)
	}
	for _, labels := range []map[string]string{nil, {"pod-security.kubernetes.io/enforce": "privileged"}, {"pod-security.kubernetes.io/warn": "restricted"}} {
		if msg := PodSecurityProblem("shop", labels); msg != "" {
			t.Errorf("%v: %q", labels, msg)
		}
	}
}

// Every member mounts the public Secret, so it must hold no private key: not a member's, not
// OpenVPN's CA's. The keys Secret holds each of them once, and reading both back gives the
// same keys.
func TestPublicSecretHoldsNoPrivateKey(t *testing.T) {
	for _, typ := range []v1alpha1.VPNType{v1alpha1.VPNWireGuard, v1alpha1.VPNOpenVPN} {
		t.Run(string(typ), func(t *testing.T) {
			p := plan(t, v1alpha1.VPNSettings{Type: typ, Scope: v1alpha1.VPNScopeAll}, 3)
			keys, _, err := Ensure(p, Keys{}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			public, private, err := SecretData(p, keys, []byte("key server certificate"))
			if err != nil {
				t.Fatal(err)
			}
			secrets := map[string][]byte{}
			for _, m := range p.Members {
				if len(private[KeyFile(m.Name)]) == 0 {
					t.Errorf("the keys Secret lacks %s's key", m.Name)
				}
				secrets[m.Name] = []byte(strings.TrimSpace(string(private[KeyFile(m.Name)])))
			}
			if typ == v1alpha1.VPNOpenVPN {
				secrets["the CA"] = keys.CA.KeyPEM
			}
			for file, b := range public {
				for who, key := range secrets {
					if bytes.Contains(b, key) {
						t.Errorf("the public Secret's %s holds %s's private key", file, who)
					}
				}
			}
			if len(public[AddressesFile]) == 0 || string(public[KeyServerCAFile]) != "key server certificate" || (typ == v1alpha1.VPNOpenVPN && len(public[CAFile]) == 0) {
				t.Error("the public Secret lacks the address table or a certificate")
			}
			if len(private) != len(secrets) {
				t.Errorf("the keys Secret holds %d files, want the %d keys", len(private), len(secrets))
			}
			if _, changed, err := Ensure(p, KeysFrom(p, public, private), time.Now()); err != nil || changed {
				t.Errorf("keys read back from both Secrets changed (%v, %v)", changed, err)
			}
		})
	}
}
