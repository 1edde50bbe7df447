package controllers

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"secured.dev/operator/api/v1alpha1"
)

func TestBenchmarkAndStudyReportMissingReferences(t *testing.T) {
	g := NewWithT(t)
	b := &v1alpha1.DatastoreBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: "missing-target", Namespace: "default"},
		Spec: v1alpha1.DatastoreBenchmarkSpec{
			Target:   v1alpha1.BenchmarkTarget{DatastoreRef: &v1alpha1.SecuredDatastoreReference{Name: "nope"}},
			Workload: v1alpha1.Workload{Preset: "A"},
			Load:     v1alpha1.Load{Mode: v1alpha1.LoadMaxThroughput},
		},
	}
	create(t, b)
	budget := int32(10)
	s := &v1alpha1.TradeoffStudy{
		ObjectMeta: metav1.ObjectMeta{Name: "missing-profiles", Namespace: "default"},
		Spec: v1alpha1.TradeoffStudySpec{
			Template: v1alpha1.DatastoreTemplate{Engine: v1alpha1.EngineCassandra},
			Matrix:   v1alpha1.StudyMatrix{Profiles: []string{"st-test-plain", "st-test-tls"}, Baseline: "st-test-plain"},
			Workload: v1alpha1.Workload{Preset: "A"},
			Load:     v1alpha1.Load{Mode: v1alpha1.LoadMaxThroughput},
			Decision: v1alpha1.StudyDecision{Objective: v1alpha1.ObjectiveHighestRankWithinBudget, OverheadBudgetPercent: &budget},
		},
	}
	create(t, s)
	g.Eventually(func(g Gomega) {
		c := condition(get(g, b).Status.Conditions, v1alpha1.ConditionReady)
		g.Expect(c.Reason).To(Equal("TargetNotFound"))
		g.Expect(c.Message).To(ContainSubstring("spec.target.datastoreRef.name"))
		c = condition(get(g, s).Status.Conditions, v1alpha1.ConditionReady)
		g.Expect(c.Reason).To(Equal(v1alpha1.ReasonProfileNotFound))
		g.Expect(c.Message).To(ContainSubstring("st-test-plain, st-test-tls"))
	}).Should(Succeed())

	// Creating the profiles clears the study's complaint through the profile watch.
	create(t, tls13Profile("st-test-plain"))
	create(t, tls13Profile("st-test-tls"))
	g.Eventually(func(g Gomega) {
		g.Expect(condition(get(g, s).Status.Conditions, v1alpha1.ConditionReady).Reason).To(Equal("NotImplemented"))
	}).Should(Succeed())
}
