package cassandra

import (
	"cmp"
	"fmt"
	"reflect"
	"strings"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/crypto"
)

// Step is the encryption one rolling restart configures: the effective profile itself, or a
// transitional stage on the way to it. A live cluster cannot jump from plaintext to TLS-only
// (or back) in one roll, because during the roll restarted and not-yet-restarted nodes must
// still talk to each other and to clients.
type Step struct {
	// Encryption the nodes run with in this step.
	Encryption v1alpha1.EffectiveEncryption `json:"encryption"`
	// InternodeInboundOnly: nodes accept TLS from peers but still connect to them in plaintext
	// (internode_encryption none, optional true). The first stage of enabling internode TLS and
	// the last of disabling it: no node may send TLS before every node can receive it.
	InternodeInboundOnly bool `json:"internodeInboundOnly,omitempty"`
	// TunnelStandby: every node runs the step's tunnel sidecar and is a member at its tunnel
	// address, but Cassandra stays on the pod's address. The stage before nodes move into a
	// tunnel and after they leave one: while nodes move one at a time, a node still outside
	// reaches a moved one through its own sidecar, and a moved one reaches the others at their
	// pod addresses (Cassandra dials without binding its listen address).
	TunnelStandby bool `json:"tunnelStandby,omitempty"`
}

// Target is the step that runs the effective profile as it is.
func Target(enc v1alpha1.EffectiveEncryption) Step { return Step{Encryption: enc} }

// internode levels: every roll moves at most one level, so that any two nodes in the middle of
// a roll (one level apart) can still reach each other.
const (
	levelPlaintext   = iota // sends and accepts plaintext only
	levelInboundOnly        // sends plaintext, accepts both
	levelOptional           // sends TLS, accepts both
	levelRequired           // sends and accepts TLS only
)

func (s Step) internodeLevel() int {
	switch {
	case s.Encryption.NodeToNode.Mode == v1alpha1.ChannelDisabled:
		return levelPlaintext
	case s.InternodeInboundOnly:
		return levelInboundOnly
	case s.Encryption.NodeToNode.Mode == v1alpha1.ChannelOptional:
		return levelOptional
	}
	return levelRequired
}

// client levels: Disabled, Optional, Required; clients choose while the channel is Optional.
func clientLevel(m v1alpha1.ChannelMode) int {
	return map[v1alpha1.ChannelMode]int{v1alpha1.ChannelDisabled: 0, v1alpha1.ChannelOptional: 1, v1alpha1.ChannelRequired: 2}[m]
}

// Next returns the step to roll out after applied on the way to desired; applied nil means a
// new cluster, which starts at the target directly. Next(x, desired) == Target(desired) once
// x is the target.
func Next(applied *Step, desired v1alpha1.EffectiveEncryption) Step {
	if applied == nil {
		return Target(desired)
	}
	if next, moving := nextTunnel(*applied, desired.VPN); moving {
		return next
	}
	next := Step{Encryption: desired}
	next.Encryption.ClientToNode = nextClient(applied.Encryption.ClientToNode, desired.ClientToNode)

	from, to := applied.internodeLevel(), Target(desired).internodeLevel()
	level := to
	switch {
	case from < to:
		level = from + 1
	case from > to:
		level = from - 1
	}
	// TLS settings for a transitional level: the desired ones on the way up, the applied ones
	// on the way down (the desired profile may have none).
	rr := desired.NodeToNode
	if to == levelPlaintext {
		rr = applied.Encryption.NodeToNode
	}
	switch level {
	case levelPlaintext:
		rr = desired.NodeToNode
	case levelInboundOnly:
		rr.Mode, next.InternodeInboundOnly = v1alpha1.ChannelOptional, true
	case levelOptional:
		rr.Mode = v1alpha1.ChannelOptional
	}
	if level >= levelInboundOnly && from >= levelInboundOnly {
		rr = crypto.Bridge(applied.Encryption.NodeToNode, rr)
	}
	next.Encryption.NodeToNode = rr
	return next
}

