package main

import (
	"strings"
	"testing"
)

// A stream as go test -json writes it (abridged): a passing package with output of its own
// after its tests, a failing one whose first test passes, whose second fails in a subtest and
// which prints something of its own, and a package that timed out.
const stream = `{"Action":"start","Package":"ex.dev/m/a"}
{"Action":"run","Package":"ex.dev/m/a","Test":"TestQuick"}
{"Action":"output","Package":"ex.dev/m/a","Test":"TestQuick","Output":"=== RUN   TestQuick\n"}
{"Action":"output","Package":"ex.dev/m/a","Test":"TestQuick","Output":"--- PASS: TestQuick (2.00s)\n"}
{"Action":"pass","Package":"ex.dev/m/a","Test":"TestQuick","Elapsed":2}
{"Action":"output","Package":"ex.dev/m/a","Output":"PASS\n"}
{"Action":"output","Package":"ex.dev/m/a","Output":"ERROR\tReconciler error after the tests: context canceled\n"}
{"Action":"output","Package":"ex.dev/m/a","Output":"ok  \tex.dev/m/a\t2.1s\n"}
{"Action":"pass","Package":"ex.dev/m/a","Elapsed":2.1}
{"Action":"run","Package":"ex.dev/m/b","Test":"TestSlow"}
{"Action":"output","Package":"ex.dev/m/b","Test":"TestSlow","Output":"    slow_test.go:9: quiet detail\n"}
{"Action":"pass","Package":"ex.dev/m/b","Test":"TestSlow","Elapsed":300}
{"Action":"run","Package":"ex.dev/m/b","Test":"TestBroken"}
{"Action":"output","Package":"ex.dev/m/b","Test":"TestBroken","Output":"=== RUN   TestBroken\n"}
{"Action":"output","Package":"ex.dev/m/b","Test":"TestBroken/case","Output":"    broken_test.go:12: want 3, got 4\n"}
{"Action":"fail","Package":"ex.dev/m/b","Test":"TestBroken/case","Elapsed":1}
{"Action":"output","Package":"ex.dev/m/b","Test":"TestBroken","Output":"--- FAIL: TestBroken (1.00s)\n"}
{"Action":"fail","Package":"ex.dev/m/b","Test":"TestBroken","Elapsed":1}
{"Action":"output","Package":"ex.dev/m/b","Output":"FAIL\n"}
{"Action":"output","Package":"ex.dev/m/b","Output":"TestMain: cleanup left a process\n"}
{"Action":"output","Package":"ex.dev/m/b","Output":"FAIL\tex.dev/m/b\t301.0s\n"}
{"Action":"fail","Package":"ex.dev/m/b","Elapsed":301}
{"Action":"run","Package":"ex.dev/m/c","Test":"TestHangs"}
{"Action":"output","Package":"ex.dev/m/c","Test":"TestHangs","Output":"panic: test timed out after 50m0s\n"}
{"Action":"output","Package":"ex.dev/m/c","Output":"FAIL\tex.dev/m/c\t3000.0s\n"}
{"Action":"fail","Package":"ex.dev/m/c","Elapsed":3000}
{"ImportPath":"ex.dev/m/d","Action":"build-output","Output":"d/d.go:3:1: syntax error\n"}
not json: go itself complaining
`

func TestSummaryPrintsFailuresPackagesAndTheSlowest(t *testing.T) {
	var out strings.Builder
	s := newSummary(&out)
	if err := s.read(strings.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
	s.timings(1)
	got := out.String()
	for _, want := range []string{
		"ok  \tex.dev/m/a\t2.1s\n",
		"=== RUN   TestBroken\n    broken_test.go:12: want 3, got 4\n--- FAIL: TestBroken (1.00s)\n",
		"TestMain: cleanup left a process\n",
		"FAIL\tex.dev/m/b\t301.0s\n",
		"panic: test timed out after 50m0s\nFAIL\tex.dev/m/c\t3000.0s\n",
		"d/d.go:3:1: syntax error\n",
		"not json: go itself complaining\n",
		"slowest tests (of 2 passed):\n      5m0s  b.TestSlow\n",
		"     50m0s  c\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	for _, quiet := range []string{"quiet detail", "--- PASS", "PASS\n", "TestQuick", "Reconciler error"} {
		if strings.Contains(got, quiet) {
			t.Errorf("printed %q, which a plain go test keeps quiet:\n%s", quiet, got)
		}
	}
}

func TestShortPackageDropsTheModule(t *testing.T) {
	for in, want := range map[string]string{
		"secured.dev/operator/internal/study": "internal/study",
		"secured.dev/operator":                "secured.dev/operator",
		"fmt":                                 "fmt",
	} {
		if got := shortPackage(in); got != want {
			t.Errorf("shortPackage(%q) = %q, want %q", in, got, want)
		}
	}
}
