// Package testenv starts a real kube-apiserver and etcd (controller-runtime's envtest) with
// this operator's CRDs and cert-manager's installed, for tests of the API and the controllers.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/test/samples"
)

// Env is a running control plane.
type Env struct {
	env    *envtest.Environment
	Config *rest.Config
	Client client.WithWatch
	Scheme *k8sruntime.Scheme
}

// Scheme knows the built-in kinds, ours and cert-manager's.
func Scheme() *k8sruntime.Scheme {
	s := k8sruntime.NewScheme()
	for _, add := range []func(*k8sruntime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme, cmv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// assets finds kube-apiserver and etcd: KUBEBUILDER_ASSETS, else the cache hack/build/envtest-assets.sh fills.
func assets() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	matches, _ := filepath.Glob(filepath.Join(samples.RepoRoot(), "bin", "envtest", "*", "kube-apiserver"))
	if len(matches) == 1 {
		return filepath.Dir(matches[0]), nil
	}
	return "", fmt.Errorf("no kube-apiserver/etcd for envtest: run `make test`, which builds them from the Go module proxy once, " +
		"or export KUBEBUILDER_ASSETS=$(hack/build/envtest-assets.sh)")
}

func certManagerCRDs() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/cert-manager/cert-manager").Output()
	if err != nil {
		return "", fmt.Errorf("locating the cert-manager module for its CRDs: %w", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "deploy", "crds")
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("cert-manager CRDs: %w (run `go mod download`)", err)
	}
	return dir, nil
}

// Start starts the control plane and installs our CRDs and cert-manager's. Call Stop when done.
func Start() (*Env, error) { return start(true) }

// StartWithoutCertManager starts a control plane with our CRDs only, as a cluster where
// cert-manager is not installed.
func StartWithoutCertManager() (*Env, error) { return start(false) }

func start(certManager bool) (*Env, error) {
	bin, err := assets()
	if err != nil {
		return nil, err
	}
	crds := []string{filepath.Join(samples.RepoRoot(), "config", "crd", "bases")}
	if certManager {
		cm, err := certManagerCRDs()
		if err != nil {
			return nil, err
		}
		crds = append(crds, cm)
	}
	e := &Env{Scheme: Scheme()}
	e.env = &envtest.Environment{
		BinaryAssetsDirectory: bin,
		CRDDirectoryPaths:     crds,
		ErrorIfCRDPathMissing: true,
		Scheme:                e.Scheme,
	}
	if e.Config, err = e.env.Start(); err != nil {
		return nil, fmt.Errorf("starting envtest (kube-apiserver and etcd from %s): %w", bin, err)
	}
	if e.Client, err = client.NewWithWatch(e.Config, client.Options{Scheme: e.Scheme}); err != nil {
		_ = e.env.Stop()
		return nil, err
	}
	return e, nil
}

// Stop stops the control plane.
func (e *Env) Stop() error { return e.env.Stop() }
