//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/render/certs"
	"secured.dev/operator/internal/render/hbase"
)

// openPorts runs a pod in namespace that tries a TCP connection to each port of host and
// returns those that opened. A port a NetworkPolicy closes drops the SYN, so its try ends at
// the timeout; a refused or open port answers at once. Host and ports come from the API and
// from constants, and reach the shell as positional arguments, never as script text.
func openPorts(t *testing.T, c client.Client, namespace, host string, ports ...int32) map[int32]bool {
	t.Helper()
	ctx := context.Background()
	args := []string{"bash", "-c", `h=$1; shift; for p; do if timeout 3 bash -c 'exec 3<>/dev/tcp/$0/$1' "$h" "$p" 2>/dev/null; then echo "$p open"; else echo "$p closed"; fi; done`, "probe", host}
	for _, p := range ports {
		args = append(args, strconv.Itoa(int(p)))
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "access-", Namespace: namespace},
		Spec: corev1.PodSpec{
			RestartPolicy:   corev1.RestartPolicyNever,
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65534), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{
				// kube-proxy's image is on every node and has bash and coreutils' timeout.
				Name: "probe", Image: "secured.dev/k8s/kube-proxy:v1.36.3", ImagePullPolicy: corev1.PullNever, Command: args,
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			}},
		},
	}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, pod) })
	eventually(t, 2*time.Minute, "access probe pod "+pod.Name+" finishes", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return err
		}
		if pod.Status.Phase != corev1.PodSucceeded {
			return fmt.Errorf("phase %s", pod.Status.Phase)
		}
		return nil
	})
	open := map[int32]bool{}
	for _, line := range strings.Split(podLog(t, pod, "probe"), "\n") {
		port, state, ok := strings.Cut(line, " ")
		if n, err := strconv.Atoi(port); ok && err == nil && state == "open" {
			open[int32(n)] = true
		}
	}
	return open
}

// expectAccess checks, from a pod of namespace from, that exactly the ports listed as open
// open on host (what names it in the log).
func expectAccess(t *testing.T, c client.Client, from, what, host string, ports map[int32]bool) {
	t.Helper()
	var list []int32
	for p := range ports {
		list = append(list, p)
	}
	got := openPorts(t, c, from, host, list...)
	for p, want := range ports {
		if got[p] != want {
			t.Errorf("from namespace %s to %s (%s) port %d: open = %v, want %v", from, what, host, p, got[p], want)
		}
	}
	t.Logf("from namespace %s to %s (%s): ports %v open as the NetworkPolicy says", from, what, host, ports)
}

func podLog(t *testing.T, pod *corev1.Pod, container string) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(ctrl.GetConfigOrDie())
	if err != nil {
		t.Fatal(err)
	}
	r, err := cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: container}).Stream(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// firstPodIP is the address of the datastore's first pod that matches labels.
func firstPodIP(t *testing.T, c client.Client, namespace string, labels map[string]string) string {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods, client.InNamespace(namespace), client.MatchingLabels(labels)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Status.PodIP != "" {
			return p.Status.PodIP
		}
	}
	t.Fatalf("no pod with an address matches %v in %s", labels, namespace)
	return ""
}

// cassandraIsClosedToStrangers: the datastore's namespace reaches CQL and nothing else, a pod
// of another namespace reaches nothing, and a CQL session without a login is refused.
func cassandraIsClosedToStrangers(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore) {
	t.Helper()
	host := firstPodIP(t, c, ds.Namespace, cassandra.Selector(ds))
	stranger := testNamespace(t, c, "stranger", "restricted")
	what := "a node of Cassandra " + ds.Name
	expectAccess(t, c, ds.Namespace, what, host, map[int32]bool{cassandra.NativePort: true, cassandra.StoragePort: false, 7199: false})
	expectAccess(t, c, stranger.Name, what, host, map[int32]bool{cassandra.NativePort: false, cassandra.StoragePort: false, 7199: false})

	job := cqlClientJob(t, c, ds, "cql-anonymous", "")
	if log := refusedJob(t, c, job); !strings.Contains(log, "authentication required") {
		t.Errorf("the anonymous client failed, but not for want of a login:\n%s", log)
	} else {
		t.Log("a CQL client without a login: refused (authentication required)")
	}
}

// refusedJob waits for a cql-client Job that must fail and returns its pod's log.
func refusedJob(t *testing.T, c client.Client, job *batchv1.Job) string {
	t.Helper()
	eventually(t, 3*time.Minute, "the CQL client "+job.Name+" is refused", func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(job), job); err != nil {
			return err
		}
		if job.Status.Succeeded > 0 {
			t.Fatalf("the CQL client %s was let in", job.Name)
		}
		if job.Status.Failed == 0 {
			return fmt.Errorf("not failed yet")
		}
		return nil
	})
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods, client.InNamespace(job.Namespace), client.MatchingLabels{"batch.kubernetes.io/job-name": job.Name}); err != nil || len(pods.Items) == 0 {
		t.Fatalf("the pod of %s: %v (%d pods)", job.Name, err, len(pods.Items))
	}
	return podLog(t, &pods.Items[0], "cql")
}

