package hbase

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"secured.dev/operator/api/v1alpha1"
)

func tlsProfile(ar, rr v1alpha1.ChannelMode, protocols ...v1alpha1.TLSProtocol) *v1alpha1.EncryptionSettings {
	s := &v1alpha1.EncryptionSettings{
		ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: ar}},
		NodeToNode:   &v1alpha1.NodeToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: rr}},
	}
	if ar != v1alpha1.ChannelDisabled && len(protocols) > 0 {
		s.ClientToNode.TLS = &v1alpha1.TLSSettings{Protocols: protocols}
	}
	return s
}

// walk rolls step by step from applied to desired and returns the stages passed, checking
// that every step renders and that the walk ends at desired.
func walk(t *testing.T, applied, desired v1alpha1.EffectiveEncryption) []string {
	t.Helper()
	out := []string{StageName(applied)}
	for range 10 {
		next := Next(&applied, desired)
		if _, err := Files(topology, next); err != nil {
			t.Fatalf("step %s does not render: %v", StageName(next), err)
		}
		if SameStep(next, applied) {
			if !SameStep(next, desired) {
				t.Fatalf("stuck at %s before reaching the target", StageName(next))
			}
			return out
		}
		if d := stage(next) - stage(applied); d > 1 || d < -1 {
			t.Fatalf("a roll jumped from %s to %s", StageName(applied), StageName(next))
		}
		out = append(out, StageName(next))
		applied = next
	}
	t.Fatal("no convergence in 10 steps")
	return nil
}

func TestNextMovesOneTLSStageAtATime(t *testing.T) {
	plain := resolve(t, tlsProfile(v1alpha1.ChannelDisabled, v1alpha1.ChannelDisabled))
	required := resolve(t, tlsProfile(v1alpha1.ChannelRequired, v1alpha1.ChannelRequired, v1alpha1.TLSv13))
	accepting := resolve(t, tlsProfile(v1alpha1.ChannelOptional, v1alpha1.ChannelDisabled, v1alpha1.TLSv13))
	for _, tc := range []struct {
		name     string
		from, to v1alpha1.EffectiveEncryption
		want     []string
	}{
		{"enable", plain, required, []string{"plaintext", "TLS accepted, peers plaintext", "TLS accepted, peers TLS", "TLS required"}},
		{"disable", required, plain, []string{"TLS required", "TLS accepted, peers TLS", "TLS accepted, peers plaintext", "plaintext"}},
		{"adjacent", plain, accepting, []string{"plaintext", "TLS accepted, peers plaintext"}},
		{"to accepting from required", required, accepting, []string{"TLS required", "TLS accepted, peers TLS", "TLS accepted, peers plaintext"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := walk(t, tc.from, tc.to); !slices.Equal(got, tc.want) {
				t.Errorf("stages %q, want %q", got, tc.want)
			}
		})
	}
}

// Transitional stages carry real TLS settings: the desired ones on the way up, the applied
// ones on the way down, and peers use the servers' (one RPC port, one configuration).
func TestTransitionalStagesKeepTLSSettings(t *testing.T) {
	plain := resolve(t, tlsProfile(v1alpha1.ChannelDisabled, v1alpha1.ChannelDisabled))
	tls12 := resolve(t, tlsProfile(v1alpha1.ChannelRequired, v1alpha1.ChannelRequired, v1alpha1.TLSv12))
	up := Next(&plain, tls12)
	if fmt.Sprint(up.ClientToNode.Protocols) != "[TLSv1.2]" || len(up.ClientToNode.CipherSuites) == 0 {
		t.Errorf("first step up %+v: want the desired TLS settings", up.ClientToNode)
	}
	second := Next(&up, tls12)
	if fmt.Sprint(second.NodeToNode.Protocols, second.NodeToNode.CipherSuites) != fmt.Sprint(second.ClientToNode.Protocols, second.ClientToNode.CipherSuites) {
		t.Errorf("peers %+v differ from the servers' %+v", second.NodeToNode, second.ClientToNode)
	}
	down := Next(&tls12, plain)
	if fmt.Sprint(down.ClientToNode.Protocols) != "[TLSv1.2]" || down.ClientToNode.Mode != v1alpha1.ChannelOptional {
		t.Errorf("first step down %+v: want the applied TLS, Optional", down.ClientToNode)
	}
}

