package k6ycsb

import (
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"secured.dev/operator/internal/benchresult"
	"secured.dev/operator/internal/ycsb"
)

// operations in the order summaries list them.
var operations = []ycsb.Operation{ycsb.Read, ycsb.Update, ycsb.Insert, ycsb.Scan, ycsb.ReadModifyWrite}

// opIndex is the operation's place in operations, -1 for no operation.
func opIndex(op ycsb.Operation) int {
	for i, o := range operations {
		if o == op {
			return i
		}
	}
	return -1
}

// phase collects one scenario's results (load, warmup, run) from every virtual user.
type phase struct {
	hist [5]benchresult.Histogram
	errs [5]atomic.Int64
	// done counts successful operations per second of the phase, as Operations counts them,
	// so the report can show whether the window was steady.
	done benchresult.Series

	start, end atomic.Int64 // unix nanoseconds of the first start and the last end
	cpuAtStart atomic.Int64 // process CPU nanoseconds when the first operation started

	firstErr     sync.Once
	firstErrText string
}

func (p *phase) record(op ycsb.Operation, start time.Time, d time.Duration, err error) {
	i := opIndex(op)
	if err != nil {
		p.errs[i].Add(1)
		p.firstErr.Do(func() { p.firstErrText = string(op) + ": " + err.Error() })
	} else {
		p.hist[i].Record(d)
	}
	if p.start.CompareAndSwap(0, start.UnixNano()) {
		p.cpuAtStart.Store(processCPU())
	}
	end := start.Add(d).UnixNano()
	if err == nil {
		p.done.Add(time.Duration(end - p.start.Load()))
	}
	for {
		e := p.end.Load()
		if end <= e || p.end.CompareAndSwap(e, end) {
			return
		}
	}
}

// summary reads the phase; CPU is counted from its first operation to now, so it is exact
// for the phase a test ends with (the measured run) and an upper bound for earlier ones.
func (p *phase) summary() benchresult.Summary {
	s := benchresult.Summary{
		Start: time.Unix(0, p.start.Load()).UTC(),
		End:   time.Unix(0, p.end.Load()).UTC(),
	}
	if p.start.Load() != 0 {
		s.ClientCPUSeconds = float64(processCPU()-p.cpuAtStart.Load()) / 1e9
	}
	for i, op := range operations {
		errs := p.errs[i].Load()
		if p.hist[i].Count() == 0 && errs == 0 {
			continue
		}
		l := benchresult.LatencyOf(string(op), &p.hist[i], errs)
		s.Latencies = append(s.Latencies, l)
		s.Operations += l.Count
		s.Errors += errs
	}
	s.Series, s.SeriesStepSeconds = p.done.Points(s.End.Sub(s.Start))
	p.firstErr.Do(func() {}) // the text is final once Do has run
	s.FirstError = p.firstErrText
	return s
}

// processCPU is the user and system CPU time this process used, in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
