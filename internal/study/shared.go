package study

import (
	"fmt"
	"strings"

	"secured.dev/operator/api/v1alpha1"
)

// Shared: one datastore per acceleration and size serves the baseline in plaintext and the
// other profile over TLS at once (spec.datastores).
func Shared(spec *v1alpha1.TradeoffStudySpec) bool {
	return spec.Datastores == v1alpha1.DatastoresShared
}

// sharesDatastores: the study's cells of one acceleration and size share a datastore.
func sharesDatastores(spec *v1alpha1.TradeoffStudySpec) bool {
	return Switched(spec) || Shared(spec)
}

// SharedProfile is the profile a Shared study's datastores run: the matrix's one profile
// other than the baseline (the API server admits exactly two).
func SharedProfile(spec *v1alpha1.TradeoffStudySpec) string {
	for _, p := range spec.Matrix.Profiles {
		if p != spec.Matrix.Baseline {
			return p
		}
	}
	return spec.Matrix.Baseline
}

// Protection is what a profile protects: whether its client-to-node channel speaks TLS, and
// what else it protects, by spec field. A Shared study needs both: its baseline runs connect
// in plaintext to nodes that run the other profile, so they pay for everything else it does.
func Protection(s *v1alpha1.EncryptionSettings) (clientTLS bool, beyond []string) {
	if c := s.ClientToNode; c != nil && c.Mode != "" && c.Mode != v1alpha1.ChannelDisabled {
		clientTLS = true
	}
	if n := s.NodeToNode; n != nil && n.Mode != "" && n.Mode != v1alpha1.ChannelDisabled {
		beyond = append(beyond, "nodeToNode")
	}
	if s.HBase != nil {
		beyond = append(beyond, "hbase")
	}
	if s.VPN.Enabled() {
		beyond = append(beyond, "vpn")
	}
	if s.AtRest != nil {
		beyond = append(beyond, "atRest")
	}
	if s.ClientSide != nil {
		beyond = append(beyond, "clientSide")
	}
	return clientTLS, beyond
}

// NotShareable says why a Shared study's profiles cannot share their nodes, "" when they can
// or the study is not Shared. A plaintext run on nodes that encrypt anything but the client
// channel would pay for it too, and the overhead would hide it.
func NotShareable(spec *v1alpha1.TradeoffStudySpec, profiles map[string]Profile) string {
	if !Shared(spec) {
		return ""
	}
	base := profiles[spec.Matrix.Baseline]
	if protects := base.Beyond; base.ClientTLS || len(protects) > 0 {
		if base.ClientTLS {
			protects = append([]string{"clientToNode"}, protects...)
		}
		return fmt.Sprintf("spec.datastores Shared: baseline %s protects %s, which its runs on the shared nodes cannot leave out; use a baseline that protects nothing, such as plaintext, or set spec.datastores to PerCell",
			spec.Matrix.Baseline, strings.Join(protects, ", "))
	}
	name := SharedProfile(spec)
	switch p := profiles[name]; {
	case !p.ClientTLS:
		return fmt.Sprintf("spec.datastores Shared: profile %s leaves the client-to-node channel in plaintext, so its runs would measure what the baseline's do; choose a profile with clientToNode TLS, or set spec.datastores to PerCell",
			name)
	case len(p.Beyond) > 0:
		return fmt.Sprintf("spec.datastores Shared: profile %s also protects %s, which the baseline's plaintext runs on the same nodes would pay for too; choose a profile that protects only clientToNode (such as tls13-client-only), or set spec.datastores to PerCell or Switched",
			name, strings.Join(p.Beyond, ", "))
	}
	return ""
}
