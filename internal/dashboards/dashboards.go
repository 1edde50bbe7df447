package dashboards

import "fmt"

// prometheus is the data source every panel uses: the dashboard's datasource variable.
var prometheus = Datasource{Type: "prometheus", UID: "${datasource}"}

// All returns the dashboards the operator ships.
func All() []Dashboard {
	return []Dashboard{ProfileComparison(), SecurityHealth(), BenchmarkRun()}
}

func dashboard(uid, title, description string, vars []Variable, panels []Panel) Dashboard {
	list := append([]Variable{{Name: "datasource", Label: "Data source", Type: "datasource", Query: "prometheus"}}, vars...)
	// Lay panels out two per row, each 12 wide, unless a panel asks for the full width.
	x, y := 0, 0
	for i := range panels {
		p := &panels[i]
		p.ID, p.Datasource = i+1, prometheus
		if p.GridPos.W == 0 {
			p.GridPos.W = 12
		}
		if p.GridPos.H == 0 {
			p.GridPos.H = 8
		}
		if x+p.GridPos.W > 24 {
			x, y = 0, y+8
		}
		p.GridPos.X, p.GridPos.Y = x, y
		x += p.GridPos.W
		for j := range p.Targets {
			p.Targets[j].RefID = string(rune('A' + j))
		}
		if p.FieldConfig.Overrides == nil {
			p.FieldConfig.Overrides = []Override{}
		}
	}
	return Dashboard{UID: uid, Title: title, Description: description, Tags: []string{"secured-datastore"},
		SchemaVersion: 39, Refresh: "30s", Time: TimeRange{From: "now-6h", To: "now"},
		Templating: Templating{List: list}, Panels: panels}
}

// labelVar is a variable holding the values of label in metric, narrowed by the variables
// before it.
func labelVar(name, label, metric string) Variable {
	return Variable{Name: name, Label: label, Type: "query", Datasource: &prometheus, Refresh: 2,
		Query: map[string]any{"query": fmt.Sprintf("label_values(%s, %s)", metric, name), "refId": "vars"}}
}

func zero() *float64 { f := 0.0; return &f }

