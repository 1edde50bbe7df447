//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/benchresult"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/render/certs"
)

// liveRate is the client's fixed rate, operations per second: enough that every restart of a
// node falls among operations in flight, little enough for a 2-core host running three nodes.
const liveRate = 40

// liveEncryption is TLS 1.3 with one suite on both channels, in the given mode.
func liveEncryption(mode v1alpha1.ChannelMode) v1alpha1.DatastoreEncryption {
	ch := v1alpha1.ChannelEncryption{Mode: mode}
	if mode != v1alpha1.ChannelDisabled {
		ch.TLS = &v1alpha1.TLSSettings{Protocols: []v1alpha1.TLSProtocol{"TLSv1.3"}, CipherSuites: []v1alpha1.CipherSuite{"TLS_AES_128_GCM_SHA256"}}
	}
	return v1alpha1.DatastoreEncryption{EncryptionSettings: v1alpha1.EncryptionSettings{
		ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: ch},
		NodeToNode:   &v1alpha1.NodeToNodeEncryption{ChannelEncryption: ch},
	}}
}

// plaintextTrio is a 3-node plaintext Cassandra probed every 30 s (the shortest interval the API
// takes): where live changes start.
func plaintextTrio(name, namespace string) *v1alpha1.SecuredDatastore {
	return &v1alpha1.SecuredDatastore{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: v1alpha1.SecuredDatastoreSpec{
			Engine:       v1alpha1.EngineCassandra,
			Cassandra:    smallCassandra(3),
			Encryption:   liveEncryption(v1alpha1.ChannelDisabled),
			Verification: &v1alpha1.VerificationSpec{Interval: &metav1.Duration{Duration: 30 * time.Second}},
		},
	}
}

