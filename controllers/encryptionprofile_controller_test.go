package controllers

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"secured.dev/operator/api/v1alpha1"
)

func TestProfileStatusCarriesRankAndPresets(t *testing.T) {
	g := NewWithT(t)
	p := tls13Profile("ep-test-aes128", "TLS_AES_128_GCM_SHA256")
	create(t, p)
	g.Eventually(func(g Gomega) {
		got := get(g, p)
		g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		g.Expect(got.Status.Assessment).NotTo(BeNil())
		g.Expect(got.Status.Assessment.Rank).To(BeEquivalentTo(120))
		g.Expect(got.Status.Assessment.SatisfiedPresets).To(ContainElements(v1alpha1.PresetNIST, v1alpha1.PresetMozillaModern))
		g.Expect(condition(got.Status.Conditions, v1alpha1.ConditionValid).Status).To(Equal(metav1.ConditionTrue))
	}).Should(Succeed())
}

// A profile whose only problem needs resolution (no engine implements its suite) is accepted
// by the API server and reported invalid by the controller.
func TestProfileInvalidAfterResolution(t *testing.T) {
	g := NewWithT(t)
	p := tls13Profile("ep-test-ccm", "TLS_AES_128_CCM_SHA256")
	create(t, p)
	g.Eventually(func(g Gomega) {
		got := get(g, p)
		c := condition(got.Status.Conditions, v1alpha1.ConditionValid)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Message).To(ContainSubstring("no single engine implements"))
		g.Expect(got.Status.Assessment).To(BeNil())
	}).Should(Succeed())
}