// nextTunnel is the next stage of a vpn change, which goes first and alone, since every node
// changes its address: leave the tunnel (standby), swap sidecars with nodes on their pod
// addresses, move into the new tunnel. moving is false once the tunnel is as desired.
func nextTunnel(applied Step, desired *v1alpha1.VPNSettings) (next Step, moving bool) {
	from, to := tunnelOf(applied.Encryption.VPN), tunnelOf(desired)
	next = applied
	switch {
	case reflect.DeepEqual(from, to) && applied.TunnelStandby:
		next.TunnelStandby = false
	case reflect.DeepEqual(from, to):
		return applied, false
	case from != nil && !applied.TunnelStandby:
		next.TunnelStandby = true
	default:
		next.Encryption.VPN, next.TunnelStandby = desired, to != nil
	}
	return next, true
}

// tunnelOf is a step's tunnel settings, nil without one (none, or not set).
func tunnelOf(v *v1alpha1.VPNSettings) *v1alpha1.VPNSettings {
	if !v.Enabled() {
		return nil
	}
	return v
}

// tunnelStage names a step's place in a tunnel: "none", "WireGuard NodeToNode" (nodes in it)
// or "WireGuard up, nodes on pod addresses" (standby).
func (s Step) tunnelStage() string {
	v := tunnelOf(s.Encryption.VPN)
	switch {
	case v == nil:
		return "none"
	case s.TunnelStandby:
		return string(v.Type) + " up, nodes on pod addresses"
	}
	return string(v.Type) + " " + string(cmp.Or(v.Scope, v1alpha1.VPNScopeNodeToNode))
}

func nextClient(applied, desired v1alpha1.EffectiveChannel) v1alpha1.EffectiveChannel {
	from, to := clientLevel(applied.Mode), clientLevel(desired.Mode)
	if from-to < 2 && to-from < 2 {
		return desired
	}
	step := desired
	if to == 0 {
		step = applied
	}
	step.Mode = v1alpha1.ChannelOptional
	return step
}

var internodeLevelNames = []string{"plaintext", "accept TLS, send plaintext", "TLS optional", "TLS required"}

// String names the step: "clientToNode Optional, nodeToNode accept TLS, send plaintext".
func (s Step) String() string {
	name := fmt.Sprintf("clientToNode %s, nodeToNode %s", s.Encryption.ClientToNode.Mode, internodeLevelNames[s.internodeLevel()])
	if tunnelOf(s.Encryption.VPN) != nil {
		name += ", vpn " + s.tunnelStage()
	}
	return name
}

// Describe says what a step changes, for Progressing and events: "clientToNode Disabled→Optional,
// nodeToNode plaintext→accept TLS".
func Describe(applied *Step, next Step) string {
	if applied == nil {
		return "initial configuration"
	}
	var parts []string
	if a, n := applied.Encryption.ClientToNode, next.Encryption.ClientToNode; a.Mode != n.Mode {
		parts = append(parts, fmt.Sprintf("clientToNode %s→%s", a.Mode, n.Mode))
	}
	if a, n := applied.internodeLevel(), next.internodeLevel(); a != n {
		parts = append(parts, fmt.Sprintf("nodeToNode %s→%s", internodeLevelNames[a], internodeLevelNames[n]))
	}
	if a, n := applied.tunnelStage(), next.tunnelStage(); a != n {
		parts = append(parts, fmt.Sprintf("vpn %s→%s", a, n))
	}
	if len(parts) == 0 {
		return "protocols, cipher suites or engine"
	}
	return strings.Join(parts, ", ")
}

// TLSEnabled reports whether any channel of the step uses TLS, i.e. whether pods mount
// certificates.
func (s Step) TLSEnabled() bool {
	return s.Encryption.ClientToNode.Mode != v1alpha1.ChannelDisabled || s.Encryption.NodeToNode.Mode != v1alpha1.ChannelDisabled
}