// createPlaintextTrio creates plaintextTrio(name, namespace) and waits until it is Ready and
// its wire verified.
func createPlaintextTrio(t *testing.T, c client.Client, name, namespace string) *v1alpha1.SecuredDatastore {
	t.Helper()
	ds := plaintextTrio(name, namespace)
	start := time.Now()
	if err := c.Create(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	waitReady(t, c, ds, start, "ready")
	waitVerified(t, c, ds)
	t.Logf("plaintext 3-node datastore Ready and verified in %s", time.Since(start).Round(time.Second))
	return ds
}

// An application's view of the operator's promises. A 3-node plaintext Cassandra serves a k6
// client at a fixed rate (YCSB workload A, QUORUM, RF 3; the client offers TLS 1.3 first and
// falls back to plaintext where a node does not speak it yet, retries a statement on another
// node, and reads its trust bundle at each handshake, as an application configured for the
// migration would). Meanwhile TLS goes Disabled → Optional → Required on both channels, the
// node certificate is renewed, the CA is rotated and a node restarts under the new CA. The
// probe must follow every step, and not one operation may fail or start late.
func TestTLSEnablementAndCertificateRotationUnderLoadFailNoOperation(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := testNamespace(t, c, "live", "restricted")
	ds := createPlaintextTrio(t, c, "payments", ns.Name)

	host := cassandra.NamesOf(ds).ClientService() + "." + ns.Name + ".svc"
	run := startSteadyYCSB(t, c, ds, map[string]string{
		"CQL_TLS_PROTOCOL": "TLSv1.3", "CQL_TLS_CIPHER_SUITE": "TLS_AES_128_GCM_SHA256", "CQL_TLS_FALLBACK": "plaintext",
		"CQL_TLS_CA_FILE": "/etc/secured/ca/ca.crt", "CQL_TLS_SERVER_NAME": host + ".cluster.local",
	})

	isClient := func(o v1alpha1.ObservedChannel) bool { return o.Channel == "ClientToNode" }
	for _, step := range []struct {
		mode v1alpha1.ChannelMode
		want func(o v1alpha1.ObservedChannel) error
	}{
		{v1alpha1.ChannelOptional, func(o v1alpha1.ObservedChannel) error {
			if isClient(o) && (!ptr.Deref(o.PlaintextAccepted, false) || !slices.Contains(o.Protocols, "TLSv1.3")) {
				return fmt.Errorf("%s accepts %v, plaintext %v; want TLSv1.3 and plaintext", o.Endpoint, o.Protocols, ptr.Deref(o.PlaintextAccepted, false))
			}
			return nil
		}},
		{v1alpha1.ChannelRequired, func(o v1alpha1.ObservedChannel) error {
			if ptr.Deref(o.PlaintextAccepted, true) || !slices.Equal(o.Protocols, []string{"TLSv1.3"}) {
				return fmt.Errorf("%s %s accepts %v, plaintext %v; want TLSv1.3 only", o.Channel, o.Endpoint, o.Protocols, ptr.Deref(o.PlaintextAccepted, true))
			}
			return nil
		}},
	} {
		began := time.Now()
		patch := client.MergeFrom(ds.DeepCopy())
		ds.Spec.Encryption = liveEncryption(step.mode)
		if err := c.Patch(ctx, ds, patch); err != nil {
			t.Fatal(err)
		}
		waitWire(t, c, ds, began, fmt.Sprintf("both channels %s", step.mode), step.want)
		run.alive(t)
		t.Logf("both channels %s: rolled out and verified in %s", step.mode, time.Since(began).Round(time.Second))
	}

	// A renewal shows on the wire as a new serial on every endpoint.
	renew := func(name string) { forceIssuing(t, c, ns.Name, name) }
	serials := func() map[string]string {
		out := map[string]string{}
		for _, o := range ds.Status.Encryption.Observed {
			if o.Certificate != nil {
				out[o.Endpoint] = o.Certificate.Serial
			}
		}
		return out
	}
	// nodeRenewal renews the node certificate and waits until every endpoint serves the one in
	// the Secret, and returns it.
	nodeRenewal := func(what string) *x509.Certificate {
		t.Helper()
		before, began := serials(), time.Now()
		renew(certs.NodeCertificate(ds))
		var issued *x509.Certificate
		waitWire(t, c, ds, began, what, func(o v1alpha1.ObservedChannel) error {
			if issued == nil || issued.SerialNumber.String() == before[o.Endpoint] {
				issued = secretCertificate(t, c, ns.Name, certs.NodeSecret(ds), "tls.crt")
			}
			if o.Certificate == nil || o.Certificate.Serial != issued.SerialNumber.String() {
				return fmt.Errorf("%s serves serial %v, the Secret holds %s", o.Endpoint, o.Certificate, issued.SerialNumber)
			}
			return nil
		})
		run.alive(t)
		t.Logf("%s: every endpoint serves serial %s, %s after the renewal was forced (before: %v)", what, issued.SerialNumber, time.Since(began).Round(time.Second), before)
		return issued
	}
	nodeRenewal("node certificate renewed")

	// CA rotation: a new CA; the nodes' trust bundle gains it; a node certificate it signs.
	oldCA := secretCertificate(t, c, ns.Name, certs.CACertificate(ds), "tls.crt")
	renew(certs.CACertificate(ds))
	newCA := waitNewCA(t, c, ds, oldCA)
	leaf := nodeRenewal("node certificate of the new CA")
	if err := leaf.CheckSignatureFrom(newCA); err != nil {
		t.Fatalf("the node certificate is not signed by the new CA: %v", err)
	}

	// A node that starts from scratch under the new CA rejoins the ring.
	pod := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: ds.Name + "-0"}, pod); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if err := c.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	eventually(t, 8*time.Minute, "the restarted node serves again", func() error {
		p := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), p); err != nil {
			return err
		}
		if p.UID == pod.UID || !podReady(p) {
			return fmt.Errorf("pod %s not yet back", p.Name)
		}
		return nil
	})
	waitWire(t, c, ds, began, "node 0 restarted under the new CA", func(v1alpha1.ObservedChannel) error { return nil })
	t.Logf("node 0 restarted under the new CA and verified in %s", time.Since(began).Round(time.Second))

	s := stopSteadyYCSB(t, run)
	if s.Connections["plaintext"] == 0 || s.Connections["tls"] == 0 || s.Protocol != "TLSv1.3" || s.Suite != "TLS_AES_128_GCM_SHA256" {
		t.Errorf("connections %v, last session %s %s; want plaintext ones before TLS and TLS ones after, TLSv1.3 TLS_AES_128_GCM_SHA256", s.Connections, s.Protocol, s.Suite)
	}
}

