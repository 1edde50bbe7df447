// Command manager runs the Secured Datastore Operator: the controllers for SecuredDatastore,
// EncryptionProfile, DatastoreBenchmark and TradeoffStudy.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/controllers"
	"secured.dev/operator/internal/cpuacct"
	"secured.dev/operator/internal/placement"
	"secured.dev/operator/internal/render/vpn"
	"secured.dev/operator/internal/tunnelkeys"
)

func main() {
	if err := run(ctrl.SetupSignalHandler(), ctrl.GetConfig, os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run parses args, starts the manager with the rest configuration config returns and blocks
// until ctx ends; a test runs the operator through it with exactly the flags and rights a
// deployment has.
func run(ctx context.Context, config func() (*rest.Config, error), args []string) error {
	var st settings
	flags := newFlags(&st)
	if err := flags.Parse(args); err != nil {
		return err
	}
	namespaces, err := parseNamespaces(st.watchNamespaces)
	if err != nil {
		return err
	}
	var keyServer *tunnelkeys.Listener
	if st.tunnelKeysCertDir != "" {
		if keyServer, err = tunnelKeyServer(&st); err != nil {
			return err
		}
	}
	if st.cpuAccountingURL != "" {
		u, err := cpuacct.ParseURL(st.cpuAccountingURL)
		if err != nil {
			return fmt.Errorf("--cpu-accounting-prometheus-url: %w", err)
		}
		st.options.CPUAccounting = &cpuacct.Prometheus{URL: u}
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&st.zapOpts)))
	log := ctrl.Log.WithName("setup")

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme, cmv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return fmt.Errorf("building the scheme: %w", err)
		}
	}
	cfg, err := config()
	if err != nil {
		return fmt.Errorf("reading the API server's configuration: %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   controllers.CacheOptions(namespaces...),
		Client:                  controllers.ClientOptions(),
		Metrics:                 metricsOptions(st.metricsAddr, st.metricsCertDir, st.metricsSecure),
		HealthProbeBindAddress:  st.probeAddr,
		LeaderElection:          st.leaderElect,
		LeaderElectionID:        "secured-datastore-operator.datastore.secured.dev",
		LeaderElectionNamespace: st.leaderNS,
		// Release the lease on shutdown so a new replica takes over at once during upgrades.
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := controllers.SetupWithManager(ctx, mgr, st.options); err != nil {
		return fmt.Errorf("setting up the controllers: %w", err)
	}
	if st.shippedProfilesDir != "" {
		if err := mgr.Add(&controllers.ShippedProfiles{Client: mgr.GetClient(), Dir: st.shippedProfilesDir}); err != nil {
			return fmt.Errorf("adding the shipped profiles: %w", err)
		}
	}
	if keyServer != nil {
		keyServer.Server = &tunnelkeys.Server{Reviewer: mgr.GetClient(), Reader: mgr.GetAPIReader(), Log: ctrl.Log.WithName("tunnel-keys")}
		if err := mgr.Add(keyServer); err != nil {
			return fmt.Errorf("adding the tunnel key server: %w", err)
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the readiness check: %w", err)
	}
	if len(namespaces) > 0 {
		log.Info("Starting the manager", "watchNamespaces", namespaces)
	} else {
		log.Info("Starting the manager", "watchNamespaces", "all")
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("the manager stopped: %w", err)
	}
	return nil
}

// tunnelKeyServer reads the key server's certificate and checks its URL; the controllers pin
// the certificate in every tunnel's public Secret.
func tunnelKeyServer(st *settings) (*tunnelkeys.Listener, error) {
	u, err := url.Parse(st.tunnelKeysURL)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" || u.Path != tunnelkeys.Path || u.RawQuery != "" || u.User != nil {
		return nil, fmt.Errorf("--tunnel-keys-url %q: the sidecars need the key server's https URL, such as https://secured-datastore-operator-tunnel-keys.secured-system.svc:9444%s", st.tunnelKeysURL, tunnelkeys.Path)
	}
	cert, pem, err := tunnelkeys.LoadCertificate(st.tunnelKeysCertDir)
	if err != nil {
		return nil, fmt.Errorf("--tunnel-keys-cert-dir: %w", err)
	}
	st.options.TunnelKeys = &vpn.KeyServer{URL: u.String(), Cert: pem}
	return &tunnelkeys.Listener{Addr: st.tunnelKeysAddr, Cert: cert}, nil
}

// parseNamespaces reads --watch-namespaces, refusing a name no namespace can have.
func parseNamespaces(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var out []string
	for _, ns := range strings.Split(list, ",") {
		ns = strings.TrimSpace(ns)
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return nil, fmt.Errorf("--watch-namespaces: %q is not a namespace name (%s): list namespace names separated by commas, or leave it empty to watch every namespace", ns, strings.Join(errs, "; "))
		}
		out = append(out, ns)
	}
	return out, nil
}

