package study

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"secured.dev/operator/internal/test/tier"

	"secured.dev/operator/internal/test/golden"
)

// The HTML report opened in a real headless Chromium: the script draws one bar per compared
// cell in the overhead chart and one per measured cell in the throughput chart, with the
// recommended cells marked.
func TestHTMLReportDrawsItsCharts(t *testing.T) {
	tier.Full(t, "Chromium")
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed: make prereqs installs Debian's package")
	}
	a := Analyze("s", spec(), 42, measured(t))
	page, err := a.Report.HTML()
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "report.html", page)
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir="+t.TempDir(),
		"--virtual-time-budget=5000", "--dump-dom", "file://"+file)
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	drawn := regexp.MustCompile(`id="(overhead|throughput)" class="chart" data-drawn="(\d+)"`).FindAllStringSubmatch(string(dom), -1)
	if len(drawn) != 2 || drawn[0][2] != "6" || drawn[1][2] != "8" {
		t.Fatalf("charts drawn: %v; want 6 overhead and 8 throughput bars", drawn)
	}
	if n := strings.Count(string(dom), `class="bar recommended"`); n != 2 {
		t.Errorf("%d recommended bars, want the recommended cell in both charts", n)
	}
	if n := strings.Count(string(dom), `class="ci"`); n != 6+8 {
		t.Errorf("%d interval whiskers, want one per compared cell and one per measured cell", n)
	}
}