// startSteadyYCSB loads 1,000 records into the datastore and starts the application the live
// changes are judged by: the k6 client at liveRate (YCSB workload A, QUORUM, RF 3), retrying a
// statement on another node, every write recorded to be read back at ALL once it stops; extra
// adds to its environment (TLS offers). It returns once the client has run for 20 s, the
// operations before the first change.
func startSteadyYCSB(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore, extra map[string]string) *k6Client {
	t.Helper()
	host := cassandra.NamesOf(ds).ClientService() + "." + ds.Namespace + ".svc"
	env := with(map[string]string{"CQL_HOSTS": host + ":9042", "CQL_CONSISTENCY": "QUORUM", "YCSB_RECORD_COUNT": "1000"}, extra)
	load := startK6(t, c, ds, "ycsb-load", with(env, map[string]string{"YCSB_PHASE": "load", "CQL_REPLICATION_FACTOR": "3"}))
	if s := load.wait(t, 5*time.Minute); s.Errors != 0 || s.Operations != 1000 {
		t.Fatalf("load phase: %d records, %d errors (%s)", s.Operations, s.Errors, s.FirstError)
	}
	run := startK6(t, c, ds, "ycsb-run", with(env, map[string]string{
		"YCSB_PHASE": "run", "YCSB_RATE": fmt.Sprint(liveRate), "YCSB_VUS": "64", "YCSB_DURATION": "60m", "CQL_RETRIES": "5",
		"YCSB_HISTORY_FILE": historyDir + "/history", "YCSB_VERIFY_WRITES": "true",
	}))
	run.waitFor(t, "YCSB run against", 3*time.Minute)
	run.started = time.Now()
	time.Sleep(20 * time.Second)
	return run
}

// stopSteadyYCSB stops the client startSteadyYCSB started and checks the application's view of
// the changes: not one operation failed or started late, the rate held, and every
// acknowledged write reads back intact.
func stopSteadyYCSB(t *testing.T, run *k6Client) benchresult.Summary {
	t.Helper()
	s := run.stop(t)
	elapsed := time.Since(run.started)
	t.Logf("client: %d operations in %s (%.1f ops/s), %d failed, %d not started in time; %s %s; connections %v",
		s.Operations, elapsed.Round(time.Second), float64(s.Operations)/elapsed.Seconds(), s.Errors, s.DroppedIterations, s.Protocol, s.Suite, s.Connections)
	for _, l := range s.Latencies {
		t.Logf("  %-6s p50 %d µs, p99 %d µs, max %d µs", l.Operation, l.P50, l.P99, l.Max)
	}
	if s.Errors != 0 {
		t.Errorf("%d client operations failed (first: %s); want none; the client said:\n%s", s.Errors, s.FirstError, run.complaints())
	}
	if s.DroppedIterations != 0 {
		t.Errorf("%d operations could not start on time; want none", s.DroppedIterations)
	}
	if want := int64(0.9 * liveRate * elapsed.Seconds()); s.Operations < want {
		t.Errorf("%d operations; want at least %d at %d/s", s.Operations, want, liveRate)
	}
	if w := s.Writes; w == nil {
		t.Error("the client checked no write; want every acknowledged write read back")
	} else {
		t.Logf("writes: %d acknowledged; %d key-fields read back at %s: %d verified, %d lost, %d stale, %d corrupted, %d unreadable",
			w.Acknowledged, w.Checked, w.Consistency, w.Verified, w.Lost, w.Stale, w.Corrupted, w.Unreadable)
		if !w.Intact() {
			t.Errorf("acknowledged writes not found intact (first: %s)", w.FirstProblem)
		}
	}
	return s
}

// waitNewCA waits until cert-manager has issued a CA other than oldCA and the datastore's trust
// bundle holds both, and returns the new one.
func waitNewCA(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore, oldCA *x509.Certificate) *x509.Certificate {
	t.Helper()
	ctx := context.Background()
	var newCA *x509.Certificate
	eventually(t, 3*time.Minute, "cert-manager issues a new CA", func() error {
		newCA = secretCertificate(t, c, ds.Namespace, certs.CACertificate(ds), "tls.crt")
		if newCA.Equal(oldCA) {
			return fmt.Errorf("the CA Secret still holds serial %s", oldCA.SerialNumber)
		}
		return nil
	})
	eventually(t, 3*time.Minute, "the trust bundle holds both CAs", func() error {
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: certs.TrustConfigMap(ds)}, cm); err != nil {
			return err
		}
		var bundled [][]byte
		for rest := []byte(cm.Data["ca.crt"]); ; {
			var b *pem.Block
			if b, rest = pem.Decode(rest); b == nil {
				break
			}
			bundled = append(bundled, b.Bytes)
		}
		for _, ca := range []*x509.Certificate{oldCA, newCA} {
			if !slices.ContainsFunc(bundled, func(der []byte) bool { return bytes.Equal(der, ca.Raw) }) {
				return fmt.Errorf("CA serial %s not among the bundle's %d", ca.SerialNumber, len(bundled))
			}
		}
		return nil
	})
	return newCA
}

