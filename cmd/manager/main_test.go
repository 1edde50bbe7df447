package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/test/chart"
	"secured.dev/operator/internal/test/gobuild"
	"secured.dev/operator/internal/test/samples"
	"secured.dev/operator/internal/test/testenv"
	"secured.dev/operator/internal/test/tier"
)

func TestWatchNamespacesRefusesBadNames(t *testing.T) {
	for in, want := range map[string][]string{"": nil, " ": nil, "a": {"a"}, "team-a, team-b": {"team-a", "team-b"}} {
		if got, err := parseNamespaces(in); err != nil || !slices.Equal(got, want) {
			t.Errorf("parseNamespaces(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"Team", "a,,b", "a b", "a/b", strings.Repeat("x", 64)} {
		if _, err := parseNamespaces(in); err == nil || !strings.Contains(err.Error(), "--watch-namespaces") {
			t.Errorf("parseNamespaces(%q): %v, want an error naming the flag", in, err)
		}
	}
}

// The operator as the chart installs it, watching team-a: the chart's own ClusterRoles, Roles and
// bindings in a real API server, the chart's container arguments, and the operator impersonating
// its ServiceAccount, so that a right the chart lacks fails here as it would in a cluster. It
// manages what is in team-a (a plaintext and a TLS datastore), never sees team-b, applies the
// shipped profiles, elects itself leader, and serves metrics only to a caller allowed to read them.
func TestOperatorRunsWithTheChartsNamespacedRoles(t *testing.T) {
	tier.Full(t, "envtest and helm")
	g := NewWithT(t)
	inst := install(t, "watch.namespaces={team-a}")
	ctx, c, cfg := inst.ctx, inst.env.Client, inst.cfg
	g.Expect(inst.args).To(ContainElements("--leader-elect", "--watch-namespaces=team-a"))
	metricsAddr := freeAddr(t)
	inst.start(t, "--metrics-bind-address="+metricsAddr)

	plain := &v1alpha1.SecuredDatastore{
		ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "team-a"},
		Spec: v1alpha1.SecuredDatastoreSpec{Engine: v1alpha1.EngineCassandra, Cassandra: &v1alpha1.CassandraTopology{Nodes: ptr.To[int32](1)},
			Encryption: v1alpha1.DatastoreEncryption{ProfileRef: "plaintext"}},
	}
	tls := &v1alpha1.SecuredDatastore{
		ObjectMeta: metav1.ObjectMeta{Name: "secure", Namespace: "team-a"},
		Spec: v1alpha1.SecuredDatastoreSpec{Engine: v1alpha1.EngineCassandra, Cassandra: &v1alpha1.CassandraTopology{Nodes: ptr.To[int32](1)},
			Encryption: v1alpha1.DatastoreEncryption{ProfileRef: "tls13-aes128-gcm"}},
	}
	unseen := &v1alpha1.SecuredDatastore{
		ObjectMeta: metav1.ObjectMeta{Name: "unseen", Namespace: "team-b"},
		Spec: v1alpha1.SecuredDatastoreSpec{Engine: v1alpha1.EngineCassandra, Cassandra: &v1alpha1.CassandraTopology{Nodes: ptr.To[int32](1)},
			Encryption: v1alpha1.DatastoreEncryption{ProfileRef: "plaintext"}},
	}
	for _, ds := range []*v1alpha1.SecuredDatastore{plain, tls, unseen} {
		g.Expect(c.Create(ctx, ds)).To(Succeed())
	}

	// Every pass over team-a's datastores succeeds with the Role's rights alone.
	for _, ds := range []*v1alpha1.SecuredDatastore{plain, tls} {
		g.Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(ds), ds)).To(Succeed())
			synced := meta.FindStatusCondition(ds.Status.Conditions, v1alpha1.ConditionSynced)
			g.Expect(synced).NotTo(BeNil())
			g.Expect(synced.Status).To(Equal(metav1.ConditionTrue), "%s: %s", ds.Name, synced.Message)
			g.Expect(ds.Status.ObservedGeneration).To(Equal(ds.Generation))
		}).WithTimeout(60 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
	}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: plain.Name}, &appsv1.StatefulSet{})).To(Succeed())
	// No cert-manager runs here: the TLS datastore waits for the certificates it asked for.
	certs := &cmv1.CertificateList{}
	g.Expect(c.List(ctx, certs, client.InNamespace("team-a"))).To(Succeed())
	g.Expect(certs.Items).NotTo(BeEmpty(), "the TLS datastore's certificates")

	// team-b: not watched, not touched.
	g.Consistently(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(unseen), unseen)).To(Succeed())
		g.Expect(unseen.Status.Conditions).To(BeEmpty())
		g.Expect(unseen.Finalizers).To(BeEmpty())
		g.Expect(apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: "team-b", Name: "unseen"}, &appsv1.StatefulSet{}))).To(BeTrue())
	}).WithTimeout(3 * time.Second).Should(Succeed())

	// The shipped profiles, applied and reconciled through the ClusterRole.
	g.Eventually(func(g Gomega) {
		p := &v1alpha1.EncryptionProfile{}
		g.Expect(c.Get(ctx, client.ObjectKey{Name: "tls13-aes128-gcm"}, p)).To(Succeed())
		g.Expect(p.Status.ObservedGeneration).To(Equal(p.Generation))
	}).WithTimeout(30 * time.Second).Should(Succeed())
	lease := &coordinationv1.Lease{}
	g.Eventually(func() error {
		return c.Get(ctx, client.ObjectKey{Namespace: chart.Namespace, Name: "secured-datastore-operator.datastore.secured.dev"}, lease)
	}).Should(Succeed())

	// What the chart does not grant, the API server refuses the operator.
	clientset := kubernetes.NewForConfigOrDie(inst.env.Config)
	user := cfg.Impersonate
	for _, attrs := range []authorizationv1.ResourceAttributes{
		{Namespace: "team-b", Verb: "create", Group: "apps", Resource: "statefulsets"},
		{Namespace: "team-b", Verb: "get", Resource: "secrets"},
		{Namespace: "team-a", Verb: "list", Resource: "secrets"},
		{Namespace: "team-a", Verb: "create", Resource: "pods", Subresource: "exec"},
		{Namespace: "kube-system", Verb: "get", Resource: "secrets"},
		{Verb: "get", Resource: "namespaces", Name: "kube-system"},
		{Verb: "bind", Group: "rbac.authorization.k8s.io", Resource: "clusterroles"},
	} {
		review, err := clientset.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user.UserName, Groups: user.Groups, ResourceAttributes: &attrs},
		}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(review.Status.Allowed).To(BeFalse(), "the operator may %+v", attrs)
	}

	// Metrics: HTTPS, only for a caller the API server says may get /metrics.
	reader := chart.Release + "-secured-datastore-operator-metrics-reader"
	scraper, stranger := token(t, ctx, clientset, "scraper"), token(t, ctx, clientset, "stranger")
	g.Expect(c.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "scraper"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "scraper", Namespace: chart.Namespace}},
	})).To(Succeed())
	// controller-runtime's filter answers 500 to a token the API server rejects.
	for bearer, want := range map[string][]int{
		"": {http.StatusUnauthorized}, "not-a-token": {http.StatusUnauthorized, http.StatusInternalServerError},
		stranger: {http.StatusForbidden}, scraper: {http.StatusOK},
	} {
		g.Eventually(func(g Gomega) {
			status, body := scrape(g, metricsAddr, bearer)
			g.Expect(want).To(ContainElement(status))
			if status == http.StatusOK {
				g.Expect(body).To(ContainSubstring(`secured_datastore_info{datastore="plain"`))
			} else {
				g.Expect(body).NotTo(ContainSubstring("secured_datastore"))
			}
		}).WithTimeout(20*time.Second).Should(Succeed(), "bearer %.8q", bearer)
	}
	// Plain HTTP gets no metrics either.
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		g.Expect(string(body)).NotTo(ContainSubstring("secured_datastore"))
	}
}

