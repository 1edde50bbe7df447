package crypto

import (
	"slices"

	"secured.dev/operator/api/v1alpha1"
)

// Bridge returns TLS settings that nodes running applied and nodes running desired can both
// handshake with. When the two share a protocol and a cipher suite, that is desired itself;
// otherwise it is desired widened to the union of both, and a later roll narrows it. A live
// cluster changing from, say, TLS 1.2-only to TLS 1.3-only needs that middle step: during a
// roll, restarted nodes must still reach the ones that are not.
func Bridge(applied, desired v1alpha1.EffectiveChannel) v1alpha1.EffectiveChannel {
	if overlaps(applied.Protocols, desired.Protocols) && overlaps(applied.CipherSuites, desired.CipherSuites) {
		return desired
	}
	u := desired // keeps the mode
	u.Protocols = union(applied.Protocols, desired.Protocols)
	u.CipherSuites = union(applied.CipherSuites, desired.CipherSuites)
	return u
}

// overlaps: a and b share an element, or one of them is unrestricted (empty).
func overlaps[T comparable](a, b []T) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return len(a) == 0 || len(b) == 0
}

func union[T comparable](a, b []T) []T {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
