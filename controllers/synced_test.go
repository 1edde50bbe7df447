package controllers

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"secured.dev/operator/api/v1alpha1"
)

// A reconcile error reaches the object: a namespace whose quota admits no Service makes every
// pass of a datastore there fail at the API server; Synced turns False with the API server's
// words and a Warning event says the same. Once the quota goes, Synced turns True again.
func TestReconcileErrorsReachTheObject(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "no-services"}})
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "no-services", Namespace: "no-services"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceServices: resource.MustParse("0")}},
	}
	create(t, quota)
	// envtest runs no quota controller: write the usage it would.
	quota.Status = corev1.ResourceQuotaStatus{Hard: quota.Spec.Hard, Used: corev1.ResourceList{corev1.ResourceServices: resource.MustParse("0")}}
	g.Expect(env.Client.Status().Update(ctx, quota)).To(Succeed())

	create(t, plaintextProfile("ds-test-synced"))
	ds := datastore("quota-bound", "ds-test-synced")
	ds.Namespace = "no-services"
	create(t, ds)
	g.Eventually(func(g Gomega) {
		c := condition(get(g, ds).Status.Conditions, v1alpha1.ConditionSynced)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(v1alpha1.ReasonReconcileError))
		g.Expect(c.Message).To(ContainSubstring("exceeded quota: no-services"))
		g.Expect(eventNotes(g, ds, v1alpha1.ReasonReconcileError)).To(ContainElement(ContainSubstring("exceeded quota: no-services")))
	}).Should(Succeed())

	g.Expect(env.Client.Delete(ctx, quota)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := condition(get(g, ds).Status.Conditions, v1alpha1.ConditionSynced)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
		g.Expect(c.Reason).To(Equal(v1alpha1.ReasonReconcileSuccess))
	}, 60*time.Second).Should(Succeed())
}
