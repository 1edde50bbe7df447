package hbase

import (
	"encoding/json"
	"fmt"
	"strings"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/crypto"
)

// StepAnnotation on the ConfigMap records the encryption its files configure: the effective
// profile, or a transitional step on the way to it. The ConfigMap is written before any
// StatefulSet, so it is what every role was last told to run.
const StepAnnotation = "datastore.secured.dev/step"

// RPC TLS stages of a live cluster. One RPC port serves clients and peers, and a roll restarts
// Masters and RegionServers one by one, so every roll moves at most one stage: any two
// processes one stage apart still reach each other, and clients that use TLS whenever the
// servers offer it (ClientProperties) keep working throughout.
const (
	stagePlaintext   = iota // servers speak plaintext only
	stageAcceptTLS          // servers accept TLS and plaintext; peers call in plaintext
	stageSendTLS            // servers accept both; peers call with TLS
	stageTLSRequired        // TLS only
)

var stageNames = []string{"plaintext", "TLS accepted, peers plaintext", "TLS accepted, peers TLS", "TLS required"}

func stage(e v1alpha1.EffectiveEncryption) int {
	switch {
	case e.ClientToNode.Mode == v1alpha1.ChannelDisabled:
		return stagePlaintext
	case e.NodeToNode.Mode == v1alpha1.ChannelDisabled:
		return stageAcceptTLS
	case e.ClientToNode.Mode == v1alpha1.ChannelOptional:
		return stageSendTLS
	}
	return stageTLSRequired
}

// Next is the encryption to roll out after applied on the way to desired; applied nil means a
// new cluster, which starts at desired. RPC TLS moves one stage per roll, and so does each SASL
// level while Kerberos stays on (nextLevel); Kerberos itself and HDFS encryption change with the
// first step, the roles that read them restarting together (README, "Changing security on a
// live HBase").
func Next(applied *v1alpha1.EffectiveEncryption, desired v1alpha1.EffectiveEncryption) v1alpha1.EffectiveEncryption {
	if applied == nil {
		return desired
	}
	next := nextTLS(*applied, desired)
	if a, d := applied.HBase, desired.HBase; kerberized(a) && kerberized(d) {
		h := *d
		h.HBaseRPCProtection = nextLevel(a.HBaseRPCProtection, d.HBaseRPCProtection)
		h.HadoopRPCProtection = nextLevel(a.HadoopRPCProtection, d.HadoopRPCProtection)
		if a.DataTransfer != nil && d.DataTransfer != nil {
			dt := *d.DataTransfer
			dt.Protection = nextLevel(a.DataTransfer.Protection, d.DataTransfer.Protection)
			h.DataTransfer = &dt
		}
		next.HBase = &h
	}
	return next
}

func kerberized(h *v1alpha1.HBaseSecurity) bool {
	return h != nil && h.Authentication == v1alpha1.AuthenticationKerberos
}

// nextLevel moves a SASL quality of protection one roll toward desired. Hadoop's and HBase's
// SASL take a list of levels: a server accepts any level of its list, and a caller asks for the
// first of its own list that the server accepts. So a level changes in three rolls, after each
// of which any two processes, rolled or not, still agree on one: both levels accepted with the
// old one asked for, both with the new one asked for, the new one alone. Only such transitional
// steps hold a list ("Authentication,Privacy", the asked-for level first); the API admits one
// level. A list whose first level is the desired one needs one roll more: every process asks
// for that level already.
func nextLevel(applied, desired v1alpha1.SASLProtection) v1alpha1.SASLProtection {
	levels := strings.Split(string(applied), ",")
	switch {
	case applied == "" || desired == "" || levels[0] == string(desired):
		return desired
	case len(levels) > 1 && levels[1] == string(desired):
		return desired + "," + v1alpha1.SASLProtection(levels[0])
	}
	return v1alpha1.SASLProtection(levels[0]) + "," + desired
}

// ClientLevels is what an application client of a managed datastore asks for on HBase RPC, a
// level of the API's (lower case, as rpcClient writes it) first and then the others. A server
// accepts only the levels of its own list, so a datastore at rest is reached at its level;
// while a live change rolls the level, the servers of either revision accept one of the
// client's, and a connection the roll breaks is made again at the level its new server
// accepts, as a client able to use TLS keeps working from Optional to Required. Kerberos
// protects the negotiation: the server's offer comes wrapped in the session's key, so no one
// without the service's keytab can make the client settle for less than the server asks.
func ClientLevels(level string) string {
	levels := []string{level}
	for _, l := range []v1alpha1.SASLProtection{v1alpha1.ProtectionPrivacy, v1alpha1.ProtectionIntegrity, v1alpha1.ProtectionAuthentication} {
		if lower(l) != level {
			levels = append(levels, lower(l))
		}
	}
	return strings.Join(levels, ",")
}

