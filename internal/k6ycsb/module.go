// Package k6ycsb is the k6 extension "k6/x/ycsb": YCSB's core workloads (internal/ycsb) run
// against Cassandra (internal/cqlbench) from k6 scripts, each operation measured into k6
// metrics and into the result summary the operator reads (internal/benchresult).
//
// k6 gives every virtual user its own JavaScript runtime and module instance. What YCSB
// shares between its threads — the load counter, the insert sequence, the CQL session, the
// latency histograms — is shared here too, in process-wide registries keyed by the options
// the script passed; what YCSB keeps per thread — random source, key chooser, buffers — is
// per virtual user.
package k6ycsb

import (
	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/metrics"
)

func init() { modules.Register("k6/x/ycsb", root{}) }

type root struct{}

// Metric names, as k6 reports them (Prometheus remote write adds k6_ and a unit suffix).
const (
	metricDuration   = "ycsb_operation_duration"
	metricOperations = "ycsb_operations"
	metricErrors     = "ycsb_errors"
)

type vuMetrics struct {
	duration, operations, errors *metrics.Metric
}

func (root) NewModuleInstance(vu modules.VU) modules.Instance {
	reg := vu.InitEnv().Registry
	return &module{vu: vu, metrics: vuMetrics{
		duration:   reg.MustNewMetric(metricDuration, metrics.Trend, metrics.Time),
		operations: reg.MustNewMetric(metricOperations, metrics.Counter),
		errors:     reg.MustNewMetric(metricErrors, metrics.Counter),
	}}
}

type module struct {
	vu      modules.VU
	metrics vuMetrics
}

func (m *module) Exports() modules.Exports {
	return modules.Exports{Named: map[string]any{
		"workload": m.workload,
		"cql":      m.cql,
	}}
}