// forceIssuing renews a Certificate now, as cmctl renew does: cert-manager issues again when
// the Issuing condition is set.
func forceIssuing(t *testing.T, c client.Client, namespace, name string) {
	t.Helper()
	crt := &cmv1.Certificate{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, crt); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(crt.DeepCopy())
	crt.Status.Conditions = append(crt.Status.Conditions, cmv1.CertificateCondition{Type: cmv1.CertificateConditionIssuing,
		Status: cmmeta.ConditionTrue, Reason: "ManuallyTriggered", Message: "renewal forced by the e2e test"})
	if err := c.Status().Patch(context.Background(), crt, patch); err != nil {
		t.Fatal(err)
	}
}

// waitWire waits until the datastore has rolled out its spec (Ready, every node ready),
// the probe has looked at every endpoint since `since` and verified it, and want holds for
// every observation. It logs each new progress line.
func waitWire(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore, since time.Time, what string, want func(v1alpha1.ObservedChannel) error) {
	t.Helper()
	last := ""
	eventually(t, 20*time.Minute, what, func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(ds), ds); err != nil {
			return err
		}
		progress := ""
		if p := meta.FindStatusCondition(ds.Status.Conditions, v1alpha1.ConditionProgressing); p != nil {
			progress = p.Message
		}
		if line := fmt.Sprintf("%s, %d/%d ready: %s", ds.Status.Phase, ds.Status.ReadyNodes, ds.Status.Nodes, progress); line != last {
			t.Logf("%6s %s", time.Since(since).Round(time.Second), line)
			last = line
		}
		if ds.Status.ObservedGeneration < ds.Generation || ds.Status.Phase != v1alpha1.PhaseReady || ds.Status.ReadyNodes != ds.Status.Nodes {
			return fmt.Errorf("phase %s, %d/%d nodes ready", ds.Status.Phase, ds.Status.ReadyNodes, ds.Status.Nodes)
		}
		v := meta.FindStatusCondition(ds.Status.Conditions, v1alpha1.ConditionEncryptionVerified)
		if v == nil || v.Status != metav1.ConditionTrue {
			return fmt.Errorf("EncryptionVerified %+v", v)
		}
		if ds.Status.Encryption == nil || len(ds.Status.Encryption.Observed) == 0 {
			return fmt.Errorf("nothing observed")
		}
		for _, o := range ds.Status.Encryption.Observed {
			if o.LastProbeTime.Time.Before(since) {
				return fmt.Errorf("%s last probed %s, before the change", o.Endpoint, o.LastProbeTime.Format(time.TimeOnly))
			}
			if err := want(o); err != nil {
				return err
			}
		}
		return nil
	})
}

// secretCertificate is the first certificate under key in a Secret.
func secretCertificate(t *testing.T, c client.Client, namespace, name, key string) *x509.Certificate {
	t.Helper()
	s := &corev1.Secret{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, s); err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(s.Data[key])
	if b == nil {
		t.Fatalf("Secret %s has no PEM certificate under %s", name, key)
	}
	crt, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return crt
}

func podReady(p *corev1.Pod) bool {
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

func with(base, extra map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// k6Client is a k6 pod running the product's YCSB script, its output followed as it runs.
// historyDir is where a k6 pod may write: its root file system is read-only.
const historyDir = "/var/run/ycsb"

type k6Client struct {
	c       client.Client
	started time.Time // when the run phase began to count
	pod     *corev1.Pod
	mu      sync.Mutex
	out     bytes.Buffer
	done    chan struct{}
}

// startK6 runs bench/k6/ycsb.js in a pod of the datastore's namespace under the restricted Pod
// Security Standard, trusting the datastore's CA bundle: the volume is optional because the
// bundle appears only when the datastore's TLS does, and the kubelet adds it to the running pod.
func startK6(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore, name string, env map[string]string) *k6Client {
	t.Helper()
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	vars := []corev1.EnvVar{{Name: "YCSB_SUMMARY_FILE", Value: corev1.TerminationMessagePathDefault}, {Name: "CQL_LOGIN_DIR", Value: "/etc/secured/login"}}
	for _, k := range keys {
		vars = append(vars, corev1.EnvVar{Name: k, Value: env[k]})
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ds.Namespace},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: ptr.To[int64](60),
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532), FSGroup: ptr.To[int64](65532),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{
				Name: "k6", Image: operatorFlag(t, c, "k6-image"), ImagePullPolicy: corev1.PullNever,
				Args:                     []string{"run", "--no-usage-report", "--no-color", "--quiet", "/bench/k6/ycsb.js"},
				Env:                      vars,
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				VolumeMounts: []corev1.VolumeMount{{Name: "ca", MountPath: "/etc/secured/ca", ReadOnly: true},
					{Name: "login", MountPath: "/etc/secured/login", ReadOnly: true}, {Name: "history", MountPath: historyDir}},
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			}},
			Volumes: []corev1.Volume{{Name: "ca", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: certs.TrustConfigMap(ds)}, Optional: ptr.To(true)}}},
				// The benchmark clients' role: the ycsb keyspace only.
				{Name: "login", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: cassandra.NamesOf(ds).ClientSecret(), DefaultMode: ptr.To[int32](0o440)}}},
				{Name: "history", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
	if err := c.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	k := &k6Client{c: c, pod: pod, done: make(chan struct{})}
	eventually(t, 3*time.Minute, name+" runs", func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(pod), pod); err != nil {
			return err
		}
		if pod.Status.Phase == corev1.PodPending {
			return fmt.Errorf("pod %s", pod.Status.Phase)
		}
		return nil
	})
	cs, err := kubernetes.NewForConfig(ctrl.GetConfigOrDie())
	if err != nil {
		t.Fatal(err)
	}
	logs, err := cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: "k6", Follow: true}).Stream(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(k.done)
		defer logs.Close()
		sc := bufio.NewScanner(logs)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			k.mu.Lock()
			k.out.Write(sc.Bytes())
			k.out.WriteByte('\n')
			k.mu.Unlock()
		}
	}()
	return k
}

