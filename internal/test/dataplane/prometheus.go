package dataplane

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Prometheus is a real Prometheus (Debian's package) receiving remote writes with native
// histograms, as the Kind cluster's does.
type Prometheus struct {
	// Address is host:port of its HTTP API.
	Address string
	proc    *process
}

// StartPrometheus starts Prometheus on address (host:port), scraping the given host:port
// targets every second (none: it only receives remote writes).
func StartPrometheus(t testing.TB, address string, scrape ...string) *Prometheus {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("prometheus is not installed: make prereqs installs Debian's package")
	}
	dir := t.TempDir()
	config := filepath.Join(dir, "prometheus.yml")
	cfg := "global:\n  scrape_interval: 15s\nscrape_configs: []\n"
	if len(scrape) > 0 {
		cfg = fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: test\n    static_configs:\n      - targets: [%s]\n", strings.Join(scrape, ", "))
	}
	if err := os.WriteFile(config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+config, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+address, "--web.enable-remote-write-receiver", "--enable-feature=native-histograms")
	p := &Prometheus{Address: address}
	p.proc = startProcess(t, "Prometheus on "+address, cmd, "Server is ready to receive web requests", time.Minute)
	return p
}

// RemoteWriteURL is where clients send samples.
func (p *Prometheus) RemoteWriteURL() string { return "http://" + p.Address + "/api/v1/write" }

// Sample is one element of an instant query's vector.
type Sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// Query runs an instant PromQL query.
func (p *Prometheus) Query(ctx context.Context, query string) ([]Sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.Address+"/api/v1/query?query="+url.QueryEscape(query), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return DecodeQuery(query, body)
}

// DecodeQuery reads the response of Prometheus's /api/v1/query: the vector, or its error.
func DecodeQuery(query string, body []byte) ([]Sample, error) {
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []Sample `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("%s: %w (%s)", query, err, body)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s: %s", query, r.Error)
	}
	return r.Data.Result, nil
}
