package controllers

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/cassandra"
)

// A node whose image cannot be pulled makes the datastore say so in Ready and in an event,
// within one reconcile of the pod's change, instead of provisioning without a word.
func TestPodThatCannotStartIsReported(t *testing.T) {
	g := NewWithT(t)
	create(t, plaintextProfile("pods-test-plain"))
	ds := datastore("stuck", "pods-test-plain")
	create(t, ds)
	g.Eventually(func(g Gomega) {
		g.Expect(condition(get(g, ds).Status.Conditions, v1alpha1.ConditionReady).Reason).To(Equal(v1alpha1.ReasonProvisioning))
	}).Should(Succeed())
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: cassandra.NamesOf(ds).Pod(0), Namespace: ds.Namespace, Labels: cassandra.Labels(ds)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "cassandra", Image: "registry.example/cassandra:nope"}},
			AutomountServiceAccountToken: ptr.To(false)},
	}
	create(t, pod)
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "cassandra", Image: "registry.example/cassandra:nope",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "registry.example/cassandra:nope"`}}}}}
	g.Expect(env.Client.Status().Update(context.Background(), pod)).To(Succeed())
	want := `pod stuck-0 container cassandra: ImagePullBackOff: Back-off pulling image "registry.example/cassandra:nope"`
	g.Eventually(func(g Gomega) {
		got := get(g, ds)
		g.Expect(got.Status.Phase).To(Equal(v1alpha1.PhaseProvisioning))
		g.Expect(condition(got.Status.Conditions, v1alpha1.ConditionReady).Message).To(ContainSubstring(want))
		g.Expect(condition(got.Status.Conditions, v1alpha1.ConditionProgressing).Message).To(ContainSubstring(want))
		g.Expect(eventNotes(g, ds, "PodProblem")).To(ContainElement(want))
	}).Should(Succeed())
}
