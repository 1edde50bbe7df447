package controllers

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/certs"
)

// tarpit listens on address and answers every TLS ClientHello slowly: after 1.5 s, just inside
// the probe's 2 s per-connection timeout, a TLS 1.2 ServerHello choosing the first suite offered;
// anything else it never answers. A node that hangs answers nothing and its scan ends within a
// timeout or two; a tarpit keeps a scan busy suite after suite until its deadline.
func tarpit(t *testing.T, address string) {
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
			go func() {
				if suite, ok := firstOffered(c); ok {
					time.Sleep(1500 * time.Millisecond)
					_, _ = c.Write(serverHelloTLS12(suite))
				}
			}()
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

// firstOffered reads a ClientHello record and returns its first cipher suite.
func firstOffered(r io.Reader) (uint16, bool) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil || hdr[0] != 0x16 {
		return 0, false
	}
	rec := make([]byte, binary.BigEndian.Uint16(hdr[3:]))
	if _, err := io.ReadFull(r, rec); err != nil {
		return 0, false
	}
	// handshake header (4), legacy version (2), random (32), session id
	const sid = 4 + 2 + 32
	if len(rec) < sid+1 || len(rec) < sid+1+int(rec[sid])+4 {
		return 0, false
	}
	suites := rec[sid+1+int(rec[sid]):]
	return binary.BigEndian.Uint16(suites[2:]), true
}

// serverHelloTLS12 is a ServerHello record of TLS 1.2 choosing suite, without extensions.
func serverHelloTLS12(suite uint16) []byte {
	body := append([]byte{0x03, 0x03}, make([]byte, 32+1)...) // version, random, empty session id
	body = binary.BigEndian.AppendUint16(body, suite)
	body = append(body, 0) // no compression
	msg := append([]byte{0x02, 0, 0, byte(len(body))}, body...)
	return append([]byte{0x16, 0x03, 0x03, 0, byte(len(msg))}, msg...)
}

// A datastore whose node answers every handshake slowly is probed off the reconcile path:
// while its scan is under way (one slow handshake after another, until the scan's deadline),
// 19 other datastores are created and reconciled, 99% of the controller's reconciles in that
// time take under a second, and the slow one ends up not verified. Before the probe pool, the
// scan ran inside Reconcile on the controller's only worker and every other datastore waited
// for it, about a minute.
func TestSlowEndpointDoesNotStallOtherDatastores(t *testing.T) {
	g := NewWithT(t)
	const address = "127.0.0.99"
	tarpit(t, net.JoinHostPort(address, "9042"))
	tarpit(t, net.JoinHostPort(address, "7000"))
	create(t, tls13Profile("ds-test-slow", "TLS_AES_128_GCM_SHA256"))

	stuck := datastore("slow-node", "ds-test-slow")
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
		b := datastore(fmt.Sprintf("bystander-%d", i), "ds-test-slow")
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
	t.Logf("while the slow scan ran: %d reconciles, %d of them under 1 s", n, fast)
	if n == 0 || float64(fast) < 0.99*float64(n) {
		t.Errorf("%d of %d reconciles took under a second, want at least 99%%", fast, n)
	}

	// A scan cut at its deadline fails closed: never verified.
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
