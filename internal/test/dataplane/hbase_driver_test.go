package dataplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"secured.dev/operator/internal/benchresult"
	"secured.dev/operator/internal/render/hbase"
	"secured.dev/operator/internal/test/testpki"
	"secured.dev/operator/internal/ycsb"
)

// runYCSBHBase runs YCSB's own client with our HBase binding and summary exporter
// (drivers/ycsb-hbase) and returns the summary it exported.
func runYCSBHBase(t *testing.T, h ycsbTarget, phase string, props map[string]string) benchresult.Summary {
	t.Helper()
	s, log, err := tryYCSBHBase(t, h, phase, props)
	if err != nil {
		t.Fatalf("YCSB %s: %v\n%s", phase, err, tail(log, 40))
	}
	t.Logf("YCSB %s: %d ops, %d errors, %.0f ops/s, client CPU %.1f s, %s, %+v", phase, s.Operations, s.Errors, s.Throughput(), s.ClientCPUSeconds, s.Protocol, s.Latencies)
	return s
}

// ycsbTarget is an HBase the driver can reach: its client properties and the JVM options the
// client needs (a krb5.conf).
type ycsbTarget interface {
	driverTarget(t *testing.T) (props map[string]string, jvm []string)
}

// driverTarget: a Kerberos-secured standalone HBase is reached with the client principal ycsb
// from its KDC.
func (h *HBaseStandalone) driverTarget(*testing.T) (map[string]string, []string) {
	props := map[string]string{"hbase.zookeeper.quorum": "127.0.0.1", "hbase.zookeeper.property.clientPort": fmt.Sprint(h.ZooKeeperPort)}
	for p, v := range h.Security.ClientProperties() {
		props[p] = v
	}
	var jvm []string
	if k := h.Security.Kerberos; k != nil {
		props["principal"], props["keytab"] = "ycsb@"+k.KDC.Realm, k.KDC.Keytab("ycsb")
		jvm = append(jvm, k.KDC.JVMOption())
	}
	return props, jvm
}

