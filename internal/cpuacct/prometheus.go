package cpuacct

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The kubelet's resource metrics (/metrics/resource). cAdvisor's endpoint exports the first
// one too, with extra series for whole pods (container="") and their sandboxes
// (container="POD"), which the selector leaves out.
const (
	containerMetric = "container_cpu_usage_seconds_total"
	nodeMetric      = "node_cpu_usage_seconds_total"
	// NodeLabel is the label that names the node on node_cpu_usage_seconds_total: the kubelet
	// does not export one, so the scrape configuration must add it (kube-prometheus-stack's
	// kubelet ServiceMonitor does; hack/kind/prometheus.yaml shows the relabelling).
	NodeLabel = "node"
)

// maxResponse bounds what a Prometheus answer may hold: a window's raw samples for a few
// dozen series are kilobytes.
const maxResponse = 16 << 20

// Prometheus reads the counters from a Prometheus that scrapes the kubelets.
type Prometheus struct {
	// URL of the Prometheus server: its HTTP API is under URL/api/v1/.
	URL *url.URL
	// Client defaults to one with a 30s timeout.
	Client *http.Client
}

// ParseURL checks a Prometheus base URL: absolute, http or https, without query, fragment or
// credentials (a password would end up in logs and flags).
func ParseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%q is not a URL: %w", s, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%q: the scheme must be http or https, like http://prometheus.monitoring:9090", s)
	case u.Host == "":
		return nil, fmt.Errorf("%q has no host: write it like http://prometheus.monitoring:9090", s)
	case u.User != nil:
		return nil, fmt.Errorf("%q carries credentials; they do not belong in a flag", u.Redacted())
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("%q: give the server's base URL, without query or fragment", s)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u, nil
}

// Request is whose CPU a run's accounting wants, in one namespace.
type Request struct {
	Window    Window
	Namespace string
	// Servers maps the datastore's pods to their datastore container; their other containers
	// (TLS reloader, tunnel) count as sidecars.
	Servers map[string]string
	// ClientCPU: the CPU-seconds the clients spent in the window, by their own account. Their
	// pods start just before the run, and the kubelet's first sample of a new container often
	// comes too late to cover the window.
	ClientCPU float64
	// Nodes that host the servers and the clients; whatever else runs there is background.
	Nodes []string
	// OperationsBetween counts the operations the clients completed between two instants of
	// the window, when it can (false: the run has no per-second series, or the instants lie
	// outside it).
	OperationsBetween func(from, to time.Time) (float64, bool)
	// Complete asks for proof that Prometheus already holds every sample inside the window: a
	// later sample of each server and node series. A kubelet stamps a sample when it reads the
	// counter, and Prometheus stores it only at its next scrape, seconds later on a busy node;
	// without the proof, an account taken too early covers less of the window than it could,
	// or none of it (ErrNotScraped).
	Complete bool
}

// ErrNotScraped: a series has no sample after the window yet, so samples inside it may still
// be on their way to Prometheus. Asking again a few seconds later helps.
var ErrNotScraped = errors.New("Prometheus holds no sample after the window yet")

// Result is CPU-seconds spent in the window.
type Result struct {
	Server, Sidecars, Clients float64
	// Nodes: every node's total, kubelet and system daemons included.
	Nodes float64
	// Background: what the nodes spent besides the datastore and the clients (never negative;
	// the counters are read at slightly different moments).
	Background float64
	// BackgroundUnmeasured says why Nodes and Background are unknown (a node series Prometheus
	// lacks, or one whose samples cannot be placed in the window); the datastore's figures
	// stand without them.
	BackgroundUnmeasured string
	// Span: the shortest time the samples of one server or node series covered inside the
	// window.
	Span time.Duration
	// ServerPerOperation: the datastore's CPU-seconds per operation, each container's CPU
	// between its own first and last sample over the operations completed between the same
	// instants, so a throughput that swung inside the window does not move it; 0 when the
	// request cannot count operations between instants.
	ServerPerOperation float64
}

