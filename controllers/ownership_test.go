package controllers

import (
	"context"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/study"
)

// A Service someone else created under the name the datastore's client Service would take is
// left as it is, and the datastore says which object stands in its way and what to do.
func TestDatastoreNeverTakesOverAnotherOwnersObject(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "taken", Namespace: "default", Labels: map[string]string{"owner": "someone-else"}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "app", Port: 8080}}},
	}
	create(t, svc)
	create(t, plaintextProfile("own-test-plain"))
	ds := datastore("taken", "own-test-plain")
	create(t, ds)
	g.Eventually(func(g Gomega) {
		got := get(g, ds)
		c := condition(got.Status.Conditions, v1alpha1.ConditionReady)
		g.Expect(c.Reason).To(Equal(v1alpha1.ReasonNameConflict))
		g.Expect(c.Message).To(Equal("Service taken exists and is not owned by this datastore: rename the datastore or delete that Service"))
		g.Expect(got.Status.Phase).To(Equal(v1alpha1.PhasePending))
		g.Expect(eventNotes(g, ds, v1alpha1.ReasonNameConflict)).NotTo(BeEmpty())
	}).Should(Succeed())
	g.Consistently(func(g Gomega) {
		got := &corev1.Service{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(svc), got)).To(Succeed())
		g.Expect(got.Labels).To(Equal(map[string]string{"owner": "someone-else"}))
		g.Expect(got.Spec.Ports).To(HaveLen(1))
		g.Expect(got.Spec.Ports[0].Port).To(BeEquivalentTo(8080))
		g.Expect(got.OwnerReferences).To(BeEmpty())
		for _, m := range got.ManagedFields {
			g.Expect(m.Manager).NotTo(Equal(string(FieldOwner)), "the operator wrote fields of a Service it does not own")
		}
	}, 2*time.Second).Should(Succeed())
}

// A study never measures, adopts or deletes a datastore it did not create, even one that
// carries its label: the cell fails and says why; the study's other cells go on.
func TestStudyNeverAdoptsAnExistingDatastore(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	create(t, plaintextProfile("own-study-plain"))
	create(t, plaintextProfile("own-study-other"))
	theirs := datastore("own-study-c0", "own-study-plain")
	theirs.Labels = map[string]string{study.StudyLabel: "own-study"}
	create(t, theirs)
	s := closedLoopStudy("own-study", "own-study-plain", "own-study-other")
	create(t, s)
	g.Eventually(func(g Gomega) {
		st := get(g, s)
		i := slices.IndexFunc(st.Status.Cells, func(c v1alpha1.StudyCell) bool { return c.Datastore == "own-study-c0" })
		g.Expect(i).To(BeNumerically(">=", 0))
		c0 := st.Status.Cells[i]
		g.Expect(c0.State).To(Equal(v1alpha1.CellFailed))
		g.Expect(c0.Reason).To(Equal("SecuredDatastore own-study-c0 exists and is not owned by this study: rename the study or delete that SecuredDatastore"))
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "own-study-c1"}, &v1alpha1.SecuredDatastore{})).To(Succeed())
	}).Should(Succeed())
	g.Expect(get(g, theirs).OwnerReferences).To(BeEmpty(), "the study adopted a datastore it did not create")

	cancel := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"cancel":true}}`))
	g.Expect(env.Client.Patch(ctx, s, cancel)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(get(g, s).Status.Phase).To(Equal(v1alpha1.StudyCancelled))
		ours := &v1alpha1.SecuredDatastore{}
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "own-study-c1"}, ours)
		g.Expect(apierrors.IsNotFound(err) || ours.DeletionTimestamp != nil).To(BeTrue(), "the study's own datastore is deleted")
	}).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(get(g, theirs).DeletionTimestamp).To(BeNil(), "the study deleted a datastore it did not create")
	}, 2*time.Second).Should(Succeed())
}

// A study whose cells all failed has measured nothing: it ends Failed and recommends nothing,
// rather than Succeeded with the baseline "recommended" by default.
func TestStudyWithEveryCellFailedEndsFailed(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	create(t, plaintextProfile("lost-plain"))
	create(t, plaintextProfile("lost-other"))
	for _, name := range []string{"lost-c0", "lost-c1"} {
		create(t, datastore(name, "lost-plain")) // not the study's: each cell fails
	}
	s := closedLoopStudy("lost", "lost-plain", "lost-other")
	create(t, s)
	g.Eventually(func(g Gomega) {
		st := get(g, s)
		g.Expect(st.Status.Phase).To(Equal(v1alpha1.StudyFailed))
		complete := condition(st.Status.Conditions, v1alpha1.ConditionComplete)
		g.Expect(complete.Reason).To(Equal(v1alpha1.ReasonNothingCompared))
		g.Expect(complete.Message).To(HavePrefix("no overhead to report: 2 of 2 cells failed, every baseline cell among them"))
		g.Expect(complete.Message).NotTo(ContainSubstring("recommended"))
		g.Expect(st.Status.Recommendation).To(BeNil())
	}, 60*time.Second).Should(Succeed())
	g.Eventually(func(g Gomega) {
		var events eventsv1.EventList
		g.Expect(env.Client.List(ctx, &events, client.InNamespace("default"))).To(Succeed())
		g.Expect(slices.ContainsFunc(events.Items, func(e eventsv1.Event) bool {
			return e.Regarding.Name == "lost" && e.Type == "Warning" && e.Reason == v1alpha1.ReasonNothingCompared
		})).To(BeTrue(), "a Warning event says the study failed")
	}).Should(Succeed())
}
