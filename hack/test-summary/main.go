// Command test-summary turns `go test -json` into what a plain `go test` prints (a line per
// package, and the whole output of every test that failed or did not finish), then lists the
// slowest tests and what each package took.
//
// Why: make test must stay within CI's budget on 2 cores, and a plain run names only packages:
// its slowest package runs 30 tests in two lanes, and which of them grew was invisible. A
// verbose run shows every test's time but buries a failure in thousands of lines, and CI keeps
// only what the run printed.
//
// Usage: go test -json ./... | go run ./hack/test-summary [-slowest 15]
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"
)

func main() {
	slowest := flag.Int("slowest", 15, "how many of the slowest tests to list")
	flag.Parse()
	s := newSummary(os.Stdout)
	if err := s.read(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "test-summary:", err)
		os.Exit(1)
	}
	s.timings(*slowest)
}

// event is one line of test2json's output (go doc test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// summary prints as it reads, so a long run shows its packages as they end.
type summary struct {
	out io.Writer
	// held is the output of each running top-level test, by package and test ("" for the
	// package's own, such as a logger's lines after its last test), printed if the test fails or
	// its package fails without it finishing (a timeout's panic).
	held     map[string]map[string][]string
	tests    []timing
	packages []timing
}

type timing struct {
	name    string
	elapsed time.Duration
}

func newSummary(out io.Writer) *summary {
	return &summary{out: out, held: map[string]map[string][]string{}}
}

func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// go test prints some failures (a package that does not build with an old
			// toolchain, a crash of go itself) as text: pass them on.
			fmt.Fprintln(s.out, sc.Text())
			continue
		}
		s.add(e)
	}
	return sc.Err()
}

func (s *summary) add(e event) {
	top, _, _ := strings.Cut(e.Test, "/")
	switch {
	case e.Action == "build-output":
		fmt.Fprint(s.out, e.Output)
	case e.Test == "" && e.Action == "output":
		switch line := strings.TrimSpace(e.Output); {
		case strings.HasPrefix(line, "FAIL\t"):
			s.unfinished(e.Package)
			fmt.Fprint(s.out, e.Output)
		case strings.HasPrefix(line, "ok  \t"), strings.HasPrefix(line, "?   \t"):
			fmt.Fprint(s.out, e.Output)
		case line != "PASS" && line != "FAIL":
			s.hold(e.Package, "", e.Output) // the package's own output, a plain go test's too: shown if it fails
		}
	case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
		if e.Action == "fail" {
			s.unfinished(e.Package)
		}
		s.packages = append(s.packages, timing{e.Package, seconds(e.Elapsed)})
		delete(s.held, e.Package)
	case e.Test == "":
	case e.Action == "output":
		s.hold(e.Package, top, e.Output)
	case e.Action == "fail" && e.Test == top: // with its failed subtests' output
		s.print(e.Package, top)
	case (e.Action == "pass" || e.Action == "skip") && e.Test == top:
		delete(s.held[e.Package], top)
		if e.Action == "pass" {
			s.tests = append(s.tests, timing{shortPackage(e.Package) + "." + top, seconds(e.Elapsed)})
		}
	}
}

func (s *summary) hold(pkg, test, output string) {
	if s.held[pkg] == nil {
		s.held[pkg] = map[string][]string{}
	}
	s.held[pkg][test] = append(s.held[pkg][test], output)
}

// unfinished prints the package's own output and that of its tests that were still running
// when it ended (a timeout's panic names them).
func (s *summary) unfinished(pkg string) {
	for _, test := range slices.Sorted(maps.Keys(s.held[pkg])) {
		s.print(pkg, test)
	}
}

func (s *summary) print(pkg, test string) {
	for _, line := range s.held[pkg][test] {
		fmt.Fprint(s.out, line)
	}
	delete(s.held[pkg], test)
}

// timings lists the n slowest passed top-level tests and the packages by time.
func (s *summary) timings(n int) {
	if len(s.tests) == 0 {
		return
	}
	byTime := func(a, b timing) int { return cmp.Or(cmp.Compare(b.elapsed, a.elapsed), cmp.Compare(a.name, b.name)) }
	slices.SortFunc(s.tests, byTime)
	fmt.Fprintf(s.out, "\nslowest tests (of %d passed):\n", len(s.tests))
	for _, t := range s.tests[:min(n, len(s.tests))] {
		fmt.Fprintf(s.out, "  %8s  %s\n", t.elapsed, t.name)
	}
	slices.SortFunc(s.packages, byTime)
	fmt.Fprintln(s.out, "slowest packages (go test runs them side by side):")
	for _, p := range s.packages[:min(5, len(s.packages))] {
		fmt.Fprintf(s.out, "  %8s  %s\n", p.elapsed, shortPackage(p.name))
	}
}

func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Second)
}

// shortPackage drops the module path (a domain and a name), which every package shares.
func shortPackage(p string) string {
	parts := strings.SplitN(p, "/", 3)
	if len(parts) == 3 && strings.Contains(parts[0], ".") {
		return parts[2]
	}
	return p
}
