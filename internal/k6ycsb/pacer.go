package k6ycsb

import (
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// lateness is how long an operation may wait for a free virtual user after its due time. One
// that every user was still busy for is dropped and counted, as k6's arrival-rate executors
// drop an iteration no VU was free for: the client could not keep the rate, and the summary
// says so. A user that took an operation in time and woke late (a loaded machine's scheduler)
// still runs it, as k6 does.
const lateness = 10 * time.Millisecond

// tick is the schedule's grain: operations due within the same millisecond start together, as
// they do in clients built on tokio's 1 ms timer wheel (latte), so that one wake-up of the
// runtime starts several of them instead of one each. At 5,000 operations per second it took
// the client from 15,400 to 17,900 operations per CPU-second (make bench-client).
const tick = time.Millisecond

// pacer hands out the operations of an open-loop run: operation k is due at start + k/rate,
// rounded up to the next tick; the first free virtual user takes it and waits until it is due. k6's constant-arrival-rate
// executor does the same with one JavaScript iteration per operation, which cost our client
// two thirds of its CPU at 5,000 operations per second (make bench-client); here an iteration
// lasts the whole run and the schedule costs an atomic add and a timer per operation.
type pacer struct {
	rate             float64 // operations per second
	warmUp, duration time.Duration

	once  sync.Once
	start time.Time    // operation 0's due time: when the first user arrived
	next  atomic.Int64 // the next operation to hand out
	// dropped counts the operations of the warm-up [0] and of the measured window [1] that
	// started too late.
	dropped [2]atomic.Int64
}

// paceOptions are the script's workload.runAtRate(db, {...}) options.
type paceOptions struct {
	Rate     float64 `js:"rate"`
	WarmUp   string  `js:"warmUp"`
	Duration string  `js:"duration"`
}

func newPacer(o paceOptions) (*pacer, error) {
	warmUp, err1 := time.ParseDuration(o.WarmUp)
	duration, err2 := time.ParseDuration(o.Duration)
	if err1 != nil || err2 != nil || warmUp < 0 || duration <= 0 {
		return nil, fmt.Errorf("workload.runAtRate: warmUp %q, duration %q: give durations such as 10s, the duration positive", o.WarmUp, o.Duration)
	}
	if !(o.Rate > 0) || math.IsInf(o.Rate, 0) {
		return nil, fmt.Errorf("workload.runAtRate: rate %s: give a positive number of operations per second", strconv.FormatFloat(o.Rate, 'g', -1, 64))
	}
	return &pacer{rate: o.Rate, warmUp: warmUp, duration: duration}, nil
}

// begin fixes the schedule's origin at the first call; later callers wait until it is fixed.
func (p *pacer) begin(now time.Time) { p.once.Do(func() { p.start = now }) }

// take hands out the next operation: when it is due, whether it belongs to the measured
// window, and the window's end; ok is false once the schedule is over.
func (p *pacer) take() (due time.Time, measured bool, end time.Time, ok bool) {
	k := p.next.Add(1) - 1
	at := time.Duration(float64(k) / p.rate * float64(time.Second))
	end = p.start.Add(p.warmUp + p.duration)
	due = p.start.Add((at + tick - 1).Truncate(tick))
	return due, at >= p.warmUp, end, due.Before(end)
}

// drop counts an operation that started too late.
func (p *pacer) drop(measured bool) {
	i := 0
	if measured {
		i = 1
	}
	p.dropped[i].Add(1)
}
