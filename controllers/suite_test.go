package controllers

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"secured.dev/operator/internal/test/tier"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"secured.dev/operator/internal/render/vpn"
	"secured.dev/operator/internal/test/testenv"
)

var env *testenv.Env

var testOptions = Options{CassandraImage: "secured.dev/cassandra:test", HBaseImage: "secured.dev/hbase:test", KDCImage: "secured.dev/kdc:test", K6Image: "secured.dev/k6:test", VPNImage: "secured.dev/vpn:test", VolumeEncryptionImage: "secured.dev/volume-encryption:test", YCSBHBaseImage: "secured.dev/ycsb-hbase:test", Namespace: "secured-system",
	TunnelKeys: &vpn.KeyServer{URL: "https://keys.secured-system.svc:9444/v1/tunnel-key", Cert: []byte("the key server's certificate")}}

// TestMain runs the operator's controllers in a manager against a real kube-apiserver.
func TestMain(m *testing.M) {
	flag.Parse()
	tier.FullPackage("controllers", "a kube-apiserver and the operator")
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
	var err error
	if env, err = testenv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The controllers run with the generated RBAC, not as envtest's administrator.
	if operator.config, err = env.OperatorConfig(context.Background()); err == nil {
		err = startOperator()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = env.Stop()
		os.Exit(1)
	}
	code := m.Run()
	if err := stopOperator(); err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
	}
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping envtest:", err)
	}
	os.Exit(code)
}

// operator is the running manager, so a test can restart it.
var operator struct {
	config *rest.Config
	cancel context.CancelFunc
	done   chan error
}

// startOperator runs the operator's controllers in a manager.
func startOperator() error {
	ctx, cancel := context.WithCancel(context.Background())
	// A restarted manager registers the same controller names again.
	mgr, err := ctrl.NewManager(operator.config, ctrl.Options{Scheme: env.Scheme, Cache: CacheOptions(), Client: ClientOptions(),
		Metrics: metricsserver.Options{BindAddress: "0"}, Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err == nil {
		err = SetupWithManager(ctx, mgr, testOptions)
	}
	if err != nil {
		cancel()
		return err
	}
	operator.cancel, operator.done = cancel, make(chan error, 1)
	go func() { operator.done <- mgr.Start(ctx) }()
	return nil
}

func stopOperator() error {
	operator.cancel()
	return <-operator.done
}

// restartOperator stops the manager and starts a new one: nothing survives but what the API
// server holds, as when the operator's pod is replaced.
func restartOperator(t *testing.T) {
	t.Helper()
	if err := stopOperator(); err != nil {
		t.Fatalf("stopping the operator: %v", err)
	}
	if err := startOperator(); err != nil {
		t.Fatalf("starting the operator again: %v", err)
	}
}

func init() {
	SetDefaultEventuallyTimeout(20 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
}
