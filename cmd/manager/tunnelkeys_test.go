package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/vpn"
	"secured.dev/operator/internal/test/chart"
	"secured.dev/operator/internal/test/tier"
	"secured.dev/operator/internal/tunnelkeys"
)

// The tunnel key server as the chart runs it (the manager binary with the chart's arguments
// and rights): each pod of a VPN datastore gets its own member's key and no other, proven by a
// token the real API server issued to that pod for the key server's audience, over TLS
// verified against the certificate pinned in the tunnel's public Secret. A benchmark client pod gets its slot's key. Tokens for another audience, of a
// pod that was replaced, or of pods that are not members, get nothing. No kubelet runs here,
// so the test creates the pods their controllers would.
func TestTunnelKeyServerHandsEachPodOnlyItsOwnKey(t *testing.T) {
	tier.Full(t, "envtest, helm and the manager binary")
	g := NewWithT(t)
	inst := install(t, "watch.namespaces={team-a}")
	ctx, c := inst.ctx, inst.env.Client
	addr := freeAddr(t)
	inst.process(t, "keys", "--tunnel-keys-bind-address="+addr)
	clientset := kubernetes.NewForConfigOrDie(inst.env.Config)
	// No ServiceAccount controller runs in envtest.
	_, err := clientset.CoreV1().ServiceAccounts("team-a").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	ds := &v1alpha1.SecuredDatastore{
		ObjectMeta: metav1.ObjectMeta{Name: "ledger", Namespace: "team-a"},
		Spec: v1alpha1.SecuredDatastoreSpec{Engine: v1alpha1.EngineCassandra, Cassandra: &v1alpha1.CassandraTopology{Nodes: ptr.To[int32](2)},
			Encryption: v1alpha1.DatastoreEncryption{ProfileRef: "openvpn"}},
	}
	g.Expect(c.Create(ctx, ds)).To(Succeed())
	public, keys, sts := &corev1.Secret{}, &corev1.Secret{}, &appsv1.StatefulSet{}
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: vpn.SecretName(ds.Name)}, public)).To(Succeed())
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: vpn.KeysSecretName(ds.Name)}, keys)).To(Succeed())
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: ds.Name}, sts)).To(Succeed())
	}).WithTimeout(60 * time.Second).Should(Succeed())
	g.Expect(public.Data[vpn.KeyServerCAFile]).To(Equal(inst.keyServerCert), "the tunnel pins another certificate than the chart's")
	var url string
	for _, e := range sts.Spec.Template.Spec.InitContainers[0].Env {
		if e.Name == "VPN_KEY_URL" {
			url = e.Value
		}
	}
	g.Expect(url).To(Equal("https://" + chart.Release + "-secured-datastore-operator-tunnel-keys." + chart.Namespace + ".svc:9444" + tunnelkeys.Path))

	// The sidecar's view: the pinned certificate, the URL's host name, this test's address.
	roots := x509.NewCertPool()
	g.Expect(roots.AppendCertsFromPEM(public.Data[vpn.KeyServerCAFile])).To(BeTrue())
	httpClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS13},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}}
	fetch := func(g Gomega, token string) (int, string) { return call(g, httpClient, http.MethodPost, url, token) }
	pod := func(name string, owner metav1.Object, kind string, annotations map[string]string) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", Annotations: annotations},
			Spec:       corev1.PodSpec{ServiceAccountName: "default", Containers: []corev1.Container{{Name: "c", Image: "none"}}},
		}
		if owner != nil {
			gv := "apps/v1"
			if kind == "Job" {
				gv = "batch/v1"
			}
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: gv, Kind: kind, Name: owner.GetName(), UID: owner.GetUID(), Controller: ptr.To(true)}}
		}
		g.Expect(c.Create(ctx, p)).To(Succeed())
		return p
	}
	tokenOf := func(p *corev1.Pod, audience string) string {
		tr, err := clientset.CoreV1().ServiceAccounts("team-a").CreateToken(ctx, "default", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			Audiences: []string{audience}, ExpirationSeconds: ptr.To[int64](600),
			BoundObjectRef: &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID},
		}}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		return tr.Status.Token
	}

	// Each node gets its own key, byte for byte what the keys Secret holds, and not the other's.
	node0, node1 := pod("ledger-0", sts, "StatefulSet", nil), pod("ledger-1", sts, "StatefulSet", nil)
	for _, p := range []*corev1.Pod{node0, node1} {
		status, body := fetch(g, tokenOf(p, vpn.KeyServerAudience))
		g.Expect(status).To(Equal(http.StatusOK), body)
		g.Expect(body).To(Equal(string(keys.Data[vpn.KeyFile(p.Name)])))
	}
	g.Expect(keys.Data[vpn.KeyFile("ledger-0")]).NotTo(Equal(keys.Data[vpn.KeyFile("ledger-1")]))

	// The openvpn profile's tunnel carries clients: pod 1 of a benchmark's indexed Job is client-1.
	bench := &v1alpha1.DatastoreBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: "team-a"},
		Spec: v1alpha1.DatastoreBenchmarkSpec{Target: v1alpha1.BenchmarkTarget{DatastoreRef: &v1alpha1.SecuredDatastoreReference{Name: ds.Name}},
			Workload: v1alpha1.Workload{Preset: "A"}, Load: v1alpha1.Load{Mode: v1alpha1.LoadMaxThroughput}},
	}
	g.Expect(c.Create(ctx, bench)).To(Succeed())
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-run-0", Namespace: "team-a", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: v1alpha1.GroupVersion.String(), Kind: "DatastoreBenchmark", Name: bench.Name, UID: bench.UID, Controller: ptr.To(true)}}},
		Spec: batchv1.JobSpec{CompletionMode: ptr.To(batchv1.IndexedCompletion), Completions: ptr.To[int32](2), Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "none"}}}}},
	}
	g.Expect(c.Create(ctx, job)).To(Succeed())
	benchPod := pod("bench-run-0-1-x", job, "Job", map[string]string{batchv1.JobCompletionIndexAnnotation: "1"})
	status, body := fetch(g, tokenOf(benchPod, vpn.KeyServerAudience))
	g.Expect(status).To(Equal(http.StatusOK), body)
	g.Expect(body).To(Equal(string(keys.Data[vpn.KeyFile("client-1")])))

	// Refused: a token for the API server's audience, a pod without a controller, a pod of the
	// StatefulSet's owner named as no StatefulSet names its pods, no token at all, and a token
	// of a pod that was deleted and created again under the same name.
	stray := pod("stray", nil, "", nil)
	oddName := pod("ca", sts, "StatefulSet", nil)
	for what, want := range map[string]struct {
		token  string
		status int
		says   string
	}{
		"another audience":      {tokenOf(node0, "https://kubernetes.default.svc"), http.StatusUnauthorized, "audience"},
		"no controller":         {tokenOf(stray, vpn.KeyServerAudience), http.StatusForbidden, "no controller"},
		"not a StatefulSet pod": {tokenOf(oddName, vpn.KeyServerAudience), http.StatusForbidden, "not named"},
		"no token":              {"", http.StatusUnauthorized, "no bearer token"},
	} {
		status, body := fetch(g, want.token)
		g.Expect(status).To(Equal(want.status), "%s: %s", what, body)
		g.Expect(body).To(ContainSubstring(want.says), what)
		g.Expect(body).NotTo(ContainSubstring("PRIVATE KEY"), what)
	}
	old := tokenOf(node1, vpn.KeyServerAudience)
	g.Expect(c.Delete(ctx, node1)).To(Succeed())
	pod("ledger-1", sts, "StatefulSet", nil)
	status, body = fetch(g, old)
	g.Expect(status).To(BeElementOf(http.StatusUnauthorized, http.StatusForbidden), body)
	g.Expect(strings.Contains(body, "PRIVATE KEY")).To(BeFalse())

	// Only POST, only the one path.
	status, _ = call(g, httpClient, http.MethodGet, url, tokenOf(node0, vpn.KeyServerAudience))
	g.Expect(status).To(Equal(http.StatusMethodNotAllowed))
	g.Expect(strings.HasSuffix(url, tunnelkeys.Path)).To(BeTrue())
}
