package cpuacct

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"secured.dev/operator/internal/test/dataplane"
	"secured.dev/operator/internal/test/tier"
)

// TestAccountsARealProcessThroughPrometheus: a process that keeps a CPU busy stands for the
// datastore, a sleeping one for its sidecar; a real Prometheus scrapes their kernel counters
// every second, and the account of a window must match what the kernel says the busy process
// spent in it, at the rate it ran while the samples inside the window were taken: on a loaded
// machine a busy loop's share of a core changes from second to second (clean-clone CI once
// gave it 26% less in the seven seconds its samples covered than over the whole window).
func TestAccountsARealProcessThroughPrometheus(t *testing.T) {
	tier.Full(t, "Prometheus")
	busy := dataplane.StartProcess(t, "sh", "-c", "while :; do :; done")
	idle := dataplane.StartProcess(t, "sleep", "600")
	kubelet := dataplane.KubeletResourceMetrics(t, "127.0.0.120:0", "bench", "worker",
		map[string]int{"db-0/cassandra": busy, "db-0/tls-reloader": idle})
	prom := dataplane.StartPrometheus(t, "127.0.0.120:19090", kubelet.Address)
	u, err := ParseURL("http://" + prom.Address)
	if err != nil {
		t.Fatal(err)
	}
	p := &Prometheus{URL: u}

	time.Sleep(3 * time.Second) // samples before the window, as a warm-up leaves
	w := Window{Start: time.Now()}
	before := dataplane.ProcessCPU(t, busy)
	time.Sleep(10 * time.Second)
	w.End = time.Now()
	whole := dataplane.ProcessCPU(t, busy) - before
	time.Sleep(2500 * time.Millisecond) // the last scrape inside the window reaches the TSDB
	rate, _ := kubelet.Rate(t, busy, w.Start, w.End)
	truth := rate * w.Duration().Seconds()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := Request{Window: w, Namespace: "bench", Servers: map[string]string{"db-0": "cassandra"}, ClientCPU: 1.5, Nodes: []string{"worker"}}
	res, err := p.Account(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kernel: %.2f CPU-s at the rate between the samples, %.2f over the whole window; account: server %.2f, sidecars %.3f, clients %.3f, nodes %.2f, background %.2f, span %s",
		truth, whole, res.Server, res.Sidecars, res.Clients, res.Nodes, res.Background, res.Span)
	if truth < 0.5 {
		t.Fatalf("the busy process got only %.2f CPU-seconds in 10s: the kernel's 10 ms ticks are too coarse to tell", truth)
	}
	if d := res.Server/truth - 1; d < -0.15 || d > 0.15 {
		t.Errorf("server %.2f CPU-s, the kernel says %.2f (%+.0f%%, at most ±15%% allowed)", res.Server, truth, 100*d)
	}
	if res.Sidecars > 0.1 || res.Clients != 1.5 {
		t.Errorf("the sleeping sidecar was charged %.3f CPU-s, the clients %.3f (their own account says 1.5)", res.Sidecars, res.Clients)
	}
	if res.Nodes < res.Server || res.Background != max(0, res.Nodes-res.Server-res.Sidecars-res.Clients) {
		t.Errorf("nodes %.2f, background %.2f: the node must hold the server, and background be the rest", res.Nodes, res.Background)
	}
	if res.Span < 5*time.Second || res.Span > w.Duration() {
		t.Errorf("the samples span %s of a %s window", res.Span, w.Duration())
	}
	if res.ServerPerOperation != 0 {
		t.Errorf("without a count of operations between instants, no matched figure: %v", res.ServerPerOperation)
	}

	// A complete account needs a sample after the window of every server and node series: the
	// proof that no sample inside it is still on its way. None can exist for a window that has
	// not ended; one does once a scrape followed the window's end.
	open := req
	open.Complete, open.Window.End = true, time.Now().Add(time.Minute)
	if _, err := p.Account(ctx, open); !errors.Is(err, ErrNotScraped) || !strings.Contains(err.Error(), "pod db-0, container cassandra") {
		t.Errorf("a window with no sample after it yet: %v", err)
	}
	complete := req
	complete.Complete = true
	if got, err := p.Account(ctx, complete); err != nil || got.Server != res.Server || got.Span != res.Span {
		t.Errorf("a window with samples after it: %+v, %v; want the same account as %+v", got, err, res)
	}

	// Operations at 1,000 per second: the matched figure is the process's CPU per second between
	// the samples over 1,000, whatever part of the window they span.
	perSecond := 1000.0
	req.OperationsBetween = func(from, to time.Time) (float64, bool) { return perSecond * to.Sub(from).Seconds(), true }
	if res, err = p.Account(ctx, req); err != nil {
		t.Fatal(err)
	}
	want := rate / perSecond
	if d := res.ServerPerOperation/want - 1; d < -0.15 || d > 0.15 {
		t.Errorf("server %.1f µs per operation, the kernel says %.1f (%+.0f%%)", res.ServerPerOperation*1e6, want*1e6, 100*d)
	}
	req.OperationsBetween = func(from, to time.Time) (float64, bool) { return 0, false }
	if res, err = p.Account(ctx, req); err != nil || res.ServerPerOperation != 0 {
		t.Errorf("operations that cannot be placed in time give no matched figure: %v, %v", res.ServerPerOperation, err)
	}
	req.OperationsBetween = nil

	// What cannot be known is refused, with the name of what is missing.
	missing := req
	missing.Servers = map[string]string{"db-0": "cassandra", "db-1": "cassandra"}
	if _, err := p.Account(ctx, missing); err == nil || !strings.Contains(err.Error(), "pod bench/db-1") {
		t.Errorf("a pod without series: %v", err)
	}
	// A node only tells how quiet the machine was: without its series the datastore's figure
	// stands, and the background is unknown rather than a quiet 0.
	gone := req
	gone.Nodes = []string{"gone", "worker"}
	if got, err := p.Account(ctx, gone); err != nil || got.Server != res.Server || got.Nodes != 0 || got.Background != 0 ||
		!strings.Contains(got.BackgroundUnmeasured, `node="gone"`) {
		t.Errorf("a node without series: %+v, %v", got, err)
	}
	short := req
	short.Window = Window{Start: w.End.Add(-600 * time.Millisecond), End: w.End}
	if _, err := p.Account(ctx, short); err == nil {
		t.Error("a window shorter than one scrape interval was accounted")
	}
	down, _ := ParseURL("http://127.0.0.120:1")
	if _, err := (&Prometheus{URL: down}).Account(ctx, req); err == nil || !strings.Contains(err.Error(), "querying Prometheus") {
		t.Errorf("an unreachable Prometheus: %v", err)
	}
}
