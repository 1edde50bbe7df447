package cpuacct

import (
	"math"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func TestUsageExtrapolatesTheRateInsideTheWindow(t *testing.T) {
	// 0.5 CPU-seconds per second inside the window; the samples before and after it (warm-up
	// at another rate, idle afterwards) must not count.
	pts := []Point{{at(-10), 0}, {at(3), 10}, {at(13), 15}, {at(23), 20}, {at(40), 20.1}}
	u, span, err := Usage(pts, Window{Start: at(0), End: at(30)})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(u-15) > 1e-9 || span != 20*time.Second {
		t.Fatalf("usage %.3f over a span of %s, want 15 CPU-seconds (0.5/s x 30s) over 20s", u, span)
	}
}

func TestUsageRefusesWhatItCannotKnow(t *testing.T) {
	w := Window{Start: at(0), End: at(30)}
	for name, c := range map[string]struct {
		pts  []Point
		want string
	}{
		"one sample":          {[]Point{{at(-5), 1}, {at(12), 3}, {at(35), 9}}, "1 samples inside"},
		"a restart":           {[]Point{{at(2), 10}, {at(12), 1}, {at(25), 4}}, "restarted"},
		"too little coverage": {[]Point{{at(10), 1}, {at(18), 3}}, "span 8s of its 30s"},
	} {
		if _, _, err := Usage(c.pts, w); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one that says %q", name, err, c.want)
		}
	}
}

func TestParseURL(t *testing.T) {
	u, err := ParseURL("http://prometheus.monitoring:9090/prom/")
	if err != nil || u.String() != "http://prometheus.monitoring:9090/prom" {
		t.Fatalf("got %v, %v", u, err)
	}
	for _, bad := range []string{"prometheus:9090", "ftp://p:21", "http://user:secret@p:9090", "http://p:9090/?x=1", "http:///api"} {
		if _, err := ParseURL(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("the error repeats the password: %v", err)
		}
	}
}

func TestSelectorsQuoteAndMatchExactly(t *testing.T) {
	if got := alternatives([]string{"a.b", "c"}); got != `a\.b|c` {
		t.Fatalf("alternatives: %s", got)
	}
	if got := quote(`x"}or vector(1)`); got != `"x\"}or vector(1)"` {
		t.Fatalf("quote: %s", got)
	}
}