// installation is the chart's RBAC in a real API server and the operator's arguments from the
// chart's Deployment, ready to run operators as the chart's ServiceAccount.
type installation struct {
	ctx  context.Context
	env  *testenv.Env
	cfg  *rest.Config
	args []string
	// keyServerCert is the chart's certificate of the tunnel key server.
	keyServerCert []byte
}

// install starts an API server, creates the chart's namespace and team-a and team-b, and the
// chart's ServiceAccount, ClusterRoles, Roles and bindings rendered with sets.
func install(t *testing.T, sets ...string) *installation {
	t.Helper()
	g := NewWithT(t)
	env, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c := env.Client
	for _, ns := range []string{chart.Namespace, "team-a", "team-b"} {
		g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}
	objs := chart.Render(t, sets...)
	for _, kind := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} {
		for _, u := range objs[kind] {
			g.Expect(c.Create(ctx, &u)).To(Succeed(), "%s %s", kind, u.GetName())
		}
	}
	dep := chart.As[appsv1.Deployment](t, objs["Deployment"][0])
	cfg := rest.CopyConfig(env.Config)
	sa := dep.Spec.Template.Spec.ServiceAccountName
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + chart.Namespace + ":" + sa,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + chart.Namespace, "system:authenticated"},
	}
	// The key server's certificate the chart made, as its Secret's volume shows it.
	keysDir := t.TempDir()
	keysTLS := chart.As[corev1.Secret](t, objs["Secret"][0])
	for name, b := range keysTLS.Data {
		g.Expect(os.WriteFile(filepath.Join(keysDir, name), b, 0o600)).To(Succeed())
	}
	// The Deployment's arguments, with the paths, addresses and namespace of this test.
	var args []string
	for _, a := range dep.Spec.Template.Spec.Containers[0].Args {
		switch {
		case strings.HasPrefix(a, "--shipped-profiles="):
			a = "--shipped-profiles=" + samples.ProfilesDir()
		case strings.HasPrefix(a, "--tunnel-keys-cert-dir="):
			a = "--tunnel-keys-cert-dir=" + keysDir
		}
		args = append(args, a)
	}
	args = append(args, "--health-probe-bind-address=0", "--namespace="+chart.Namespace, "--leader-election-namespace="+chart.Namespace,
		"--tunnel-keys-bind-address=127.0.0.1:0")
	return &installation{ctx: ctx, env: env, cfg: cfg, args: args, keyServerCert: keysTLS.Data[corev1.TLSCertKey]}
}

