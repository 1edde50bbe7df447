//go:build e2e

// Package e2e tests the product on a real cluster: the one in KUBECONFIG (make kind-up writes
// bin/kind/kubeconfig and make e2e-smoke points at it). Every test cleans up what it creates.
package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/placement"
)

func newClient(t *testing.T) client.Client {
	t.Helper()
	if os.Getenv("KUBECONFIG") == "" {
		t.Fatal("KUBECONFIG is not set: run make kind-up, then make e2e-smoke")
	}
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = cmv1.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	c, err := client.New(ctrl.GetConfigOrDie(), client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testNamespace creates a namespace for one test under the Pod Security level given (empty:
// none enforced) and deletes it, with all the test made in it, when the test ends.
func testNamespace(t *testing.T, c client.Client, prefix, podSecurity string) *corev1.Namespace {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-" + prefix + "-"}}
	if podSecurity != "" {
		ns.Labels = map[string]string{"pod-security.kubernetes.io/enforce": podSecurity}
	}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), ns) })
	return ns
}

// eventually polls f until it returns nil or the timeout passes, then fails with f's error.
func eventually(t *testing.T, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		time.Sleep(time.Second)
	}
}

func workers(t *testing.T, c client.Client) []corev1.Node {
	var nodes corev1.NodeList
	if err := c.List(context.Background(), &nodes); err != nil {
		t.Fatal(err)
	}
	var out []corev1.Node
	for _, n := range nodes.Items {
		if _, cp := n.Labels["node-role.kubernetes.io/control-plane"]; !cp {
			out = append(out, n)
		}
	}
	if len(out) < 3 {
		t.Fatalf("%d workers; the e2e cluster has 3", len(out))
	}
	return out
}

// The pod network works across nodes: a pod on every worker reaches the cluster DNS service
// (CoreDNS runs on the control plane) by its cluster DNS name.
func TestSmokeEveryWorkerRunsPodsThatReachTheClusterNetwork(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	// kube-proxy's image is on every node and has bash, which can open TCP connections.
	const image = "secured.dev/k8s/kube-proxy:v1.36.3"
	var pods []*corev1.Pod
	for _, n := range workers(t, c) {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "smoke-net-", Namespace: "default"},
			Spec: corev1.PodSpec{
				NodeName:      n.Name,
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name: "net", Image: image, ImagePullPolicy: corev1.PullNever,
					Command: []string{"bash", "-c", "exec 3<>/dev/tcp/kube-dns.kube-system.svc.cluster.local/53 && echo ok"},
				}},
			},
		}
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(ctx, p) })
		pods = append(pods, p)
	}
	for _, p := range pods {
		eventually(t, 2*time.Minute, "pod "+p.Name+" on "+p.Spec.NodeName+" succeeds", func() error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
				return err
			}
			if p.Status.Phase != corev1.PodSucceeded {
				return fmt.Errorf("phase %s", p.Status.Phase)
			}
			return nil
		})
	}
}

// The product's images are on every node (make images loads them). Kubelets report their
// image lists periodically, so a just-loaded image may take a few seconds to show.
func TestSmokeImagesArePresent(t *testing.T) {
	c := newClient(t)
	want := []string{"secured.dev/manager:", "secured.dev/crypto-labeller:", "secured.dev/cert-manager-controller:",
		"secured.dev/cert-manager-webhook:", "secured.dev/cert-manager-cainjector:", "secured.dev/jre:",
		"secured.dev/cassandra:", "secured.dev/prometheus:", "secured.dev/k6:"}
	eventually(t, time.Minute, "every image on every worker", func() error {
		var missing []string
		for _, n := range workers(t, c) {
			var names []string
			for _, img := range n.Status.Images {
				names = append(names, img.Names...)
			}
			for _, prefix := range want {
				if !slices.ContainsFunc(names, func(s string) bool { return strings.Contains(s, prefix) }) {
					missing = append(missing, n.Name+": "+prefix+"*")
				}
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("missing %v", missing)
		}
		return nil
	})
}

// Every node carries exactly the crypto labels its real CPU warrants, minus what a person hid,
// hidden features are named, and its kernel's AES is labelled as /proc/crypto says.
func TestSmokeNodeCryptoLabelsMatchTheCPU(t *testing.T) {
	c := newClient(t)
	f, err := os.Open("/proc/cpuinfo") // Kind nodes share this machine's CPU
	if err != nil {
		t.Fatal(err)
	}
	features := placement.Features(f)
	_ = f.Close()
	pc, err := os.Open("/proc/crypto") // and its kernel
	if err != nil {
		t.Fatal(err)
	}
	kernelAES := placement.KernelAESValue(placement.KernelAES(pc))
	_ = pc.Close()
	var nodes corev1.NodeList
	if err := c.List(context.Background(), &nodes); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		want := placement.Labels(features, n.Labels[placement.HideFeaturesLabel])
		got := map[string]string{}
		for k, v := range n.Labels {
			if strings.HasPrefix(k, placement.LabelPrefix) || k == placement.HiddenFeaturesLabel {
				got[k] = v
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("node %s: labels %v, want %v", n.Name, got, want)
		}
		if got := n.Labels[placement.KernelAESLabel]; got != kernelAES {
			t.Errorf("node %s: %s=%q, want %q (this machine's /proc/crypto)", n.Name, placement.KernelAESLabel, got, kernelAES)
		}
	}
}

// cert-manager answers: a SelfSigned ClusterIssuer issues a Certificate.
func TestSmokeCertManagerIssues(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	issuer := &cmv1.ClusterIssuer{
		ObjectMeta: metav1.ObjectMeta{Name: "smoke-selfsigned"},
		Spec:       cmv1.IssuerSpec{IssuerConfig: cmv1.IssuerConfig{SelfSigned: &cmv1.SelfSignedIssuer{}}},
	}
	cert := &cmv1.Certificate{
		ObjectMeta: metav1.ObjectMeta{Name: "smoke", Namespace: "default"},
		Spec: cmv1.CertificateSpec{
			SecretName: "smoke-tls",
			CommonName: "smoke.default.svc",
			DNSNames:   []string{"smoke.default.svc"},
			PrivateKey: &cmv1.CertificatePrivateKey{Algorithm: cmv1.ECDSAKeyAlgorithm, Size: 256},
			IssuerRef:  cmmeta.IssuerReference{Name: issuer.Name, Kind: "ClusterIssuer"},
		},
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "smoke-tls", Namespace: "default"}}
	for _, o := range []client.Object{issuer, cert} {
		o := o
		eventually(t, 2*time.Minute, "creating "+o.GetName()+" (the cert-manager webhook must answer)", func() error {
			return client.IgnoreAlreadyExists(c.Create(ctx, o))
		})
		t.Cleanup(func() { _ = c.Delete(ctx, o) })
	}
	t.Cleanup(func() { _ = c.Delete(ctx, secret) })
	eventually(t, 2*time.Minute, "certificate issued", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(cert), cert); err != nil {
			return err
		}
		for _, cond := range cert.Status.Conditions {
			if cond.Type == cmv1.CertificateConditionReady && cond.Status == cmmeta.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("conditions %v", cert.Status.Conditions)
	})
	if err := c.Get(ctx, client.ObjectKeyFromObject(secret), secret); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(secret.Data["tls.crt"]), "BEGIN CERTIFICATE") {
		t.Errorf("secret %s holds no certificate", secret.Name)
	}
}
