package controllers

import (
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/certs"
)

// blackHole listens on address and accepts every connection without ever answering, as a
// node whose process hangs or a firewall that swallows packets after the handshake would.
func blackHole(t *testing.T, address string) {
	t.Helper()
	ln, err := net.Listen("tcp", address)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			_ = c.Close()
		}
	})
}

// A datastore whose node accepts connections and never answers is probed off the reconcile
// path: while its scan is under way (hundreds of handshakes, each waiting out its deadline),
// 19 other datastores are created and reconciled, 99% of the controller's reconciles in that
// time take under a second, and the black-holed one ends up not verified. Before the probe
// pool, the scan ran inside Reconcile on the controller's only worker and every other
// datastore waited for it, about a minute.
func TestBlackHoledEndpointDoesNotStallOtherDatastores(t *testing.T) {
	g := NewWithT(t)
	const address = "127.0.0.99"
	blackHole(t, net.JoinHostPort(address, "9042"))
	blackHole(t, net.JoinHostPort(address, "7000"))
	create(t, tls13Profile("ds-test-blackhole", "TLS_AES_128_GCM_SHA256"))

	stuck := datastore("black-holed", "ds-test-blackhole")
	stuck.Spec.Cassandra.Nodes = ptr.To[int32](1)
	create(t, stuck)
	effectiveOf(g, stuck)
	issueCertificate(t, stuck, 1)
	rollOut(t, stuck)
	runningPod(t, stuck, 0, address)
	probing := func(g Gomega) {
		c := condition(get(g, stuck).Status.Conditions, v1alpha1.ConditionEncryptionVerified)
		g.Expect(c.Status).To(Equal(metav1.ConditionUnknown))
		g.Expect(c.Reason).To(Equal(v1alpha1.ReasonProbePending))
		g.Expect(c.Message).To(Equal("probing 2 endpoints"))
	}
	g.Eventually(probing).Should(Succeed())

	before := reconcileTimes(t)
	var bystanders []*v1alpha1.SecuredDatastore
	for i := range 19 {
		b := datastore(fmt.Sprintf("bystander-%d", i), "ds-test-blackhole")
		create(t, b)
		bystanders = append(bystanders, b)
	}
	for _, b := range bystanders {
		g.Eventually(func(g Gomega) {
			// Reconciled: it asked cert-manager for its certificate and said so in its status.
			got := get(g, b)
			c := condition(got.Status.Conditions, v1alpha1.ConditionCertificatesReady)
			g.Expect(c.ObservedGeneration).To(Equal(got.Generation))
			g.Expect(get(g, &cmv1.Certificate{ObjectMeta: metav1.ObjectMeta{Name: certs.NodeCertificate(got), Namespace: "default"}})).NotTo(BeNil())
		}).Should(Succeed())
	}
	probing(g) // still under way after every bystander was reconciled
	after := reconcileTimes(t)
	n, fast := after.count-before.count, after.underASecond-before.underASecond
	t.Logf("while the black-holed scan ran: %d reconciles, %d of them under 1 s", n, fast)
	if n == 0 || float64(fast) < 0.99*float64(n) {
		t.Errorf("%d of %d reconciles took under a second, want at least 99%%", fast, n)
	}

	// Nothing was accepted: fail closed, never verified.
	g.Eventually(func(g Gomega) {
		c := condition(get(g, stuck).Status.Conditions, v1alpha1.ConditionEncryptionVerified)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse), c.Message)
	}, 2*DefaultProbeDeadline).Should(Succeed())
}

// reconcileCounts is the SecuredDatastore controller's reconcile-time histogram at a moment.
type reconcileCounts struct{ count, underASecond uint64 }

// reconcileTimes reads controller-runtime's histogram of reconcile durations.
func reconcileTimes(t *testing.T) reconcileCounts {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_time_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			if !slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool { return l.GetName() == "controller" && l.GetValue() == "secureddatastore" }) {
				continue
			}
			out := reconcileCounts{count: m.GetHistogram().GetSampleCount()}
			for _, b := range m.GetHistogram().GetBucket() {
				if b.GetUpperBound() == 1 {
					out.underASecond = b.GetCumulativeCount()
				}
			}
			return out
		}
	}
	t.Fatal("no reconcile-time histogram for the secureddatastore controller")
	return reconcileCounts{}
}