// cqlClientJob runs cql-client against ds over TLS, logged in with the login Secret named
// (none when empty), with extra flags; the node certificate doubles as its client certificate
// (it has the client-auth usage). Without a login it is expected to be refused and runs once.
func cqlClientJob(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore, name, loginSecret string, extra ...string) *batchv1.Job {
	t.Helper()
	return cqlClientJobWith(t, c, ds, name, certs.NodeSecret(ds), loginSecret, loginSecret == "", extra...)
}

// cqlClientJobWith is cqlClientJob presenting the certificate in certSecret; refused: the
// client is expected to fail, once.
func cqlClientJobWith(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore, name, certSecret, loginSecret string, refused bool, extra ...string) *batchv1.Job {
	t.Helper()
	args := append([]string{"--hosts=" + ds.Name + "." + ds.Namespace + ".svc:9042", "--ca=/tls/ca.crt", "--cert=/tls/tls.crt", "--key=/tls/tls.key"}, extra...)
	mounts := []corev1.VolumeMount{{Name: "tls", MountPath: "/tls", ReadOnly: true}}
	volumes := []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: certSecret}}}}
	if loginSecret != "" {
		args = append(args, "--login=/login")
		mounts = append(mounts, corev1.VolumeMount{Name: "login", MountPath: "/login", ReadOnly: true})
		volumes = append(volumes, corev1.Volume{Name: "login", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: loginSecret}}})
	}
	backoff := int32(2)
	if refused {
		backoff = 0 // once is enough
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ds.Namespace},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To(backoff),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy:   corev1.RestartPolicyNever,
				SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
				Containers: []corev1.Container{{
					Name: "cql", Image: operatorSibling(t, c, "cql-client"), ImagePullPolicy: corev1.PullNever,
					Args: args, VolumeMounts: mounts,
					SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
						Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
				}},
				Volumes: volumes,
			}},
		},
	}
	if err := c.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	return job
}

// hbaseIsClosedToStrangers: the datastore's namespace reaches the Master's and RegionServers'
// RPC ports but neither ZooKeeper nor HDFS; a pod of another namespace reaches no port of any
// role.
func hbaseIsClosedToStrangers(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore) {
	t.Helper()
	stranger := testNamespace(t, c, "stranger", "restricted")
	for _, role := range []struct {
		role  hbase.Role
		ports map[int32]bool // from the datastore's namespace
	}{
		{hbase.ZooKeeper, map[int32]bool{hbase.ZooKeeperPort: false}}, // clients bootstrap over RPC
		{hbase.NameNode, map[int32]bool{hbase.NameNodePort: false, hbase.NameNodeHTTPPort: false}},
		{hbase.DataNode, map[int32]bool{hbase.DataNodePort: false, hbase.DataNodeIPCPort: false}},
		{hbase.Master, map[int32]bool{hbase.MasterPort: true}},
		{hbase.RegionServer, map[int32]bool{hbase.RegionServerPort: true}},
	} {
		host := firstPodIP(t, c, ds.Namespace, hbase.Selector(ds, role.role))
		what := "HBase role " + string(role.role)
		expectAccess(t, c, ds.Namespace, what, host, role.ports)
		closed := map[int32]bool{}
		for p := range role.ports {
			closed[p] = false
		}
		expectAccess(t, c, stranger.Name, what, host, closed)
	}
}

// A Service someone else made under the name a datastore's client Service would take is
// neither overwritten nor adopted: the datastore says NameConflict and names it.
func TestAForeignServiceIsNotTakenOver(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := testNamespace(t, c, "takeover", "restricted")
	applyProfile(t, c, "plaintext")
	ds := &v1alpha1.SecuredDatastore{
		ObjectMeta: metav1.ObjectMeta{Name: "ledger", Namespace: ns.Name},
		Spec: v1alpha1.SecuredDatastoreSpec{Engine: v1alpha1.EngineCassandra, Cassandra: smallCassandra(1),
			Encryption: v1alpha1.DatastoreEncryption{ProfileRef: "plaintext"}},
	}
	theirs := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: cassandra.NamesOf(ds).ClientService(), Namespace: ns.Name, Labels: map[string]string{"owner": "someone-else"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "theirs"},
			Ports: []corev1.ServicePort{{Name: "web", Port: 8080}}},
	}
	if err := c.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, ds); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the datastore reports the conflict", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(ds), ds); err != nil {
			return err
		}
		cond := meta.FindStatusCondition(ds.Status.Conditions, v1alpha1.ConditionReady)
		if cond == nil || cond.Reason != v1alpha1.ReasonNameConflict {
			return fmt.Errorf("Ready %+v", cond)
		}
		if !strings.Contains(cond.Message, theirs.Name) {
			t.Errorf("the conflict does not name the Service: %s", cond.Message)
		}
		t.Logf("Ready %s %s: %s", cond.Status, cond.Reason, cond.Message)
		return nil
	})
	var after corev1.Service
	if err := c.Get(ctx, client.ObjectKeyFromObject(theirs), &after); err != nil {
		t.Fatal(err)
	}
	if after.Spec.Selector["app"] != "theirs" || len(after.Spec.Ports) != 1 || after.Spec.Ports[0].Port != 8080 || len(after.OwnerReferences) != 0 {
		t.Errorf("the foreign Service was changed: selector %v, ports %v, owners %v", after.Spec.Selector, after.Spec.Ports, after.OwnerReferences)
	}
}