// tryYCSBHBase runs the driver and returns its summary, its output and its failure.
func tryYCSBHBase(t *testing.T, h ycsbTarget, phase string, props map[string]string) (benchresult.Summary, string, error) {
	t.Helper()
	cp := driverClasspath(t)
	out := filepath.Join(t.TempDir(), "summary.json")
	all, jvm := h.driverTarget(t)
	for k, v := range map[string]string{
		"exporter":                 "dev.secured.ycsb.SummaryExporter",
		"exportfile":               out,
		"hdrhistogram.percentiles": "50,95,99",
		"threadcount":              "8",
	} {
		all[k] = v
	}
	args := append(jvm, hbase.JDK17Options...)
	for k, v := range props {
		all[k] = v
	}
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	args = append(args, "-cp", cp, "site.ycsb.Client", map[string]string{"load": "-load", "run": "-t"}[phase],
		"-db", "dev.secured.ycsb.HBaseClient")
	for _, k := range keys {
		args = append(args, "-p", k+"="+all[k])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := java(ctx, args...)
	cmd.Env = append(os.Environ(), "YCSB_PHASE="+phase)
	log, err := cmd.CombinedOutput()
	if err != nil {
		return benchresult.Summary{}, string(log), err
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return benchresult.Summary{}, string(log), fmt.Errorf("no summary: %w", err)
	}
	s, err := benchresult.Parse(b)
	return s, string(log), err
}

// The JVM driver runs YCSB's own CoreWorkload with our HBase binding against a real HBase:
// it creates and loads the table, runs the core workloads from the same definitions the k6
// driver uses, and exports the same summary the operator reads.
func TestYCSBHBaseDriverAgainstHBase(t *testing.T) {
	withStandaloneHBase(t)
	h := StartHBaseStandalone(t, "127.0.0.71", 21810, HBaseSecurity{})
	w := func(preset string, ops int64) map[string]string {
		wl, err := ycsb.Core(preset)
		if err != nil {
			t.Fatal(err)
		}
		wl.RecordCount, wl.OperationCount = 2000, ops
		return wl.Properties()
	}

	load := w("A", 0)
	load["createtable"] = "true"
	s := runYCSBHBase(t, h, "load", load)
	if s.Driver != "ycsb-hbase" || s.Phase != "load" || s.Operations != 2000 || s.Errors != 0 || s.Protocol != "plaintext" {
		t.Fatalf("load summary %+v; want 2000 inserts without error over plaintext", s)
	}

	clientSideHBase(t, h, w)

	// As the operator runs it: YCSB's core workload gated by the driver, a warm-up left out of
	// the summary and of the published run, then a window of 3 s or of 300 operations (E's
	// scans return up to 1,000 rows each: 3,000 of them took 90 s and 150 CPU-seconds).
	prom := StartPrometheus(t, "127.0.0.72:19090")
	for _, tc := range []struct {
		preset string
		window map[string]string
		mix    map[string]float64
	}{
		{"A", map[string]string{"window.seconds": "3"}, map[string]float64{"read": 0.5, "update": 0.5}},
		{"E", map[string]string{"window.operations": "300"}, map[string]float64{"scan": 0.95, "insert": 0.05}},
		{"F", map[string]string{"window.seconds": "3"}, map[string]float64{"read": 0.5, "readmodifywrite": 0.5}},
	} {
		props := gated(w(tc.preset, 0), tc.window)
		props["warmup.seconds"] = "3"
		props["prometheus.remotewrite.url"] = prom.RemoteWriteURL()
		props["prometheus.tags"] = "benchmark=hbase-" + tc.preset
		s := runYCSBHBase(t, h, "run", props)
		if tc.preset == "A" {
			checkPublished(t, prom, "hbase-A", s)
			warm := `sum(k6_ycsb_operations_total{benchmark="hbase-A", scenario="warmup"})`
			if res, err := prom.Query(context.Background(), warm); err != nil || len(res) != 1 {
				t.Errorf("%s: %v, %d results; want the warm-up's operations published apart", warm, err, len(res))
			}
		}
		window := s.End.Sub(s.Start)
		if s.Errors != 0 || s.Operations == 0 || s.ClientCPUSeconds <= 0 || window <= 0 || s.WarmUp != nil {
			t.Errorf("workload %s: %d ops, %d errors (%s), CPU %.2f s, %s..%s, warm-up %+v; want operations without error and no steady warm-up",
				tc.preset, s.Operations, s.Errors, s.FirstError, s.ClientCPUSeconds, s.Start, s.End, s.WarmUp)
		}
		if n := tc.window["window.operations"]; n != "" && fmt.Sprint(s.Operations) != n {
			t.Errorf("workload %s: %d operations; want exactly the window's %s", tc.preset, s.Operations, n)
		}
		if tc.window["window.seconds"] != "" && (window < 2500*time.Millisecond || window > 3500*time.Millisecond) {
			t.Errorf("workload %s: the window lasted %s; want 3 s", tc.preset, window)
		}
		// Operations per second of the window, as the k6 driver reports them.
		var inSeries int64
		for _, p := range s.Series {
			inSeries += p
		}
		if whole := int(window / time.Second); s.SeriesStepSeconds != 1 || len(s.Series) != whole || inSeries <= 0 || inSeries > s.Operations {
			t.Errorf("workload %s: series %v (step %d s) over %d whole seconds, %d operations; want one count per whole second", tc.preset, s.Series, s.SeriesStepSeconds, whole, s.Operations)
		}
		counts := map[string]int64{}
		for _, l := range s.Latencies {
			counts[l.Operation] = l.Count
			if l.P50 <= 0 || l.P50 > l.P95 || l.P95 > l.P99 || l.P99 > l.Max {
				t.Errorf("workload %s %s: p50 %d p95 %d p99 %d max %d µs", tc.preset, l.Operation, l.P50, l.P95, l.P99, l.Max)
			}
		}
		for op, share := range tc.mix {
			if got := float64(counts[op]) / float64(s.Operations); got < share-0.05 || got > share+0.05 {
				t.Errorf("workload %s: %s share %.3f; want %.2f", tc.preset, op, got, share)
			}
		}
	}

	// A warm-up until the throughput is steady, by the k6 driver's rule, then a 5 s window.
	s = runYCSBHBase(t, h, "run", gated(w("B", 0), map[string]string{"warmup.min": "10", "warmup.max": "60", "window.seconds": "5"}))
	t.Logf("steady warm-up: %+v, window %s, series %v", s.WarmUp, s.End.Sub(s.Start), s.Series)
	if s.WarmUp == nil || s.WarmUp.Seconds < 10 || s.WarmUp.Seconds > 61 || s.Errors != 0 || s.Operations == 0 {
		t.Errorf("steady warm-up %+v, %d ops, %d errors; want a warm-up of 10 to 60 s and a window without errors", s.WarmUp, s.Operations, s.Errors)
	}
	if d := s.End.Sub(s.Start); d < 4*time.Second || d > 5*time.Second+500*time.Millisecond {
		t.Errorf("the window lasted %s; want 5 s", d)
	}
}

// gated runs YCSB's core workload the way the operator's Jobs do (internal/render/benchmark):
// through the driver's GatedWorkload, which ends the run when its window does.
func gated(props, window map[string]string) map[string]string {
	props["workload"] = "dev.secured.ycsb.GatedWorkload"
	props["operationcount"] = strconv.Itoa(math.MaxInt32)
	maps.Copy(props, window)
	return props
}

// checkPublished compares what the driver remote-wrote under the k6 driver's names with its
// summary: the same operations, and medians within a bucket or two.
func checkPublished(t *testing.T, prom *Prometheus, benchmark string, s benchresult.Summary) {
	t.Helper()
	for _, l := range s.Latencies {
		sel := fmt.Sprintf(`k6_ycsb_operation_duration_seconds{benchmark=%q, scenario="run", protocol="plaintext", op=%q}`, benchmark, l.Operation)
		for query, want := range map[string]float64{
			"sum(histogram_count(" + sel + "))": float64(l.Count),
			fmt.Sprintf(`sum(k6_ycsb_operations_total{benchmark=%q, scenario="run", op=%q})`, benchmark, l.Operation): float64(l.Count),
			"histogram_quantile(0.5, sum(" + sel + ")) * 1e6":                                                         float64(l.P50),
		} {
			res, err := prom.Query(context.Background(), query)
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 1 {
				t.Fatalf("%s: %d results; want 1", query, len(res))
			}
			got, _ := strconv.ParseFloat(fmt.Sprint(res[0].Value[1]), 64)
			t.Logf("Prometheus: %s = %v (summary %v)", query, got, want)
			if got < want*0.85 || got > want*1.15 {
				t.Errorf("%s = %v; the summary says %v", query, got, want)
			}
		}
	}
}

// The driver logs in from a keytab and speaks SASL privacy to an HBase whose RPC demands
// Kerberos (Apache Kerby as the KDC) and native TLS; a client without Kerberos gets no
// operation through.
func TestYCSBHBaseDriverWithKerberosPrivacyAndTLS(t *testing.T) {
	withStandaloneHBase(t)
	const address = "127.0.0.74"
	kdc := StartKDC(t, "SECURED.TEST", "127.0.0.73", 18800, "hbase/"+address+"@SECURED.TEST", "ycsb@SECURED.TEST")
	h := StartHBaseStandalone(t, address, 21820, HBaseSecurity{Kerberos: &HBaseKerberos{KDC: kdc, Protection: "privacy"}, TLS: testpki.New(t)})
	// The region server's RPC port speaks TLS, verified against the test CA.
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(h.Security.TLS.PEM)
	conn, err := tls.Dial("tcp", address+":16020", &tls.Config{RootCAs: roots, ServerName: address})
	if err != nil {
		t.Fatalf("TLS to the region server: %v", err)
	}
	t.Logf("region server RPC: %s %s", tls.VersionName(conn.ConnectionState().Version), tls.CipherSuiteName(conn.ConnectionState().CipherSuite))
	conn.Close()
	wl, err := ycsb.Core("A")
	if err != nil {
		t.Fatal(err)
	}
	wl.RecordCount, wl.OperationCount = 500, 1000
	load := wl.Properties()
	load["createtable"] = "true"
	if s := runYCSBHBase(t, h, "load", load); s.Operations != 500 || s.Errors != 0 || s.Protocol != "tls+kerberos/privacy" {
		t.Fatalf("load over Kerberos: %+v", s)
	}
	if s := runYCSBHBase(t, h, "run", wl.Properties()); s.Operations != 1000 || s.Errors != 0 || s.Protocol != "tls+kerberos/privacy" {
		t.Fatalf("workload A over Kerberos: %+v", s)
	}

	plain := wl.Properties()
	plain["hbase.security.authentication"], plain["principal"], plain["keytab"] = "simple", "", ""
	plain["hbase.client.retries.number"], plain["hbase.rpc.timeout"], plain["hbase.client.operation.timeout"] = "1", "5000", "10000"
	s, log, err := tryYCSBHBase(t, h, "run", plain)
	if err == nil && s.Operations > 0 {
		t.Fatalf("a client without Kerberos completed %d operations against Kerberos-only HBase:\n%s", s.Operations, tail(log, 20))
	}
	t.Logf("a client without Kerberos: %v, %d operations, first error %q", err, s.Operations, s.FirstError)

	externalHBaseBenchmark(t, h, kdc)
}
