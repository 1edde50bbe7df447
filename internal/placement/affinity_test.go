package placement

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"secured.dev/operator/api/v1alpha1"
)

func node(labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: labels}}
}

func TestAffinityAndQualifies(t *testing.T) {
	aes := node(map[string]string{LabelPrefix + "AESNI": "true", LabelPrefix + "VAES": "true", "pool": "db"})
	hidden := node(map[string]string{HiddenFeaturesLabel: "AESNI.VAES", "pool": "db"})
	for _, tc := range []struct {
		name        string
		p           *v1alpha1.PlacementSpec
		required    bool
		preferred   bool
		aes, hidden bool
	}{
		{"default is Any", nil, false, false, true, true},
		{"Required AESNI", &v1alpha1.PlacementSpec{CryptoAcceleration: v1alpha1.AccelerationRequired}, true, false, true, false},
		{"Required VAES", &v1alpha1.PlacementSpec{CryptoAcceleration: v1alpha1.AccelerationRequired, Features: []v1alpha1.CPUFeature{"AESNI", "VAES"}}, true, false, true, false},
		{"Forbidden", &v1alpha1.PlacementSpec{CryptoAcceleration: v1alpha1.AccelerationForbidden}, true, false, false, true},
		{"Preferred", &v1alpha1.PlacementSpec{CryptoAcceleration: v1alpha1.AccelerationPreferred}, false, true, true, true},
		{"nodeSelector", &v1alpha1.PlacementSpec{NodeSelector: map[string]string{"pool": "web"}}, false, false, false, false},
	} {
		a := Affinity(tc.p, "")
		req := a != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil
		pref := a != nil && len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0
		if req != tc.required || pref != tc.preferred {
			t.Errorf("%s: affinity required=%v preferred=%v", tc.name, req, pref)
		}
		if got := Qualifies(tc.p, aes, ""); got != tc.aes {
			t.Errorf("%s: AES node qualifies=%v", tc.name, got)
		}
		if got := Qualifies(tc.p, hidden, ""); got != tc.hidden {
			t.Errorf("%s: hidden-AES node qualifies=%v", tc.name, got)
		}
	}
}