// ProfileComparison puts the profiles of a study side by side: throughput, overhead against
// the baseline with its 95% interval, latency, the recommendation and the cost of security.
func ProfileComparison() Dashboard {
	sel := `namespace="$namespace", study="$study"`
	cell := "{{profile}} {{acceleration}} {{nodes}}n"
	return dashboard("sdo-profile-comparison", "Secured datastores / Profile comparison",
		"A TradeoffStudy's profiles side by side. Every series comes from the study's status (secured_datastore_study_*).",
		[]Variable{
			labelVar("namespace", "Namespace", "secured_datastore_study_throughput_ops"),
			labelVar("study", "Study", `secured_datastore_study_throughput_ops{namespace="$namespace"}`),
		},
		[]Panel{
			{Type: "table", Title: "Recommendation", GridPos: GridPos{W: 8},
				Description: "The profile the study's decision rule picked, at each acceleration and size it was measured.",
				Targets:     []Target{{Expr: fmt.Sprintf(`secured_datastore_study_recommended{%s} == 1`, sel), Instant: true, Format: "table"}}},
			{Type: "bargauge", Title: "Throughput per cell (median ops/s)", GridPos: GridPos{W: 16},
				Description: "Median throughput over the cell's valid repetitions; the bounds of its 95% interval exist from 6 repetitions.",
				Targets: []Target{
					{Expr: fmt.Sprintf(`secured_datastore_study_throughput_ops{%s}`, sel), LegendFormat: cell, Instant: true},
				},
				FieldConfig: FieldConfig{Defaults: FieldDefaults{Unit: "ops", Min: zero()}},
				Options:     map[string]any{"orientation": "horizontal", "displayMode": "basic"}},
			{Type: "timeseries", Title: "Overhead against the baseline, with 95% interval", GridPos: GridPos{W: 24},
				Description: "Throughput lost against the baseline of the same acceleration and size; the band is the Hodges-Lehmann 95% interval.",
				Targets: []Target{
					{Expr: fmt.Sprintf(`secured_datastore_study_overhead_ratio{%s}`, sel), LegendFormat: cell},
					{Expr: fmt.Sprintf(`secured_datastore_study_overhead_ratio_ci_low{%s}`, sel), LegendFormat: cell + " low"},
					{Expr: fmt.Sprintf(`secured_datastore_study_overhead_ratio_ci_high{%s}`, sel), LegendFormat: cell + " high"},
				},
				FieldConfig: bandFieldConfig()},
			{Type: "bargauge", Title: "Server CPU per operation", GridPos: GridPos{W: 8},
				Description: "Median over the cell's repetitions of the datastore pods' CPU time per operation (sidecars included: a VPN tunnel encrypts in its sidecar), from the kubelets' cgroup counters over each run's measured window (the operator's --cpu-accounting-prometheus-url).",
				Targets:     []Target{{Expr: fmt.Sprintf(`secured_datastore_study_server_cpu_seconds_per_op{%s}`, sel), LegendFormat: cell, Instant: true}},
				FieldConfig: FieldConfig{Defaults: FieldDefaults{Unit: "s", Min: zero()}}},
			{Type: "timeseries", Title: "Server CPU overhead against the baseline, with 95% interval", GridPos: GridPos{W: 16},
				Description: "Operations per server CPU-second lost against the baseline of the same acceleration and size (0.2: an operation costs 1.25 times the CPU); barely moved by other load on the nodes.",
				Targets: []Target{
					{Expr: fmt.Sprintf(`secured_datastore_study_server_cpu_overhead_ratio{%s}`, sel), LegendFormat: cell},
					{Expr: fmt.Sprintf(`secured_datastore_study_server_cpu_overhead_ratio_ci_low{%s}`, sel), LegendFormat: cell + " low"},
					{Expr: fmt.Sprintf(`secured_datastore_study_server_cpu_overhead_ratio_ci_high{%s}`, sel), LegendFormat: cell + " high"},
				},
				FieldConfig: bandFieldConfig()},
			{Type: "bargauge", Title: "p99 latency per cell",
				Description: "Median over the cell's repetitions of the p99 of its slowest operation type.",
				Targets:     []Target{{Expr: fmt.Sprintf(`secured_datastore_study_p99_latency_seconds{%s}`, sel), LegendFormat: cell, Instant: true}},
				FieldConfig: FieldConfig{Defaults: FieldDefaults{Unit: "s", Min: zero()}}},
			{Type: "bargauge", Title: "Cost of security: extra nodes to restore baseline throughput",
				Description: "1/(1 - overhead) - 1, assuming throughput scales linearly with nodes (47% overhead: +89%).",
				Targets:     []Target{{Expr: fmt.Sprintf(`clamp_min(1 / (1 - secured_datastore_study_overhead_ratio{%s}) - 1, 0)`, sel), LegendFormat: cell, Instant: true}},
				FieldConfig: FieldConfig{Defaults: FieldDefaults{Unit: "percentunit", Min: zero()}}},
			{Type: "barchart", Title: "Latency p50 and p99 per profile, benchmark runs", GridPos: GridPos{W: 24},
				Description: "From the valid runs of the namespace's benchmarks (a study's repetitions among them), per profile and operation.",
				Targets: []Target{
					{Expr: `max by (profile, op) (secured_datastore_benchmark_run_latency_seconds{namespace="$namespace", quantile="0.5"})`, LegendFormat: "{{profile}} {{op}} p50", Instant: true, Format: "table"},
					{Expr: `max by (profile, op) (secured_datastore_benchmark_run_latency_seconds{namespace="$namespace", quantile="0.99"})`, LegendFormat: "{{profile}} {{op}} p99", Instant: true, Format: "table"},
				},
				FieldConfig: FieldConfig{Defaults: FieldDefaults{Unit: "s", Min: zero()}}},
		})
}

// bandFieldConfig draws an estimate's low and high series as a band around it.
func bandFieldConfig() FieldConfig {
	return FieldConfig{Defaults: FieldDefaults{Unit: "percentunit"}, Overrides: []Override{
		{Matcher: Matcher{ID: "byRegexp", Options: ".* high$"}, Properties: []Property{
			{ID: "custom.fillBelowTo", Value: "B"}, {ID: "custom.lineWidth", Value: 0}}},
		{Matcher: Matcher{ID: "byRegexp", Options: ".* low$"}, Properties: []Property{{ID: "custom.lineWidth", Value: 0}}},
	}}
}

