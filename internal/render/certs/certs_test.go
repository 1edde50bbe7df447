package certs

import (
	"strings"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"

	"secured.dev/operator/api/v1alpha1"
)

func suites(names ...string) []v1alpha1.EffectiveChannel {
	return []v1alpha1.EffectiveChannel{{Mode: v1alpha1.ChannelRequired, CipherSuites: names}}
}

// The key follows what the suites can authenticate with; a key no suite can use is refused
// with the field and the fix.
func TestNodeKeyFollowsTheSuites(t *testing.T) {
	for _, tc := range []struct {
		name     string
		spec     v1alpha1.PrivateKeySpec
		channels []v1alpha1.EffectiveChannel
		want     cmv1.PrivateKeyAlgorithm
		size     int
		err      string
	}{
		{"TLS 1.3 defaults to ECDSA", v1alpha1.PrivateKeySpec{}, suites("TLS_AES_128_GCM_SHA256"), cmv1.ECDSAKeyAlgorithm, 256, ""},
		{"RSA-only suites get RSA", v1alpha1.PrivateKeySpec{}, suites("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"), cmv1.RSAKeyAlgorithm, 2048, ""},
		{"mixed suites keep ECDSA", v1alpha1.PrivateKeySpec{}, suites("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"), cmv1.ECDSAKeyAlgorithm, 256, ""},
		{"explicit RSA 4096", v1alpha1.PrivateKeySpec{Algorithm: "RSA", Size: 4096}, suites("TLS_AES_128_GCM_SHA256"), cmv1.RSAKeyAlgorithm, 4096, ""},
		{"ECDSA cannot serve RSA suites", v1alpha1.PrivateKeySpec{Algorithm: "ECDSA"}, suites("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"), "", 0, "set algorithm RSA"},
		{"Ed25519 needs TLS 1.3", v1alpha1.PrivateKeySpec{Algorithm: "Ed25519"}, suites("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"), "", 0, "only TLS 1.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NodeKey(tc.spec, tc.channels)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "spec.certificates.privateKey.algorithm") {
					t.Fatalf("error %v; want one naming the field and %q", err, tc.err)
				}
				return
			}
			if err != nil || got.Algorithm != tc.want || got.Size != tc.size {
				t.Errorf("key %+v, %v; want %s %d", got, err, tc.want, tc.size)
			}
		})
	}
}
