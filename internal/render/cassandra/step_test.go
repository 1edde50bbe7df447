package cassandra

import (
	"reflect"
	"strings"
	"testing"

	"secured.dev/operator/api/v1alpha1"
)

func channel(mode v1alpha1.ChannelMode, suites ...string) v1alpha1.EffectiveChannel {
	if mode == v1alpha1.ChannelDisabled {
		return v1alpha1.EffectiveChannel{Mode: mode}
	}
	return v1alpha1.EffectiveChannel{Mode: mode, Protocols: []v1alpha1.TLSProtocol{"TLSv1.3"}, CipherSuites: suites,
		Engine: v1alpha1.TLSEngineJDK, ClientAuth: v1alpha1.ClientAuthRequired, Scope: v1alpha1.ScopeAll}
}

func profile(ar, rr v1alpha1.ChannelMode) v1alpha1.EffectiveEncryption {
	return v1alpha1.EffectiveEncryption{ClientToNode: channel(ar, "TLS_AES_128_GCM_SHA256"), NodeToNode: channel(rr, "TLS_AES_128_GCM_SHA256")}
}

func tunnelled(e v1alpha1.EffectiveEncryption, typ v1alpha1.VPNType) v1alpha1.EffectiveEncryption {
	e.VPN = &v1alpha1.VPNSettings{Type: typ, Scope: v1alpha1.VPNScopeNodeToNode}
	return e
}

// walk applies Next until the target is reached and returns the steps it rolled, described.
func walk(t *testing.T, from Step, to v1alpha1.EffectiveEncryption) []string {
	t.Helper()
	var steps []string
	applied := from
	for i := 0; ; i++ {
		if reflect.DeepEqual(applied, Target(to)) {
			return steps
		}
		if i == 6 {
			t.Fatalf("no convergence after 6 rolls: %v", steps)
		}
		next := Next(&applied, to)
		steps = append(steps, Describe(&applied, next))
		applied = next
	}
}

const (
	off = v1alpha1.ChannelDisabled
	opt = v1alpha1.ChannelOptional
	req = v1alpha1.ChannelRequired
)

func TestNextRollsOneLevelAtATime(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to v1alpha1.EffectiveEncryption
		want     []string
	}{
		{"enable both", profile(off, off), profile(req, req), []string{
			"clientToNode Disabled→Optional, nodeToNode plaintext→accept TLS, send plaintext",
			"clientToNode Optional→Required, nodeToNode accept TLS, send plaintext→TLS optional",
			"nodeToNode TLS optional→TLS required",
		}},
		{"disable both", profile(req, req), profile(off, off), []string{
			"clientToNode Required→Optional, nodeToNode TLS required→TLS optional",
			"clientToNode Optional→Disabled, nodeToNode TLS optional→accept TLS, send plaintext",
			"nodeToNode accept TLS, send plaintext→plaintext",
		}},
		{"client only", profile(off, req), profile(req, req), []string{"clientToNode Disabled→Optional", "clientToNode Optional→Required"}},
		{"one step is one roll", profile(opt, req), profile(req, req), []string{"clientToNode Optional→Required"}},
		{"tunnel on", profile(off, off), tunnelled(profile(off, off), v1alpha1.VPNWireGuard), []string{
			"vpn none→WireGuard up, nodes on pod addresses",
			"vpn WireGuard up, nodes on pod addresses→WireGuard NodeToNode",
		}},
		{"tunnel off", tunnelled(profile(off, off), v1alpha1.VPNOpenVPN), profile(off, off), []string{
			"vpn OpenVPN NodeToNode→OpenVPN up, nodes on pod addresses",
			"vpn OpenVPN up, nodes on pod addresses→none",
		}},
		{"another tunnel", tunnelled(profile(off, off), v1alpha1.VPNWireGuard), tunnelled(profile(off, off), v1alpha1.VPNOpenVPN), []string{
			"vpn WireGuard NodeToNode→WireGuard up, nodes on pod addresses",
			"vpn WireGuard up, nodes on pod addresses→OpenVPN up, nodes on pod addresses",
			"vpn OpenVPN up, nodes on pod addresses→OpenVPN NodeToNode",
		}},
		{"tunnel first, then TLS", profile(off, off), tunnelled(profile(off, req), v1alpha1.VPNWireGuard), []string{
			"vpn none→WireGuard up, nodes on pod addresses",
			"vpn WireGuard up, nodes on pod addresses→WireGuard NodeToNode",
			"nodeToNode plaintext→accept TLS, send plaintext",
			"nodeToNode accept TLS, send plaintext→TLS optional",
			"nodeToNode TLS optional→TLS required",
		}},
		{"suite change", profile(req, req), v1alpha1.EffectiveEncryption{ClientToNode: channel(req, "TLS_AES_256_GCM_SHA384"), NodeToNode: channel(req, "TLS_AES_128_GCM_SHA256")},
			[]string{"protocols, cipher suites or engine"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := walk(t, Target(tc.from), tc.to); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("rolls:\n%q\nwant:\n%q", got, tc.want)
			}
		})
	}
}

// Transitional steps keep TLS material in place: on the way down the applied settings, on the
// way up the desired ones.
func TestTransitionalStepsKeepTLSSettings(t *testing.T) {
	from := Target(profile(req, req))
	down := Next(&from, profile(off, off))
	if down.Encryption.NodeToNode.Mode != opt || len(down.Encryption.NodeToNode.CipherSuites) == 0 ||
		down.Encryption.ClientToNode.Mode != opt || len(down.Encryption.ClientToNode.CipherSuites) == 0 {
		t.Errorf("first step down %+v must be Optional with the applied suites", down.Encryption)
	}
	plain := Target(profile(off, off))
	up := Next(&plain, profile(req, req))
	if !up.InternodeInboundOnly || up.Encryption.NodeToNode.CipherSuites[0] != "TLS_AES_128_GCM_SHA256" {
		t.Errorf("first step up %+v must accept TLS with the desired suites", up)
	}
}

// Internode suites that change with nothing in common go through the union, or restarted nodes
// could not handshake with the others.
func TestDisjointInternodeSuitesBridge(t *testing.T) {
	from := Target(profile(req, req))
	to := v1alpha1.EffectiveEncryption{ClientToNode: from.Encryption.ClientToNode, NodeToNode: channel(req, "TLS_CHACHA20_POLY1305_SHA256")}
	first := Next(&from, to)
	if got := first.Encryption.NodeToNode.CipherSuites; !reflect.DeepEqual(got, []string{"TLS_AES_128_GCM_SHA256", "TLS_CHACHA20_POLY1305_SHA256"}) {
		t.Errorf("bridge suites %v; want the union", got)
	}
	if second := Next(&first, to); !reflect.DeepEqual(second, Target(to)) {
		t.Errorf("after the bridge the target rolls: %+v", second)
	}
}

func TestNewClusterStartsAtTarget(t *testing.T) {
	if got := Next(nil, profile(req, req)); !reflect.DeepEqual(got, Target(profile(req, req))) {
		t.Errorf("new cluster step %+v", got)
	}
}

func TestInboundOnlyRendersAcceptWithoutSending(t *testing.T) {
	plain := Target(profile(off, off))
	out, err := Config(topology, Next(&plain, profile(req, req)))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"internode_encryption: none", "optional: true", "outbound_keystore: /etc/cassandra/tls/tls-combined.pem"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("inbound-only step lacks %q:\n%s", want, out)
		}
	}
}