// SecurityHealth shows what the wire of a datastore really accepts and how its nodes fare.
func SecurityHealth() Dashboard {
	sel := `namespace="$namespace", datastore="$datastore"`
	return dashboard("sdo-security-health", "Secured datastores / Security health",
		"What the operator's wire probe found on a datastore's endpoints, its certificates and its nodes.",
		[]Variable{
			labelVar("namespace", "Namespace", "secured_datastore_info"),
			labelVar("datastore", "Datastore", `secured_datastore_info{namespace="$namespace"}`),
		},
		[]Panel{
			{Type: "stat", Title: "Encryption verified, per channel",
				Description: "1 when every endpoint of the channel accepted exactly the effective profile at the last probe.",
				Targets:     []Target{{Expr: fmt.Sprintf(`secured_datastore_encryption_verified{%s}`, sel), LegendFormat: "{{channel}}", Instant: true}},
				FieldConfig: FieldConfig{Defaults: FieldDefaults{Mappings: []any{map[string]any{"type": "value", "options": map[string]any{
					"0": map[string]any{"text": "DRIFT", "color": "red"}, "1": map[string]any{"text": "verified", "color": "green"}}}}}}},
			{Type: "stat", Title: "Plaintext answered, per endpoint",
				Description: "1 when an endpoint answered a plaintext client at the last probe; a required-TLS channel must show 0.",
				Targets:     []Target{{Expr: fmt.Sprintf(`secured_datastore_plaintext_accepted{%s}`, sel), LegendFormat: "{{channel}} {{endpoint}}", Instant: true}},
				FieldConfig: FieldConfig{Defaults: FieldDefaults{Mappings: []any{map[string]any{"type": "value", "options": map[string]any{
					"0": map[string]any{"text": "refused", "color": "green"}, "1": map[string]any{"text": "ANSWERED", "color": "red"}}}}}}},
			{Type: "table", Title: "Accepted cipher suites",
				Targets: []Target{{Expr: fmt.Sprintf(`secured_datastore_accepted_cipher_suite{%s} == 1`, sel), Instant: true, Format: "table"}}},
			{Type: "table", Title: "Accepted protocols",
				Targets: []Target{{Expr: fmt.Sprintf(`secured_datastore_accepted_protocol{%s} == 1`, sel), Instant: true, Format: "table"}}},
			{Type: "stat", Title: "Certificate expires in",
				Description: "The earliest expiry among the certificates the endpoints presented.",
				Targets:     []Target{{Expr: fmt.Sprintf(`min by (channel) (secured_datastore_certificate_expiry_timestamp_seconds{%s}) - time()`, sel), LegendFormat: "{{channel}}", Instant: true}},
				FieldConfig: FieldConfig{Defaults: FieldDefaults{Unit: "s"}}},
			{Type: "timeseries", Title: "Nodes: desired and ready (rolling progress)",
				Targets:     []Target{{Expr: fmt.Sprintf(`secured_datastore_nodes{%s}`, sel), LegendFormat: "{{state}}"}},
				FieldConfig: FieldConfig{Defaults: FieldDefaults{Min: zero()}}},
			{Type: "piechart", Title: "Datastores by phase",
				Targets: []Target{{Expr: `sum by (phase) (secured_datastore_info)`, LegendFormat: "{{phase}}", Instant: true}}},
			{Type: "timeseries", Title: "Wire probe duration p95",
				Targets:     []Target{{Expr: `histogram_quantile(0.95, sum by (le, channel) (rate(secured_datastore_probe_duration_seconds_bucket[$__rate_interval])))`, LegendFormat: "{{channel}}"}},
				FieldConfig: FieldConfig{Defaults: FieldDefaults{Unit: "s"}}},
		})
}

// BenchmarkRun follows one benchmark over time from the clients' native histograms.
func BenchmarkRun() Dashboard {
	sel := `namespace="$namespace", benchmark="$benchmark", scenario="run"`
	return dashboard("sdo-benchmark-run", "Secured datastores / Benchmark run",
		"Operations and latency of a DatastoreBenchmark's clients over time, from the native histograms they remote-write (k6_ycsb_operation_duration_seconds).",
		[]Variable{
			labelVar("namespace", "Namespace", "k6_ycsb_operation_duration_seconds"),
			labelVar("benchmark", "Benchmark", `k6_ycsb_operation_duration_seconds{namespace="$namespace"}`),
		},
		[]Panel{
			{Type: "timeseries", Title: "Operations per second", GridPos: GridPos{W: 24},
				Targets:     []Target{{Expr: fmt.Sprintf(`sum by (op) (histogram_count(rate(k6_ycsb_operation_duration_seconds{%s}[$__rate_interval])))`, sel), LegendFormat: "{{op}}"}},
				FieldConfig: FieldConfig{Defaults: FieldDefaults{Unit: "ops", Min: zero()}}},
			{Type: "timeseries", Title: "Latency p50 and p99",
				Targets: []Target{
					{Expr: fmt.Sprintf(`histogram_quantile(0.5, sum by (op) (rate(k6_ycsb_operation_duration_seconds{%s}[$__rate_interval])))`, sel), LegendFormat: "{{op}} p50"},
					{Expr: fmt.Sprintf(`histogram_quantile(0.99, sum by (op) (rate(k6_ycsb_operation_duration_seconds{%s}[$__rate_interval])))`, sel), LegendFormat: "{{op}} p99"},
				},
				FieldConfig: FieldConfig{Defaults: FieldDefaults{Unit: "s"}}},
			{Type: "heatmap", Title: "Latency distribution",
				Targets:     []Target{{Expr: fmt.Sprintf(`sum(rate(k6_ycsb_operation_duration_seconds{%s}[$__rate_interval]))`, sel)}},
				FieldConfig: FieldConfig{Defaults: FieldDefaults{Unit: "s"}}},
			{Type: "stat", Title: "Protocol and suite the clients negotiated",
				Targets: []Target{{Expr: fmt.Sprintf(`count by (protocol, suite) (k6_ycsb_operation_duration_seconds{%s})`, sel), LegendFormat: "{{protocol}} {{suite}}", Instant: true}}},
		})
}