// Account reads every series Request names over its window. A missing series is an error
// that names it: a figure for part of the datastore would look like a cheap profile.
func (p *Prometheus) Account(ctx context.Context, req Request) (Result, error) {
	w := req.Window
	if w.Duration() <= 0 {
		return Result{}, fmt.Errorf("the window %s..%s is empty", w.Start.UTC().Format(time.RFC3339), w.End.UTC().Format(time.RFC3339))
	}
	if len(req.Servers) == 0 || len(req.Nodes) == 0 {
		// An empty alternative would match the series that lack the label.
		return Result{}, errors.New("no datastore pod, or no node, to account for")
	}
	pods := slices.Sorted(func(yield func(string) bool) {
		for pod := range req.Servers {
			if !yield(pod) {
				return
			}
		}
	})
	// A complete account reads up to now, for the samples after the window that prove it.
	until := w.End
	if now := time.Now(); req.Complete && now.After(until) {
		until = now
	}
	containers, err := p.series(ctx, fmt.Sprintf(`%s{namespace=%s,pod=~%s,container!="",container!="POD"}`,
		containerMetric, quote(req.Namespace), quote(alternatives(pods))), w.Start, until, "pod", "container")
	if err != nil {
		return Result{}, err
	}
	nodes, err := p.series(ctx, fmt.Sprintf(`%s{%s=~%s}`, nodeMetric, NodeLabel, quote(alternatives(req.Nodes))), w.Start, until, NodeLabel)
	if err != nil {
		return Result{}, err
	}
	res := Result{Span: w.Duration(), Clients: req.ClientCPU}
	use := func(what string, pts []Point) (float64, error) {
		if req.Complete && (len(pts) == 0 || !pts[len(pts)-1].T.After(w.End)) {
			return 0, fmt.Errorf("%w: %s", ErrNotScraped, what)
		}
		u, span, err := Usage(pts, w)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", what, err)
		}
		res.Span = min(res.Span, span)
		return u, nil
	}
	seen := map[string]bool{}
	matched := req.OperationsBetween != nil
	for key, pts := range containers {
		pod, container := key[0], key[1]
		seen[pod] = true
		if container != req.Servers[pod] {
			// A sidecar's CPU is a footnote, and the kubelet samples an idle container seldom
			// (once in a 30 s window on Kind): one it cannot place in the window counts as
			// background rather than costing the run its figure.
			if u, _, err := Usage(pts, w); err == nil {
				res.Sidecars += u
			}
			continue
		}
		u, err := use(fmt.Sprintf("pod %s, container %s", pod, container), pts)
		if err != nil {
			return Result{}, err
		}
		res.Server += u
		if matched {
			first, last, _ := Bounds(pts, w) // use accepted them
			ops, ok := req.OperationsBetween(first.T, last.T)
			matched = ok && ops > 0
			if matched {
				res.ServerPerOperation += (last.V - first.V) / ops
			}
		}
	}
	for _, pod := range pods {
		if !seen[pod] {
			return Result{}, fmt.Errorf("Prometheus has no %s series for pod %s/%s in the window: is it scraping the kubelet of the pod's node?", containerMetric, req.Namespace, pod)
		}
	}
	// A node series only tells how quiet the machine was: one that cannot be read costs the
	// run its background figure, not the datastore's (in one make demo study a node's samples
	// spanned 3 s of a 10 s window while the server's covered it).
	for _, node := range req.Nodes {
		pts, ok := nodes[[2]string{node}]
		if !ok {
			res.BackgroundUnmeasured = fmt.Sprintf("Prometheus has no %s{%s=%q} series in the window: scrape the node's kubelet at /metrics/resource and label its series with the node's name", nodeMetric, NodeLabel, node)
			break
		}
		u, err := use("node "+node, pts)
		if errors.Is(err, ErrNotScraped) {
			return Result{}, err
		}
		if err != nil {
			res.BackgroundUnmeasured = err.Error()
			break
		}
		res.Nodes += u
	}
	if res.BackgroundUnmeasured != "" {
		res.Nodes = 0
	} else {
		res.Background = max(0, res.Nodes-res.Server-res.Sidecars-res.Clients)
	}
	if !matched {
		res.ServerPerOperation = 0
	}
	return res, nil
}

// series runs selector as a range query from from to until and returns the raw samples by the
// values of the key labels. Where several series share a key (the kubelet scraped by two jobs, or both
// its resource and cAdvisor endpoints), the one with the most samples is kept.
func (p *Prometheus) series(ctx context.Context, selector string, from, until time.Time, key ...string) (map[[2]string][]Point, error) {
	query := fmt.Sprintf("%s[%dms]", selector, until.Sub(from).Milliseconds())
	u := *p.URL
	u.Path += "/api/v1/query"
	u.RawQuery = url.Values{"query": {query}, "time": {unixSeconds(until)}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	c := p.Client
	if c == nil {
		c = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("querying Prometheus at %s: %w", p.URL.Redacted(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, fmt.Errorf("reading Prometheus's answer: %w", err)
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Values [][2]any          `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("Prometheus at %s answered %s with something other than its API's JSON: %w", p.URL.Redacted(), resp.Status, err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("Prometheus refused %s: %s", query, r.Error)
	}
	if r.Data.ResultType != "matrix" {
		return nil, fmt.Errorf("Prometheus answered %s with a %s, not a matrix", query, r.Data.ResultType)
	}
	out := map[[2]string][]Point{}
	for _, s := range r.Data.Result {
		var k [2]string
		for i, l := range key {
			k[i] = s.Metric[l]
		}
		pts, err := points(s.Values)
		if err != nil {
			return nil, fmt.Errorf("Prometheus answered %s: %w", query, err)
		}
		if len(pts) > len(out[k]) {
			out[k] = pts
		}
	}
	return out, nil
}

// points decodes the API's [unix seconds, "value"] pairs.
func points(values [][2]any) ([]Point, error) {
	out := make([]Point, 0, len(values))
	for _, v := range values {
		ts, ok := v[0].(float64)
		str, ok2 := v[1].(string)
		if !ok || !ok2 {
			return nil, errors.New("a sample is not a [time, \"value\"] pair")
		}
		f, err := strconv.ParseFloat(str, 64)
		if err != nil {
			return nil, fmt.Errorf("sample value %q: %w", str, err)
		}
		out = append(out, Point{T: time.UnixMilli(int64(ts * 1000)), V: f})
	}
	return out, nil
}

// alternatives is a regular expression that matches exactly the given names (Prometheus
// anchors it).
func alternatives(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	return strings.Join(quoted, "|")
}

// quote writes s as a PromQL string literal, whose escapes are Go's.
func quote(s string) string { return strconv.Quote(s) }

func unixSeconds(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}
