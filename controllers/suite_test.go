package controllers

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"secured.dev/operator/internal/testenv"
)

var env *testenv.Env

var testOptions = Options{CassandraImage: "secured.dev/cassandra:test", HBaseImage: "secured.dev/hbase:test", KDCImage: "secured.dev/kdc:test", K6Image: "secured.dev/k6:test", VPNImage: "secured.dev/vpn:test", YCSBHBaseImage: "secured.dev/ycsb-hbase:test", Namespace: "secured-system"}

// TestMain runs the operator's controllers in a manager against a real kube-apiserver.
func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
	var err error
	if env, err = testenv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	// The controllers run with the generated RBAC, not as envtest's administrator.
	cfg, err := env.OperatorConfig(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = env.Stop()
		os.Exit(1)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: env.Scheme, Cache: CacheOptions(), Client: ClientOptions(), Metrics: metricsserver.Options{BindAddress: "0"}})
	if err == nil {
		err = SetupWithManager(ctx, mgr, testOptions)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = env.Stop()
		os.Exit(1)
	}
	done := make(chan error)
	go func() { done <- mgr.Start(ctx) }()

	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
	}
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping envtest:", err)
	}
	os.Exit(code)
}

func init() {
	SetDefaultEventuallyTimeout(20 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
}