// start runs one operator replica with the installation's arguments and extra ones; stop
// cancels it (as a killed pod's replica) and waits for it; the test's end stops it too.
func (in *installation) start(t *testing.T, extra ...string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(in.ctx)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, func() (*rest.Config, error) { return in.cfg, nil }, append(append([]string{}, in.args...), extra...))
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("the operator stopped with: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// token creates a ServiceAccount in the chart's namespace and returns a token the API server issued it.
func token(t *testing.T, ctx context.Context, cs kubernetes.Interface, name string) string {
	t.Helper()
	if _, err := cs.CoreV1().ServiceAccounts(chart.Namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(chart.Namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token for %s: %v", name, err)
	}
	return tr.Status.Token
}

func scrape(g Gomega, addr, bearer string) (int, string) {
	// The endpoint's certificate is self-signed; what is under test is who may read it.
	httpClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec
	return call(g, httpClient, http.MethodGet, "https://"+addr+"/metrics", bearer)
}

// call sends a request with the bearer token (none when empty) and returns the status and body.
func call(g Gomega, httpClient *http.Client, method, url, bearer string) (int, string) {
	req, err := http.NewRequest(method, url, nil)
	g.Expect(err).NotTo(HaveOccurred())
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := httpClient.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, string(body)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprintf("127.0.0.1:%d", l.Addr().(*net.TCPAddr).Port)
}

// Two replicas, as the chart runs them, as two processes of the real binary: one holds the
// lease and reconciles, the other waits. When the leader is killed (SIGKILL: no lease release,
// as when its node dies), the other takes the lease once it expires and carries on, with a
// change made while no one was leading.
func TestStandbyTakesOverWhenTheLeaderDies(t *testing.T) {
	tier.Full(t, "envtest, helm and the manager binary")
	g := NewWithT(t)
	inst := install(t, "watch.namespaces={team-a}", "replicaCount=2")
	ctx, c := inst.ctx, inst.env.Client
	holder := func() string {
		lease := &coordinationv1.Lease{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: chart.Namespace, Name: "secured-datastore-operator.datastore.secured.dev"}, lease); err != nil {
			return ""
		}
		return ptr.Deref(lease.Spec.HolderIdentity, "")
	}
	leaderProc := inst.process(t, "first")
	g.Eventually(holder, 60*time.Second).ShouldNot(BeEmpty())
	leader := holder()
	inst.process(t, "second")

	ds := &v1alpha1.SecuredDatastore{
		ObjectMeta: metav1.ObjectMeta{Name: "ha", Namespace: "team-a"},
		Spec: v1alpha1.SecuredDatastoreSpec{Engine: v1alpha1.EngineCassandra,
			Cassandra:  &v1alpha1.CassandraTopology{Nodes: ptr.To[int32](1), Authentication: v1alpha1.CassandraAuthenticationNone},
			Encryption: v1alpha1.DatastoreEncryption{ProfileRef: "plaintext"}},
	}
	g.Eventually(func() error { return c.Create(ctx, ds) }, 30*time.Second).Should(Succeed()) // once the shipped profile exists
	replicas := func() int32 {
		sts := &appsv1.StatefulSet{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(ds), sts); err != nil {
			return 0
		}
		return ptr.Deref(sts.Spec.Replicas, 0)
	}
	g.Eventually(replicas, 30*time.Second).Should(BeEquivalentTo(1))
	g.Consistently(holder, 3*time.Second).Should(Equal(leader), "the standby took the lease from a live leader")

	if err := leaderProc.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(ds), ds)).To(Succeed())
	ds.Spec.Cassandra.Nodes = ptr.To[int32](2)
	g.Expect(c.Update(ctx, ds)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(holder()).NotTo(BeElementOf(leader, ""))
		g.Expect(replicas()).To(BeEquivalentTo(2))
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(ds), ds)).To(Succeed())
		g.Expect(ds.Status.ObservedGeneration).To(Equal(ds.Generation))
	}, 90*time.Second).Should(Succeed())
	t.Logf("the standby took the lease and applied the change %s after the leader was killed", time.Since(killed).Round(100*time.Millisecond))
}

// process runs one replica as a process of the manager binary, built once, with the
// installation's arguments, extra ones, and a kubeconfig that impersonates the chart's ServiceAccount. The
// test's end kills it (by its PID) if the test has not.
func (in *installation) process(t *testing.T, name string, extra ...string) *exec.Cmd {
	t.Helper()
	bin := gobuild.Command(t, "secured.dev/operator/cmd/manager")
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: in.cfg.Host, CertificateAuthorityData: in.cfg.CAData}
	cfg.AuthInfos["operator"] = &clientcmdapi.AuthInfo{ClientCertificateData: in.cfg.CertData, ClientKeyData: in.cfg.KeyData,
		Impersonate: in.cfg.Impersonate.UserName, ImpersonateGroups: in.cfg.Impersonate.Groups}
	cfg.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "operator"}
	cfg.CurrentContext = "envtest"
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append(append(append([]string{}, in.args...), "--metrics-bind-address=0"), extra...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("replica %s:\n%s", name, out.String())
		}
	})
	return cmd
}