// Moving from TLS 1.2-only to TLS 1.3-only passes through both, so restarted and waiting
// processes share a protocol.
func TestDisjointProtocolsBridge(t *testing.T) {
	tls12 := resolve(t, tlsProfile(v1alpha1.ChannelRequired, v1alpha1.ChannelRequired, v1alpha1.TLSv12))
	tls13 := resolve(t, tlsProfile(v1alpha1.ChannelRequired, v1alpha1.ChannelRequired, v1alpha1.TLSv13))
	bridge := Next(&tls12, tls13)
	if len(bridge.ClientToNode.Protocols) != 2 || len(bridge.NodeToNode.Protocols) != 2 || bridge.ClientToNode.Mode != v1alpha1.ChannelRequired {
		t.Errorf("bridge %+v / %+v: want TLS required with both protocols on both", bridge.ClientToNode, bridge.NodeToNode)
	}
	if final := Next(&bridge, tls13); !SameStep(final, tls13) {
		t.Errorf("after the bridge the target rolls, got %+v", final.ClientToNode)
	}
}

// Kerberos and SASL change with the first step; a new cluster starts at its target.
func TestSecurityChangesWithTheFirstStep(t *testing.T) {
	plain := resolve(t, tlsProfile(v1alpha1.ChannelDisabled, v1alpha1.ChannelDisabled))
	k := tlsProfile(v1alpha1.ChannelRequired, v1alpha1.ChannelRequired, v1alpha1.TLSv13)
	k.HBase = &v1alpha1.HBaseSecurity{Authentication: v1alpha1.AuthenticationKerberos}
	kerberized := resolve(t, k)
	first := Next(&plain, kerberized)
	if first.HBase.Authentication != v1alpha1.AuthenticationKerberos || stage(first) != stageAcceptTLS {
		t.Errorf("first step: auth %s stage %s", first.HBase.Authentication, StageName(first))
	}
	if d := Describe(&plain, first); d != "RPC TLS plaintext → TLS accepted, peers plaintext, Kerberos, SASL or HDFS encryption settings" {
		t.Errorf("Describe = %q", d)
	}
	if !SameStep(Next(nil, kerberized), kerberized) {
		t.Error("a new cluster does not start at its target")
	}
}

// A tunnel renames every server, so it comes and goes in one step, and says so.
func TestATunnelChangesInOneStep(t *testing.T) {
	plain := resolve(t, tlsProfile(v1alpha1.ChannelDisabled, v1alpha1.ChannelDisabled))
	tunnelled := resolve(t, &v1alpha1.EncryptionSettings{VPN: &v1alpha1.VPNSettings{Type: v1alpha1.VPNOpenVPN}})
	for _, c := range []struct{ from, to v1alpha1.EffectiveEncryption }{{plain, tunnelled}, {tunnelled, plain}} {
		if next := Next(&c.from, c.to); !SameStep(next, c.to) {
			t.Errorf("%s → %s took a step between", tunnelName(c.from.VPN), tunnelName(c.to.VPN))
		}
	}
	if d := Describe(&plain, tunnelled); d != "tunnel none → OpenVPN (AES-256-GCM), every server renamed to its new address" {
		t.Errorf("Describe = %q", d)
	}
}