// settings are what the flags set.
type settings struct {
	metricsAddr, metricsCertDir string
	metricsSecure               bool
	probeAddr                   string
	leaderElect                 bool
	leaderNS                    string
	watchNamespaces             string
	cpuAccountingURL            string
	tunnelKeysAddr              string
	tunnelKeysCertDir           string
	tunnelKeysURL               string
	shippedProfilesDir          string
	options                     controllers.Options
	zapOpts                     zap.Options
}

// newFlags defines the manager's flags on s; the README's table documents each of them, which a
// test checks.
func newFlags(s *settings) *flag.FlagSet {
	flags := flag.NewFlagSet("manager", flag.ContinueOnError)
	flags.StringVar(&s.metricsAddr, "metrics-bind-address", ":8443", "Address the Prometheus metrics endpoint binds to; \"0\" disables it.")
	flags.BoolVar(&s.metricsSecure, "metrics-secure", true, "Serve metrics over HTTPS to callers the API server authenticates and authorizes for get on /metrics; false serves plain HTTP to anyone (for make run).")
	flags.StringVar(&s.metricsCertDir, "metrics-cert-dir", "", "Directory with tls.crt and tls.key for the metrics endpoint, reloaded when they change; empty serves a self-signed certificate generated at start.")
	flags.StringVar(&s.probeAddr, "health-probe-bind-address", ":8081", "Address the /healthz and /readyz endpoints bind to.")
	flags.BoolVar(&s.leaderElect, "leader-elect", false, "Elect a leader so that only one of several replicas reconciles.")
	flags.StringVar(&s.leaderNS, "leader-election-namespace", "", "Namespace of the leader-election Lease; defaults to the pod's namespace.")
	flags.StringVar(&s.watchNamespaces, "watch-namespaces", "", "Comma-separated namespaces whose datastores, benchmarks and studies the operator manages; it then needs rights in these namespaces only (the chart's Roles). Empty watches every namespace.")
	flags.StringVar(&s.options.CassandraImage, "cassandra-image", "secured.dev/cassandra:5.0.6", "Image of Cassandra nodes, unless a SecuredDatastore sets spec.image. It must have the layout of images/cassandra.")
	flags.StringVar(&s.options.ClusterDomain, "cluster-domain", "cluster.local", "DNS domain of the cluster, for the host names in node certificates and seeds.")
	flags.StringVar(&s.options.Namespace, "namespace", os.Getenv("POD_NAMESPACE"), "Namespace the operator runs in (from POD_NAMESPACE); datastore NetworkPolicies admit its wire prober.")
	flags.StringVar(&s.options.FeatureLabelPrefix, "feature-label-prefix", placement.LabelPrefix, "Prefix of the node labels that name CPU crypto features (<prefix>AESNI=true); Node Feature Discovery's by default, as the crypto labeller writes them.")
	flags.StringVar(&s.shippedProfilesDir, "shipped-profiles", "", "Directory of EncryptionProfile manifests to server-side apply at start (the Helm chart mounts its shipped profiles here); empty applies none.")
	flags.StringVar(&s.options.HBaseImage, "hbase-image", "secured.dev/hbase:2.6.4", "Image of HBase datastores' ZooKeeper, HDFS and HBase processes (the layout of images/hbase; hack/kind/images.sh builds it).")
	flags.StringVar(&s.options.KDCImage, "kdc-image", "secured.dev/kdc:2.0.3", "Image of the managed KDC of Kerberos-secured HBase datastores (images/kdc).")
	flags.StringVar(&s.options.VPNImage, "vpn-image", "secured.dev/vpn:dev", "Image of the tunnel sidecar of WireGuard and OpenVPN profiles (images/vpn; hack/kind/images.sh builds it).")
	flags.StringVar(&s.options.VolumeEncryptionImage, "volume-encryption-image", "secured.dev/volume-encryption:dev", "Image of the init container that encrypts the data volumes of profiles with atRest.volume (cmd/volume-encryption; hack/kind/images.sh builds it).")
	flags.StringVar(&s.options.K6Image, "k6-image", "secured.dev/k6:dev", "Image of the benchmark clients: the product's k6 with the YCSB extension and bench/k6/ycsb.js (hack/kind/images.sh builds it).")
	flags.StringVar(&s.options.YCSBHBaseImage, "ycsb-hbase-image", "secured.dev/ycsb-hbase:0.17.0", "Image of HBase benchmark clients: YCSB's client with our binding (drivers/ycsb-hbase; hack/kind/images.sh builds it).")
	flags.StringVar(&s.options.StorageBenchImage, "storage-bench-image", "secured.dev/storage-bench:dev", "Image of the clients of storage workloads (spec.workload.storage): cmd/storage-bench and fio from Debian (hack/kind/images.sh builds it).")
	flags.StringVar(&s.options.PrometheusRemoteWriteURL, "prometheus-remote-write-url", "", "Prometheus remote-write URL the benchmark clients publish to, unless a DatastoreBenchmark sets spec.prometheus.remoteWriteURL; empty publishes nothing.")
	flags.StringVar(&s.cpuAccountingURL, "cpu-accounting-prometheus-url", "", "Base URL of a Prometheus that scrapes the kubelets' /metrics/resource (node series labelled node=<name>); the operator reads each benchmark run's server, sidecar and background CPU from it. Empty leaves them unavailable.")
	flags.DurationVar(&s.options.CPUSettle, "cpu-accounting-settle", controllers.DefaultCPUSettle, "How long after a run's window its last kubelet samples take to reach that Prometheus: its kubelet scrape interval and a margin. A run is recorded then, once Prometheus also holds a sample after its window, which it waits for at most 30s longer.")
	flags.DurationVar(&s.options.RenewalStall, "certificate-renewal-stall", controllers.DefaultRenewalStall, "How long cert-manager may work on a renewal before a datastore's CertificatesReady turns False (RenewalStalled) with a Warning event; nodes keep their current certificate meanwhile.")
	flags.StringVar(&s.tunnelKeysCertDir, "tunnel-keys-cert-dir", "", "Directory with tls.crt and tls.key of the tunnel key server, where VPN sidecars fetch their own member's key (the chart makes a self-signed one); empty runs no key server, and datastores with a VPN profile are refused with a condition.")
	flags.StringVar(&s.tunnelKeysAddr, "tunnel-keys-bind-address", ":9444", "Address the tunnel key server binds to, with --tunnel-keys-cert-dir.")
	flags.StringVar(&s.tunnelKeysURL, "tunnel-keys-url", "", "URL at which the sidecars reach the tunnel key server, https://<Service>.<namespace>.svc:<port>"+tunnelkeys.Path+" (the chart sets it); its certificate must name that host.")
	flags.IntVar(&s.options.ProbeWorkers, "probe-workers", controllers.DefaultProbeWorkers, "Endpoints the wire prober scans at once, off the reconcile path; each scan has its own deadline, so an endpoint that never answers holds one worker, not the reconciles.")
	s.zapOpts.BindFlags(flags)
	return flags
}
