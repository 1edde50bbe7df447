package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"secured.dev/operator/internal/test/samples"
)

// OperatorUser is the identity the operator runs as in a cluster (its ServiceAccount).
const OperatorUser = "system:serviceaccount:secured-system:secured-datastore-operator"

// OperatorConfig binds the generated ClusterRole (config/rbac/role.yaml) to the operator's
// ServiceAccount and returns a configuration that impersonates it: controllers under test
// have exactly the rights a deployment grants them, so a missing verb fails a test instead of
// a cluster.
func (e *Env) OperatorConfig(ctx context.Context) (*rest.Config, error) {
	b, err := os.ReadFile(filepath.Join(samples.RepoRoot(), "config", "rbac", "role.yaml"))
	if err != nil {
		return nil, err
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(b, role); err != nil {
		return nil, fmt.Errorf("config/rbac/role.yaml: %w", err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: OperatorUser}},
	}
	if err := e.Client.Create(ctx, role); err != nil {
		return nil, fmt.Errorf("creating the operator's ClusterRole: %w", err)
	}
	if err := e.Client.Create(ctx, binding); err != nil {
		return nil, fmt.Errorf("binding the operator's ClusterRole: %w", err)
	}
	cfg := rest.CopyConfig(e.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: OperatorUser, Groups: []string{"system:serviceaccounts", "system:authenticated"}}
	return cfg, nil
}
