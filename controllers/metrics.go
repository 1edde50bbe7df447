package controllers

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics the operator exports on its metrics endpoint (README, "Metrics").
var (
	encryptionVerified = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "secured_datastore_encryption_verified",
		Help: "1 when every endpoint of the channel accepted exactly the effective profile at the last wire probe, 0 when one drifted.",
	}, []string{"namespace", "datastore", "channel"})
	probeDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "secured_datastore_probe_duration_seconds",
		Help:    "Time to scan one endpoint: one ClientHello per protocol and catalogue suite, a full handshake and the plaintext test.",
		Buckets: []float64{0.1, 0.25, 0.5, 1, 2, 5, 10},
	}, []string{"channel"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(encryptionVerified, probeDuration)
}

// forgetMetrics drops the series of a datastore that no longer exists.
func forgetMetrics(namespace, name string) {
	encryptionVerified.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "datastore": name})
}
