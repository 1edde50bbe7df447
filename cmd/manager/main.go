// Command manager runs the Secured Datastore Operator: the controllers for SecuredDatastore,
// EncryptionProfile, DatastoreBenchmark and TradeoffStudy.
package main

import (
	"flag"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/controllers"
	"secured.dev/operator/internal/placement"
)

func main() {
	var (
		metricsAddr string
		probeAddr   string
		leaderElect bool
		leaderNS    string
		options     controllers.Options
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "Address the Prometheus metrics endpoint binds to; \"0\" disables it.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "Address the /healthz and /readyz endpoints bind to.")
	flag.BoolVar(&leaderElect, "leader-elect", false, "Elect a leader so that only one of several replicas reconciles.")
	flag.StringVar(&leaderNS, "leader-election-namespace", "", "Namespace of the leader-election Lease; defaults to the pod's namespace.")
	flag.StringVar(&options.CassandraImage, "cassandra-image", "secured.dev/cassandra:5.0.6", "Image of Cassandra nodes, unless a SecuredDatastore sets spec.image. It must have the layout of images/cassandra.")
	flag.StringVar(&options.ClusterDomain, "cluster-domain", "cluster.local", "DNS domain of the cluster, for the host names in node certificates and seeds.")
	flag.StringVar(&options.Namespace, "namespace", os.Getenv("POD_NAMESPACE"), "Namespace the operator runs in (from POD_NAMESPACE); datastore NetworkPolicies admit its wire prober.")
	flag.StringVar(&options.FeatureLabelPrefix, "feature-label-prefix", placement.LabelPrefix, "Prefix of the node labels that name CPU crypto features (<prefix>AESNI=true); Node Feature Discovery's by default, as the crypto labeller writes them.")
	var shippedProfilesDir string
	flag.StringVar(&shippedProfilesDir, "shipped-profiles", "", "Directory of EncryptionProfile manifests to server-side apply at start (the Helm chart mounts its shipped profiles here); empty applies none.")
	opts := zap.Options{}
	flag.StringVar(&options.HBaseImage, "hbase-image", "secured.dev/hbase:2.6.4", "Image of HBase datastores' ZooKeeper, HDFS and HBase processes (the layout of images/hbase; hack/kind/images.sh builds it).")
	flag.StringVar(&options.KDCImage, "kdc-image", "secured.dev/kdc:2.0.3", "Image of the managed KDC of Kerberos-secured HBase datastores (images/kdc).")
	flag.StringVar(&options.VPNImage, "vpn-image", "secured.dev/vpn:dev", "Image of the tunnel sidecar of WireGuard and OpenVPN profiles (images/vpn; hack/kind/images.sh builds it).")
	flag.StringVar(&options.K6Image, "k6-image", "secured.dev/k6:dev", "Image of the benchmark clients: the product's k6 with the YCSB extension and bench/k6/ycsb.js (hack/kind/images.sh builds it).")
	flag.StringVar(&options.YCSBHBaseImage, "ycsb-hbase-image", "secured.dev/ycsb-hbase:0.17.0", "Image of HBase benchmark clients: YCSB's client with our binding (drivers/ycsb-hbase; hack/kind/images.sh builds it).")
	flag.StringVar(&options.PrometheusRemoteWriteURL, "prometheus-remote-write-url", "", "Prometheus remote-write URL the benchmark clients publish to, unless a DatastoreBenchmark sets spec.prometheus.remoteWriteURL; empty publishes nothing.")
	flag.IntVar(&options.ProbeWorkers, "probe-workers", controllers.DefaultProbeWorkers, "Endpoints the wire prober scans at once, off the reconcile path; each scan has its own deadline, so an endpoint that never answers holds one worker, not the reconciles.")
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("setup")

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme, cmv1.AddToScheme} {
		if err := add(scheme); err != nil {
			log.Error(err, "Building the scheme failed")
			os.Exit(1)
		}
	}

	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                  scheme,
		Cache:                   controllers.CacheOptions(),
		Client:                  controllers.ClientOptions(),
		Metrics:                 metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress:  probeAddr,
		LeaderElection:          leaderElect,
		LeaderElectionID:        "secured-datastore-operator.datastore.secured.dev",
		LeaderElectionNamespace: leaderNS,
		// Release the lease on shutdown so a new replica takes over at once during upgrades.
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		log.Error(err, "Creating the manager failed")
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
	if err := controllers.SetupWithManager(ctx, mgr, options); err != nil {
		log.Error(err, "Setting up the controllers failed")
		os.Exit(1)
	}
	if shippedProfilesDir != "" {
		if err := mgr.Add(&controllers.ShippedProfiles{Client: mgr.GetClient(), Dir: shippedProfilesDir}); err != nil {
			log.Error(err, "Adding the shipped profiles failed")
			os.Exit(1)
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		log.Error(err, "Adding the health check failed")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		log.Error(err, "Adding the readiness check failed")
		os.Exit(1)
	}
	log.Info("Starting the manager")
	if err := mgr.Start(ctx); err != nil {
		log.Error(err, "The manager stopped with an error")
		os.Exit(1)
	}
}
