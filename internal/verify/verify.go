// Package verify compares what the wire prober observed on an endpoint with what the effective
// profile promises for its channel, and explains the difference in the words of the
// EncryptionVerified condition.
package verify

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/probe"
)

// Finding is the verdict on one endpoint of one channel.
type Finding struct {
	Verified bool
	Reason   string
	// Differences, one sentence each, for the condition message and the event.
	Differences []string
}

// Compare judges one probe result against the channel's effective settings. scanErr is the
// error Scan returned, if any.
func Compare(want v1alpha1.EffectiveChannel, got probe.Result, scanErr error) Finding {
	if scanErr != nil {
		return Finding{Reason: v1alpha1.ReasonUnreachable, Differences: []string{fmt.Sprintf("%s: %v", got.Address, scanErr)}}
	}
	var checks []check
	add := func(reason, format string, args ...any) {
		checks = append(checks, check{reason, fmt.Sprintf(format, args...)})
	}

	if want.Mode == v1alpha1.ChannelDisabled {
		// Unanswered ClientHellos are no doubt here: a plaintext listener may wait in silence
		// for the rest of its own protocol's greeting.
		if len(got.Versions) > 0 {
			add(v1alpha1.ReasonProtocolDrift, "TLS is Disabled but the endpoint accepts %s", strings.Join(got.VersionNames(), ", "))
		}
		return verdict(checks)
	}
	// Verification fails closed: a promise the probe could not test is not kept.
	if got.PlaintextAccepted == nil {
		add(v1alpha1.ReasonProbeIncomplete, "TLS is %s but whether the endpoint accepts plaintext could not be tested", want.Mode)
	}
	if want.ClientAuth == v1alpha1.ClientAuthRequired && got.ClientAuthRequired == nil {
		add(v1alpha1.ReasonProbeIncomplete, "client certificates are Required but no full handshake was possible to test that they are enforced")
	}
	if want.Mode == v1alpha1.ChannelRequired && got.PlaintextAccepted != nil && *got.PlaintextAccepted {
		add(v1alpha1.ReasonPlaintextAccepted, "TLS is Required but the endpoint accepts plaintext")
	}
	if want.Mode == v1alpha1.ChannelOptional && got.PlaintextAccepted != nil && !*got.PlaintextAccepted {
		add(v1alpha1.ReasonProtocolDrift, "TLS is Optional but the endpoint refuses plaintext")
	}
	wantVersions := make([]string, len(want.Protocols))
	for i, p := range want.Protocols {
		wantVersions[i] = string(p)
	}
	extraVersions, missingVersions := diff(got.VersionNames(), wantVersions)
	extraSuites, missingSuites := diff(got.SuiteNames(), want.CipherSuites)
	if len(got.Unanswered) > 0 {
		// What the endpoint accepted is known; what it refuses is not.
		add(v1alpha1.ReasonProbeIncomplete, "ClientHellos at %s got no answer in time, twice, so what the endpoint accepts there is unknown",
			strings.Join(got.UnansweredNames(), ", "))
		missingVersions, missingSuites = nil, nil
	}
	if len(extraVersions)+len(missingVersions) > 0 {
		add(v1alpha1.ReasonProtocolDrift, "protocols%s%s", describe(" also accepts ", extraVersions), describe(" refuses ", missingVersions))
	}
	if len(extraSuites)+len(missingSuites) > 0 {
		add(v1alpha1.ReasonCipherSuiteDrift, "cipher suites%s%s", describe(" also accepts ", extraSuites), describe(" refuses ", missingSuites))
	}
	if want.ClientAuth == v1alpha1.ClientAuthRequired && got.ClientAuthRequired != nil && !*got.ClientAuthRequired {
		add(v1alpha1.ReasonClientAuthNotEnforced, "client certificates are Required but the endpoint completes handshakes without one")
	}
	return verdict(checks)
}

// Tunnelled judges a channel a VPN profile puts in the tunnel, probed at the pod's own
// address, outside the tunnel (the prober is not a tunnel member). Only a refused connection
// verifies it: the kernel answered that nothing listens there, because the datastore binds the
// port to its tunnel address only. Silence (a timeout, no route) proves nothing: a pod or
// network that is down is silent too, so it is reported unverified. That the channel is served
// inside the tunnel is shown by the pod's readiness, whose probe checks the tunnel address from
// within the pod; only ready pods are probed.
func Tunnelled(got probe.Result, scanErr error) Finding {
	switch {
	case errors.Is(scanErr, syscall.ECONNREFUSED):
		return Finding{Verified: true, Reason: v1alpha1.ReasonVerified}
	case errors.Is(scanErr, probe.ErrUnreachable):
		return Finding{Reason: v1alpha1.ReasonUnreachable, Differences: []string{fmt.Sprintf(
			"%s did not answer outside the tunnel at all (%v): only a refused connection shows that the port is served on the tunnel address alone, and silence cannot be told from a pod or network that is down",
			got.Address, strings.ReplaceAll(scanErr.Error(), "\n", ": "))}}
	case scanErr != nil:
		return Finding{Reason: v1alpha1.ReasonProbeIncomplete, Differences: []string{fmt.Sprintf("%s: %v", got.Address, scanErr)}}
	}
	return Finding{Reason: v1alpha1.ReasonPlaintextAccepted, Differences: []string{
		fmt.Sprintf("%s answers outside the tunnel, on the pod's own address; only the tunnel address may serve this channel", got.Address)}}
}

// check is one difference found, with the reason it would give.
type check struct{ reason, diff string }

// severity orders the reasons, most severe first.
var severity = []string{v1alpha1.ReasonUnreachable, v1alpha1.ReasonPlaintextAccepted, v1alpha1.ReasonCertificateUntrusted, v1alpha1.ReasonProbeIncomplete, v1alpha1.ReasonProtocolDrift, v1alpha1.ReasonCipherSuiteDrift, v1alpha1.ReasonClientAuthNotEnforced, v1alpha1.ReasonVerified}

// MoreSevere returns the more severe of two reasons; Verified is the least.
func MoreSevere(a, b string) string {
	if slices.Index(severity, b) < slices.Index(severity, a) {
		return b
	}
	return a
}

func verdict(checks []check) Finding {
	if len(checks) == 0 {
		return Finding{Verified: true, Reason: v1alpha1.ReasonVerified}
	}
	f := Finding{Reason: v1alpha1.ReasonVerified}
	for _, c := range checks {
		f.Differences = append(f.Differences, c.diff)
		f.Reason = MoreSevere(f.Reason, c.reason)
	}
	return f
}

// diff returns what got has that want lacks, and the reverse.
func diff(got, want []string) (extra, missing []string) {
	for _, g := range got {
		if !slices.Contains(want, g) {
			extra = append(extra, g)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			missing = append(missing, w)
		}
	}
	return extra, missing
}

func describe(prefix string, items []string) string {
	if len(items) == 0 {
		return ""
	}
	return prefix + strings.Join(items, ", ")
}