func (k *k6Client) output() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.out.String()
}

// complaints are the client's warning and error lines, with k6's timestamps: when in a run
// something failed.
func (k *k6Client) complaints() string {
	var out []string
	for _, line := range strings.Split(k.output(), "\n") {
		if strings.Contains(line, "level=warning") || strings.Contains(line, "level=error") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// waitFor waits for a line of the client's output.
func (k *k6Client) waitFor(t *testing.T, text string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, fmt.Sprintf("%s prints %q", k.pod.Name, text), func() error {
		if out := k.output(); !strings.Contains(out, text) {
			return fmt.Errorf("output so far:\n%s", out)
		}
		return nil
	})
}

// alive fails the test when the client has ended: what follows would not be under load.
func (k *k6Client) alive(t *testing.T) {
	t.Helper()
	select {
	case <-k.done:
		t.Fatalf("the client %s ended early; its output:\n%s", k.pod.Name, k.output())
	default:
	}
}

// wait waits for the client to end by itself and returns its summary.
func (k *k6Client) wait(t *testing.T, timeout time.Duration) benchresult.Summary {
	t.Helper()
	select {
	case <-k.done:
	case <-time.After(timeout):
		t.Fatalf("%s did not end within %s; its output:\n%s", k.pod.Name, timeout, k.output())
	}
	return k.summary(t)
}

// stop ends the client as a deployment would (SIGTERM: k6 stops, discards the operations in
// flight and writes its summary) and returns the summary.
func (k *k6Client) stop(t *testing.T) benchresult.Summary {
	t.Helper()
	if err := k.c.Delete(context.Background(), k.pod); err != nil {
		t.Fatal(err)
	}
	return k.wait(t, 2*time.Minute)
}

// summary is the JSON line the script prints last.
func (k *k6Client) summary(t *testing.T) benchresult.Summary {
	t.Helper()
	out := k.output()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], `{"version"`) {
			s, err := benchresult.Parse([]byte(lines[i]))
			if err != nil {
				t.Fatalf("%s summary: %v", k.pod.Name, err)
			}
			return s
		}
	}
	t.Fatalf("%s printed no summary; its output:\n%s", k.pod.Name, out)
	return benchresult.Summary{}
}

// operatorFlag is the value of one of the installed operator's flags: the images it runs are
// the ones make deploy built last, while the nodes may still hold earlier builds.
func operatorFlag(t *testing.T, c client.Client, name string) string {
	t.Helper()
	for _, a := range operatorContainer(t, c).Args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	t.Fatalf("the operator runs without --%s", name)
	return ""
}

// operatorSibling is the image of another of the product's Go programs built with the
// operator's: hack/kind/images.sh tags them all with one hash of the module's sources.
func operatorSibling(t *testing.T, c client.Client, name string) string {
	t.Helper()
	image := operatorContainer(t, c).Image
	repo, tag, ok := strings.Cut(image, ":")
	if !ok || !strings.HasSuffix(repo, "/manager") {
		t.Fatalf("the operator's image %q is not secured.dev/manager:TAG; deploy it with make deploy", image)
	}
	return strings.TrimSuffix(repo, "manager") + name + ":" + tag
}

func operatorContainer(t *testing.T, c client.Client) corev1.Container {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "secured-system", Name: "secured-datastore-operator"}, d); err != nil {
		t.Fatal(err)
	}
	return d.Spec.Template.Spec.Containers[0]
}