// nextTLS moves RPC TLS at most one stage toward desired, bridging protocols and suites that
// the applied and desired settings do not share.
func nextTLS(applied, desired v1alpha1.EffectiveEncryption) v1alpha1.EffectiveEncryption {
	from, to := stage(applied), stage(desired)
	next := desired
	at := to
	switch {
	case to > from+1:
		at = from + 1
	case to < from-1:
		at = from - 1
	}
	if at != to {
		// TLS settings of a transitional stage: the desired ones on the way up, the applied
		// ones on the way down (the desired profile may have none).
		tls := desired.ClientToNode
		if to < from {
			tls = applied.ClientToNode
		}
		next.ClientToNode, next.NodeToNode = tls, tls
		next.ClientToNode.Mode, next.NodeToNode.Mode = v1alpha1.ChannelOptional, v1alpha1.ChannelRequired
		if at == stageAcceptTLS {
			next.NodeToNode = v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelDisabled}
		}
	}
	if at >= stageAcceptTLS && from >= stageAcceptTLS {
		next.ClientToNode = crypto.Bridge(applied.ClientToNode, next.ClientToNode)
		if next.NodeToNode.Mode != v1alpha1.ChannelDisabled {
			mode := next.NodeToNode.Mode
			next.NodeToNode, next.NodeToNode.Mode = next.ClientToNode, mode
		}
	}
	return next
}

// SameStep: a and b configure the cluster alike (compared as the annotation stores them).
func SameStep(a, b v1alpha1.EffectiveEncryption) bool { return StepKey(a) == StepKey(b) }

// StepKey identifies a step as the annotation stores it.
func StepKey(e v1alpha1.EffectiveEncryption) string {
	b, _ := json.Marshal(e) // plain structs: marshalling cannot fail
	return string(b)
}

// Describe says what a step changes, for Progressing and events: "RPC TLS plaintext → TLS
// accepted, peers plaintext".
func Describe(applied *v1alpha1.EffectiveEncryption, next v1alpha1.EffectiveEncryption) string {
	if applied == nil {
		return "initial configuration"
	}
	var parts []string
	if a, n := stage(*applied), stage(next); a != n {
		parts = append(parts, fmt.Sprintf("RPC TLS %s → %s", stageNames[a], stageNames[n]))
	}
	if a, n := applied.HBase, next.HBase; a != nil && n != nil && (!kerberized(a) || !kerberized(n)) {
		if !SameStep(v1alpha1.EffectiveEncryption{HBase: a}, v1alpha1.EffectiveEncryption{HBase: n}) {
			parts = append(parts, "Kerberos, SASL or HDFS encryption settings")
		}
	} else if a != nil && n != nil {
		for _, l := range []struct {
			name string
			a, n v1alpha1.SASLProtection
		}{{"HBase RPC", a.HBaseRPCProtection, n.HBaseRPCProtection}, {"Hadoop RPC", a.HadoopRPCProtection, n.HadoopRPCProtection},
			{"HDFS data transfer", dataTransferLevel(a), dataTransferLevel(n)}} {
			if l.a != l.n {
				parts = append(parts, fmt.Sprintf("%s SASL %s → %s", l.name, levelName(l.a), levelName(l.n)))
			}
		}
		if !SameStep(v1alpha1.EffectiveEncryption{HBase: withoutLevels(a)}, v1alpha1.EffectiveEncryption{HBase: withoutLevels(n)}) {
			parts = append(parts, "Kerberos or HDFS encryption settings")
		}
	}
	if a, n := tunnelName(applied.VPN), tunnelName(next.VPN); a != n {
		parts = append(parts, fmt.Sprintf("tunnel %s → %s, every server renamed to its new address", a, n))
	}
	if len(parts) == 0 {
		return "TLS protocols or cipher suites"
	}
	return strings.Join(parts, ", ")
}

// tunnelName: the VPN type (and OpenVPN's cipher), or "none".
func tunnelName(v *v1alpha1.VPNSettings) string {
	switch {
	case !v.Enabled():
		return "none"
	case v.OpenVPN != nil && v.OpenVPN.Cipher != "":
		return fmt.Sprintf("%s (%s)", v.Type, v.OpenVPN.Cipher)
	}
	return string(v.Type)
}

// levelName: "privacy", or for a transitional list "authentication or privacy, authentication asked".
func levelName(p v1alpha1.SASLProtection) string {
	levels := strings.Split(lower(p), ",")
	if len(levels) == 1 {
		return levels[0]
	}
	return strings.Join(levels, " or ") + ", " + levels[0] + " asked"
}

func dataTransferLevel(h *v1alpha1.HBaseSecurity) v1alpha1.SASLProtection {
	if h.DataTransfer == nil {
		return ""
	}
	return h.DataTransfer.Protection
}

// withoutLevels is h with its SASL levels left out, to compare what else changes.
func withoutLevels(h *v1alpha1.HBaseSecurity) *v1alpha1.HBaseSecurity {
	c := *h
	c.HBaseRPCProtection, c.HadoopRPCProtection = "", ""
	if c.DataTransfer != nil {
		dt := *c.DataTransfer
		dt.Protection, c.DataTransfer = "", &dt
	}
	return &c
}

// StageName names the RPC TLS stage of a step.
func StageName(e v1alpha1.EffectiveEncryption) string { return stageNames[stage(e)] }

// AppliedStep reads the step a ConfigMap's files configure; nil for none.
func AppliedStep(annotations map[string]string, name string) (*v1alpha1.EffectiveEncryption, error) {
	raw, ok := annotations[StepAnnotation]
	if !ok {
		return nil, nil
	}
	var e v1alpha1.EffectiveEncryption
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		return nil, fmt.Errorf("ConfigMap %s annotation %s: %w", name, StepAnnotation, err)
	}
	return &e, nil
}