// A SASL level changes on a Kerberos cluster in three rolls, each rendered as the lists Hadoop
// and HBase read (both levels accepted, the old one asked for; both, the new one asked for; the
// new one), while TLS moves its own stages in the same rolls.
func TestSASLLevelsChangeOneRollAtATime(t *testing.T) {
	k := func(level v1alpha1.SASLProtection, tls v1alpha1.ChannelMode) v1alpha1.EffectiveEncryption {
		s := tlsProfile(tls, tls, v1alpha1.TLSv13)
		s.HBase = &v1alpha1.HBaseSecurity{Authentication: v1alpha1.AuthenticationKerberos, HBaseRPCProtection: level, HadoopRPCProtection: level,
			DataTransfer: &v1alpha1.HDFSDataTransfer{Protection: level}}
		return resolve(t, s)
	}
	applied, desired := k(v1alpha1.ProtectionAuthentication, v1alpha1.ChannelDisabled), k(v1alpha1.ProtectionPrivacy, v1alpha1.ChannelRequired)
	var levels, described []string
	for range 10 {
		next := Next(&applied, desired)
		if SameStep(next, applied) {
			break
		}
		files, err := Files(topology, next)
		if err != nil {
			t.Fatalf("step %s does not render: %v", next.HBase.HBaseRPCProtection, err)
		}
		for _, want := range []string{"<name>hbase.rpc.protection</name><value>" + lower(next.HBase.HBaseRPCProtection) + "</value>",
			"<name>hadoop.rpc.protection</name><value>" + lower(next.HBase.HadoopRPCProtection) + "</value>",
			"<name>dfs.data.transfer.protection</name><value>" + lower(next.HBase.DataTransfer.Protection) + "</value>"} {
			if !strings.Contains(files["hbase-site.xml"]+files["core-site.xml"]+files["hdfs-site.xml"], want) {
				t.Errorf("step %s: the files lack %s", next.HBase.HBaseRPCProtection, want)
			}
		}
		if next.HBase.HadoopRPCProtection != next.HBase.HBaseRPCProtection || next.HBase.DataTransfer.Protection != next.HBase.HBaseRPCProtection {
			t.Errorf("the three levels move apart: %+v", next.HBase)
		}
		levels = append(levels, string(next.HBase.HBaseRPCProtection)+" "+StageName(next))
		described = append(described, Describe(&applied, next))
		applied = next
	}
	if want := []string{"Authentication,Privacy TLS accepted, peers plaintext", "Privacy,Authentication TLS accepted, peers TLS", "Privacy TLS required"}; !slices.Equal(levels, want) {
		t.Errorf("steps %q, want %q", levels, want)
	}
	if want := "RPC TLS plaintext → TLS accepted, peers plaintext, HBase RPC SASL authentication → authentication or privacy, authentication asked, " +
		"Hadoop RPC SASL authentication → authentication or privacy, authentication asked, HDFS data transfer SASL authentication → authentication or privacy, authentication asked"; described[0] != want {
		t.Errorf("Describe = %q\nwant       %q", described[0], want)
	}

	// A change of mind mid-way: every process asks for the old level still, which is then the
	// target in one roll; a third level replaces the one not asked for.
	mid := k(v1alpha1.ProtectionAuthentication, v1alpha1.ChannelDisabled)
	mid.HBase.HBaseRPCProtection = "Authentication,Privacy"
	if got := Next(&mid, k(v1alpha1.ProtectionAuthentication, v1alpha1.ChannelDisabled)).HBase.HBaseRPCProtection; got != v1alpha1.ProtectionAuthentication {
		t.Errorf("back to authentication from authentication,privacy: %s", got)
	}
	if got := Next(&mid, k(v1alpha1.ProtectionIntegrity, v1alpha1.ChannelDisabled)).HBase.HBaseRPCProtection; got != "Authentication,Integrity" {
		t.Errorf("to integrity from authentication,privacy: %s", got)
	}

	// Kerberos switched on or off has no lists: it changes with the first step.
	simple := resolve(t, tlsProfile(v1alpha1.ChannelDisabled, v1alpha1.ChannelDisabled))
	if got := Next(&simple, desired).HBase.HBaseRPCProtection; got != v1alpha1.ProtectionPrivacy {
		t.Errorf("Kerberos switched on: first step's level %s", got)
	}
}

// An application client started at either end of a live level change shares a level with the
// servers of every step of it, so it keeps working through the rolls; at rest it asks for the
// datastore's level first.
func TestClientLevelsMeetEveryStepOfALevelChange(t *testing.T) {
	all := []v1alpha1.SASLProtection{v1alpha1.ProtectionAuthentication, v1alpha1.ProtectionIntegrity, v1alpha1.ProtectionPrivacy}
	for _, from := range all {
		for _, to := range all {
			applied, desired := from, to
			servers := []v1alpha1.SASLProtection{applied}
			for applied != desired {
				applied = nextLevel(applied, desired)
				servers = append(servers, applied)
			}
			for _, start := range []v1alpha1.SASLProtection{from, to} {
				client := strings.Split(ClientLevels(lower(start)), ",")
				if client[0] != lower(start) || len(client) != 3 {
					t.Errorf("client at %s asks for %v", start, client)
				}
				for _, step := range servers {
					if !slices.ContainsFunc(strings.Split(lower(step), ","), func(l string) bool { return slices.Contains(client, l) }) {
						t.Errorf("%s → %s: a client started at %s (%v) shares no level with servers at %s", from, to, start, client, step)
					}
				}
			}
		}
	}
}
