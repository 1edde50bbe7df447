//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/test/samples"
)

// The release make deploy installs watches every namespace (e2e namespaces are generated);
// this test installs the chart as it is by default instead, with namespaced Roles in the one
// namespace it watches, while the cluster's operator is scaled to zero: the Kubernetes
// authorizer refuses the release's ServiceAccount everything outside that namespace, and
// there a TLS datastore still becomes Ready with its wire verified, while a datastore in
// another namespace is never touched.
func TestOperatorRunsWithNamespacedRolesOnly(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	team := testNamespace(t, c, "team", "restricted")
	other := testNamespace(t, c, "other", "restricted")
	home := testNamespace(t, c, "roles", "restricted")
	applyProfile(t, c, "tls13-aes128-gcm")

	// One operator per datastore: the cluster's waits meanwhile.
	scaleOperator(t, c, 0)
	t.Cleanup(func() { scaleOperator(t, c, 2) })
	helm := helmBinary(t)
	values, err := exec.Command(helm, "get", "values", "secured-datastore-operator", "-n", "secured-system", "-o", "yaml").Output()
	if err != nil {
		t.Fatalf("helm get values: %v", err)
	}
	valuesFile := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(valuesFile, values, 0o600); err != nil {
		t.Fatal(err)
	}
	const release = "sdo-roles"
	install := exec.Command(helm, "install", release, filepath.Join(samples.RepoRoot(), "charts", "secured-datastore-operator"), "-n", home.Name,
		"--wait", "--timeout", "3m", "-f", valuesFile, "--set", "watch.allNamespaces=false", "--set", "watch.namespaces={"+team.Name+"}",
		"--set", "crds.enabled=false", "--set", "replicaCount=1", "--set", "cryptoLabeller.enabled=false")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(helm, "uninstall", release, "-n", home.Name, "--wait").CombinedOutput(); err != nil {
			t.Errorf("helm uninstall: %v\n%s", err, out)
		}
	})
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: home.Name, Name: release + "-secured-datastore-operator"}, d); err != nil {
		t.Fatal(err)
	}
	user := "system:serviceaccount:" + home.Name + ":" + d.Spec.Template.Spec.ServiceAccountName

	for _, tc := range []struct {
		verb, group, resource, subresource, namespace string
		allowed                                       bool
	}{
		{"create", "apps", "statefulsets", "", team.Name, true},
		{"create", "", "secrets", "", team.Name, true},
		{"create", "apps", "statefulsets", "", other.Name, false},
		{"get", "", "secrets", "", other.Name, false},
		{"list", "", "secrets", "", "", false},
		{"get", "", "secrets", "", "kube-system", false},
		{"create", "batch", "jobs", "", other.Name, false},
		{"create", "", "pods", "exec", team.Name, false},
		{"create", "rbac.authorization.k8s.io", "rolebindings", "", team.Name, false},
		{"impersonate", "", "serviceaccounts", "", "", false},
	} {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: tc.verb, Group: tc.group, Resource: tc.resource, Subresource: tc.subresource, Namespace: tc.namespace}}}
		if err := c.Create(ctx, sar); err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("%s %s %s/%s in %q", tc.verb, tc.group, tc.resource, tc.subresource, tc.namespace)
		if sar.Status.Allowed != tc.allowed {
			t.Errorf("%s: allowed %v, want %v (%s)", what, sar.Status.Allowed, tc.allowed, sar.Status.Reason)
		} else {
			t.Logf("%s: allowed %v", what, sar.Status.Allowed)
		}
	}

	newDatastore := func(ns string) *v1alpha1.SecuredDatastore {
		return &v1alpha1.SecuredDatastore{
			ObjectMeta: metav1.ObjectMeta{Name: "scoped", Namespace: ns},
			Spec: v1alpha1.SecuredDatastoreSpec{Engine: v1alpha1.EngineCassandra, Cassandra: smallCassandra(1),
				Encryption: v1alpha1.DatastoreEncryption{ProfileRef: "tls13-aes128-gcm"}},
		}
	}
	watched, unwatched := newDatastore(team.Name), newDatastore(other.Name)
	start := time.Now()
	for _, ds := range []*v1alpha1.SecuredDatastore{watched, unwatched} {
		if err := c.Create(ctx, ds); err != nil {
			t.Fatal(err)
		}
	}
	waitReady(t, c, watched, start, "ready")
	waitVerified(t, c, watched)
	t.Logf("under namespaced Roles: TLS datastore Ready and verified %s after its creation", time.Since(start).Round(time.Second))
	if err := c.Get(ctx, client.ObjectKeyFromObject(unwatched), unwatched); err != nil {
		t.Fatal(err)
	}
	if unwatched.Status.ObservedGeneration != 0 || len(unwatched.Finalizers) != 0 {
		t.Errorf("the datastore in the unwatched namespace %s was reconciled: status %+v, finalizers %v", other.Name, unwatched.Status, unwatched.Finalizers)
	}
	// The datastore is deleted by this operator, before it goes.
	if err := c.Delete(ctx, watched); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the watched datastore is deleted", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(watched), watched); err == nil {
			return fmt.Errorf("still there, finalizers %v", watched.Finalizers)
		}
		return nil
	})
}

// scaleOperator sets the replicas of the operator make deploy installed and waits for them.
func scaleOperator(t *testing.T, c client.Client, replicas int32) {
	t.Helper()
	scaleDeployment(t, c, client.ObjectKey{Namespace: "secured-system", Name: "secured-datastore-operator"}, replicas)
}

// scaleDeployment sets a Deployment's replicas and waits until that many are ready.
func scaleDeployment(t *testing.T, c client.Client, key client.ObjectKey, replicas int32) {
	t.Helper()
	ctx := context.Background()
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, key, d); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = ptr.To(replicas)
	if err := c.Patch(ctx, d, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, fmt.Sprintf("%s at %d replicas", key.Name, replicas), func() error {
		if err := c.Get(ctx, key, d); err != nil {
			return err
		}
		if d.Status.Replicas != replicas || d.Status.ReadyReplicas != replicas {
			return fmt.Errorf("%d replicas, %d ready", d.Status.Replicas, d.Status.ReadyReplicas)
		}
		return nil
	})
}

// helmBinary is the Helm make deploy built.
func helmBinary(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(samples.RepoRoot(), "hack", "build", "helm.sh")).Output()
	if err != nil {
		t.Fatalf("hack/build/helm.sh: %v", err)
	}
	return strings.TrimSpace(string(out))
}
