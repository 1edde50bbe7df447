package controllers

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/test/testenv"
)

// On a cluster without cert-manager the operator starts, plaintext datastores are created as
// usual, and a TLS datastore says what is missing instead of waiting without a word.
func TestCertManagerIsOptional(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	e, err := testenv.StartWithoutCertManager()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Stop() })
	cfg, err := e.OperatorConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: e.Scheme, Cache: CacheOptions(), Client: ClientOptions(),
		Metrics: metricsserver.Options{BindAddress: "0"}, Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := SetupWithManager(ctx, mgr, testOptions); err != nil {
		t.Fatalf("the operator does not start without cert-manager: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	for _, o := range []client.Object{plaintextProfile("nocm-plain"), tls13Profile("nocm-tls"), datastore("nocm-plain", "nocm-plain"), datastore("nocm-tls", "nocm-tls")} {
		g.Expect(e.Client.Create(ctx, o)).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		g.Expect(e.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nocm-plain"}, &appsv1.StatefulSet{})).To(Succeed())
		ds := &v1alpha1.SecuredDatastore{}
		g.Expect(e.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nocm-plain"}, ds)).To(Succeed())
		g.Expect(condition(ds.Status.Conditions, v1alpha1.ConditionCertificatesReady).Reason).To(Equal(v1alpha1.ReasonNotNeeded))
	}).Should(Succeed(), "a plaintext datastore needs no cert-manager")
	g.Eventually(func(g Gomega) {
		ds := &v1alpha1.SecuredDatastore{}
		g.Expect(e.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nocm-tls"}, ds)).To(Succeed())
		c := condition(ds.Status.Conditions, v1alpha1.ConditionCertificatesReady)
		g.Expect(c.Reason).To(Equal(v1alpha1.ReasonCertManagerMissing))
		g.Expect(c.Message).To(ContainSubstring("install cert-manager"))
		g.Expect(condition(ds.Status.Conditions, v1alpha1.ConditionReady).Reason).To(Equal(v1alpha1.ReasonCertManagerMissing))
	}).Should(Succeed())
	g.Expect(e.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nocm-tls"}, &appsv1.StatefulSet{})).NotTo(Succeed(), "no node starts without its certificate")
}
