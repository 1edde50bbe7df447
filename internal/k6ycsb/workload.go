package k6ycsb

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"
	"go.k6.io/k6/metrics"

	"secured.dev/operator/internal/benchresult"
	"secured.dev/operator/internal/cqlbench"
	"secured.dev/operator/internal/writecheck"
	"secured.dev/operator/internal/ycsb"
)

// workloadOptions are the script's ycsb.workload({...}) options, in YCSB's terms.
type workloadOptions struct {
	Preset              string             `js:"preset"`
	RecordCount         int64              `js:"recordCount"`
	OperationCount      int64              `js:"operationCount"`
	FieldCount          int                `js:"fieldCount"`
	FieldLength         int                `js:"fieldLength"`
	RequestDistribution string             `js:"requestDistribution"`
	Proportions         map[string]float64 `js:"proportions"`
	InsertStart         int64              `js:"insertStart"`
	InsertCount         int64              `js:"insertCount"`
	OrderedInserts      bool               `js:"orderedInserts"`
	// History is a file every write is recorded in (appended), for workload.verifyWrites; its
	// values are sealed (writecheck), so fieldLength must leave room for the seal.
	History string `js:"history"`
}

// build turns the options into YCSB's workload, naming the option at fault.
func (o workloadOptions) build() (ycsb.Workload, error) {
	if o.Preset == "" {
		o.Preset = "A"
	}
	w, err := ycsb.Core(o.Preset)
	if err != nil {
		return w, fmt.Errorf("ycsb.workload preset: %w", err)
	}
	if o.RecordCount < 0 || o.OperationCount < 0 || o.FieldCount < 0 || o.FieldLength < 0 || o.InsertStart < 0 || o.InsertCount < 0 {
		return w, fmt.Errorf("ycsb.workload: recordCount %d, operationCount %d, fieldCount %d, fieldLength %d, insertStart %d, insertCount %d: none may be negative",
			o.RecordCount, o.OperationCount, o.FieldCount, o.FieldLength, o.InsertStart, o.InsertCount)
	}
	if o.RecordCount > 0 {
		w.RecordCount = o.RecordCount
	}
	if o.OperationCount > 0 {
		w.OperationCount = o.OperationCount
	}
	if o.FieldCount > 0 {
		w.FieldCount = o.FieldCount
	}
	if o.FieldLength > 0 {
		w.FieldLength = o.FieldLength
	}
	if o.RequestDistribution != "" {
		w.RequestDistribution = o.RequestDistribution
	}
	if len(o.Proportions) > 0 {
		w.Proportions = map[ycsb.Operation]float64{}
		for k, v := range o.Proportions {
			op := ycsb.Operation(k)
			if k == "readModifyWrite" {
				op = ycsb.ReadModifyWrite
			}
			if opIndex(op) < 0 || v < 0 {
				return w, fmt.Errorf("ycsb.workload proportions: %s=%v; use non-negative read, update, insert, scan and readModifyWrite", k, v)
			}
			w.Proportions[op] = v
		}
	}
	w.Ordered = o.OrderedInserts
	return w, nil
}

// sharedWorkload is what every virtual user of a workload shares, as YCSB's threads do.
type sharedWorkload struct {
	w          ycsb.Workload
	inserts    *ycsb.InsertSequence
	loadNext   atomic.Int64
	loadEnd    int64
	mu         sync.Mutex
	phases     map[string]*phase
	phaseOrder []string
	gate       *gate  // set by the first RunUntilSteady
	pacer      *pacer // set by the first RunAtRate
	history    *writecheck.History
	historyAt  string
	writes     *benchresult.Writes // set by VerifyWrites
	// stopped: the first error thrown before any operation could run (a session that did not
	// open, a schema that was not created), which k6 prints only to the pod's log: the
	// summary carries it as its firstError, so the benchmark's status says why.
	stopped string
}

// stop records err as the reason the script stopped, unless an earlier one did.
func (s *sharedWorkload) stop(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped == "" {
		s.stopped = err.Error()
	}
}

func (s *sharedWorkload) phase(name string) *phase {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.phases[name]
	if !ok {
		p = &phase{}
		s.phases[name] = p
		s.phaseOrder = append(s.phaseOrder, name)
	}
	return p
}

var workloads = registry[*sharedWorkload]{}

// Workload is one virtual user's view of a workload.
type Workload struct {
	m       *module
	shared  *sharedWorkload
	chooser *ycsb.Chooser
	rand    *rand.Rand
	values  [][]byte
	tags    []uint64 // the seals of values, when writes are recorded

	// per-phase and per-tag caches, renewed when k6 changes the VU's tags (a new scenario) or
	// the gate moves the VU from warm-up to the measured window
	baseTags  *metrics.TagSet
	phaseName string
	phase     *phase
	opTags    map[*DB]*[5]*metrics.TagSet

	// gated: the phase the gate gave the next operation ("" outside RunUntilSteady), and the
	// measured window's end, after which an operation does not count
	gated    string
	deadline time.Time
}

func (m *module) workload(opts sobek.Value) *Workload {
	rt := m.vu.Runtime()
	var o workloadOptions
	if err := decode(rt, "ycsb.workload", opts, &o); err != nil {
		common.Throw(rt, err)
	}
	w, err := o.build()
	if err != nil {
		common.Throw(rt, err)
	}
	if o.History != "" {
		if err := writecheck.CheckLength(w.FieldLength); err != nil {
			common.Throw(rt, fmt.Errorf("ycsb.workload history: %w", err))
		}
	}
	if o.InsertCount <= 0 {
		o.InsertCount = w.RecordCount - o.InsertStart
	}
	key, _ := json.Marshal(o)
	shared, err := workloads.get(string(key), func() (*sharedWorkload, error) {
		s := &sharedWorkload{w: w, inserts: ycsb.NewInsertSequence(w.RecordCount), loadEnd: o.InsertStart + o.InsertCount, phases: map[string]*phase{}}
		s.loadNext.Store(o.InsertStart)
		if o.History != "" {
			h, err := writecheck.Create(o.History)
			if err != nil {
				return nil, fmt.Errorf("ycsb.workload history: %w", err)
			}
			s.history, s.historyAt = h, o.History
		}
		return s, nil
	})
	if err != nil {
		common.Throw(rt, err)
	}
	chooser, err := ycsb.NewChooser(w, shared.inserts)
	if err != nil {
		common.Throw(rt, fmt.Errorf("ycsb.workload: %w", err))
	}
	wl := &Workload{m: m, shared: shared, chooser: chooser, opTags: map[*DB]*[5]*metrics.TagSet{},
		rand: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())), values: make([][]byte, w.FieldCount), tags: make([]uint64, w.FieldCount)}
	for i := range wl.values {
		wl.values[i] = make([]byte, w.FieldLength)
	}
	return wl
}

// Load inserts the next record of the load phase; false once every record is inserted.
func (wl *Workload) Load(db *DB) bool {
	n := wl.shared.loadNext.Add(1) - 1
	if n >= wl.shared.loadEnd {
		return false
	}
	c := db.client(wl)
	key, stamp := wl.shared.w.KeyName(n), wl.stamp()
	wl.fill(key)
	err := wl.measure(db, ycsb.Insert, func(ctx context.Context) error { return c.Insert(ctx, key, wl.values, stamp) })
	wl.recorded(n, -1, stamp, err)
	return true
}

// Run performs ops operations of the run phase (one when ops is omitted), each chosen in the
// workload's proportions and measured on its own. Several per call amortise k6's cost of an
// iteration in closed-loop runs; open-loop runs need one per iteration, so the arrival rate
// stays the operation rate.
func (wl *Workload) Run(db *DB, ops int) {
	c := db.client(wl)
	for range max(ops, 1) {
		if wl.m.vu.Context().Err() != nil {
			return
		}
		wl.runOne(db, c)
	}
}

// steadyOptions are the script's workload.runUntilSteady(db, {...}) options.
type steadyOptions struct {
	MinWarmUp string `js:"minWarmUp"`
	MaxWarmUp string `js:"maxWarmUp"`
	Duration  string `js:"duration"`
}

// RunUntilSteady is a closed-loop run whose warm-up ends when the throughput is steady rather
// than after a guessed time: every virtual user calls it once, and it runs operations until
// the measured window that follows the warm-up is over. Warm-up operations count in the phase
// "warmup", measured ones in "run", as with two scenarios; an operation still in flight when
// the window ends is not counted, as a scenario's end interrupts it.
func (wl *Workload) RunUntilSteady(db *DB, opts sobek.Value) {
	rt := wl.m.vu.Runtime()
	var o steadyOptions
	if err := decode(rt, "workload.runUntilSteady", opts, &o); err != nil {
		common.Throw(rt, err)
	}
	g, err := wl.shared.steadyGate(o)
	if err != nil {
		common.Throw(rt, err)
	}
	c := db.client(wl)
	defer func() { wl.gated = "" }()
	for wl.m.vu.Context().Err() == nil {
		name, deadline := g.phaseAt(time.Now())
		if name == "" {
			return
		}
		wl.gated, wl.deadline = name, deadline
		wl.runOne(db, c)
	}
}

// RunAtRate is an open-loop run at a fixed rate of operations: every virtual user calls it
// once, and it runs the operations the shared schedule hands it until the warm-up and the
// measured window after it are over. Operations due in the warm-up count in the phase
// "warmup", the others in "run", as with two scenarios; one that no user was free for within
// lateness of its due time is dropped and counted (the summary's droppedIterations).
func (wl *Workload) RunAtRate(db *DB, opts sobek.Value) {
	rt := wl.m.vu.Runtime()
	var o paceOptions
	if err := decode(rt, "workload.runAtRate", opts, &o); err != nil {
		common.Throw(rt, err)
	}
	p, err := wl.shared.sharedPacer(o)
	if err != nil {
		common.Throw(rt, err)
	}
	c := db.client(wl)
	ctx := wl.m.vu.Context()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	defer func() { wl.gated = "" }()
	p.begin(time.Now())
	for ctx.Err() == nil {
		due, measured, end, ok := p.take()
		if !ok {
			return
		}
		if wait := time.Until(due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		} else if -wait > lateness {
			p.drop(measured)
			continue
		}
		wl.gated, wl.deadline = "warmup", time.Time{}
		if measured {
			wl.gated, wl.deadline = "run", end
		}
		wl.runOne(db, c)
	}
}

// sharedPacer is the schedule every virtual user shares, made by the first call.
func (s *sharedWorkload) sharedPacer(o paceOptions) (*pacer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pacer != nil {
		return s.pacer, nil
	}
	p, err := newPacer(o)
	if err != nil {
		return nil, err
	}
	s.pacer = p
	return p, nil
}

// steadyGate is the gate every virtual user shares, made by the first call.
func (s *sharedWorkload) steadyGate(o steadyOptions) (*gate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gate != nil {
		return s.gate, nil
	}
	var d [3]time.Duration
	for i, v := range []string{o.MinWarmUp, o.MaxWarmUp, o.Duration} {
		var err error
		if d[i], err = time.ParseDuration(v); err != nil || d[i] < 0 {
			return nil, fmt.Errorf("workload.runUntilSteady: minWarmUp %q, maxWarmUp %q, duration %q: give durations such as 30s", o.MinWarmUp, o.MaxWarmUp, o.Duration)
		}
	}
	if d[0] > d[1] || d[2] == 0 {
		return nil, fmt.Errorf("workload.runUntilSteady: minWarmUp %s must not exceed maxWarmUp %s, and duration must be positive", d[0], d[1])
	}
	warmup, ok := s.phases["warmup"]
	if !ok {
		warmup = &phase{}
		s.phases["warmup"] = warmup
		s.phaseOrder = append(s.phaseOrder, "warmup")
	}
	s.gate = &gate{min: d[0], max: d[1], duration: d[2], warmup: warmup}
	return s.gate, nil
}

func (wl *Workload) runOne(db *DB, c *cqlbench.Client) {
	w, r := &wl.shared.w, wl.rand
	switch op := wl.chooser.Operation(r); op {
	case ycsb.Read:
		key := w.KeyName(wl.chooser.Key(r))
		wl.measure(db, op, func(ctx context.Context) error { return c.Read(ctx, key) })
	case ycsb.Update:
		n, field, stamp := wl.chooser.Key(r), wl.chooser.Field(r), wl.stamp()
		key := w.KeyName(n)
		wl.fillOne(key, field)
		err := wl.measure(db, op, func(ctx context.Context) error { return c.Update(ctx, key, field, wl.values[0], stamp) })
		wl.recorded(n, field, stamp, err)
	case ycsb.Insert:
		n, stamp := wl.chooser.InsertKey(), wl.stamp()
		key := w.KeyName(n)
		wl.fill(key)
		err := wl.measure(db, op, func(ctx context.Context) error { return c.Insert(ctx, key, wl.values, stamp) })
		wl.recorded(n, -1, stamp, err)
		wl.chooser.Inserted(n) // acknowledged even when it failed, as YCSB does
	case ycsb.Scan:
		key, n := w.KeyName(wl.chooser.Key(r)), wl.chooser.ScanLength(r)
		wl.measure(db, op, func(ctx context.Context) error { return c.Scan(ctx, key, n) })
	case ycsb.ReadModifyWrite:
		n, field := wl.chooser.Key(r), wl.chooser.Field(r)
		key := w.KeyName(n)
		wl.fillOne(key, field)
		var stamp int64
		err := wl.measure(db, op, func(ctx context.Context) error {
			if err := c.Read(ctx, key); err != nil {
				return err
			}
			stamp = wl.stamp()
			return c.Update(ctx, key, field, wl.values[0], stamp)
		})
		if stamp != 0 { // the write was attempted
			wl.recorded(n, field, stamp, err)
		}
	}
}

// fill draws a whole record's values for key, sealed when writes are recorded.
func (wl *Workload) fill(key string) {
	for i, v := range wl.values {
		ycsb.FillValue(wl.rand, v)
		if wl.shared.history != nil {
			wl.tags[i] = writecheck.Seal(key, i, v)
		}
	}
}

// fillOne draws the value of one field in values[0], sealed when writes are recorded.
func (wl *Workload) fillOne(key string, field int) {
	ycsb.FillValue(wl.rand, wl.values[0])
	if wl.shared.history != nil {
		wl.tags[0] = writecheck.Seal(key, field, wl.values[0])
	}
}

// stamp is a write's timestamp when writes are recorded: fixed before the first attempt, so
// retries keep it and the history knows which write the datastore keeps. Otherwise 0, the
// driver's own.
func (wl *Workload) stamp() int64 {
	if wl.shared.history == nil {
		return 0
	}
	return time.Now().UnixMicro()
}

// recorded enters a write of one field (or, with field -1, of the whole record) in the
// history, acknowledged when it returned no error.
func (wl *Workload) recorded(key int64, field int, stamp int64, err error) {
	h := wl.shared.history
	if h == nil {
		return
	}
	if field >= 0 {
		h.Record(writecheck.Entry{Key: key, Field: int32(field), Stamp: stamp, Tag: wl.tags[0], Acked: err == nil})
		return
	}
	for i, tag := range wl.tags {
		h.Record(writecheck.Entry{Key: key, Field: int32(i), Stamp: stamp, Tag: tag, Acked: err == nil})
	}
}

// measure times one operation into the phase's histograms and into k6's metrics, and returns
// its error: a write that returned none was acknowledged, counted or not.
func (wl *Workload) measure(db *DB, op ycsb.Operation, do func(context.Context) error) error {
	state := wl.m.vu.State()
	ctx := wl.m.vu.Context()
	start := time.Now()
	err := do(ctx)
	d := time.Since(start)
	if ctx.Err() != nil || (!wl.deadline.IsZero() && wl.gated == "run" && start.Add(d).After(wl.deadline)) {
		return err // the test or the window is ending; an interrupted operation is not a result
	}

	base := state.Tags.GetCurrentValues().Tags
	if wl.gated != "" {
		base = base.With("scenario", wl.gated) // the series and dashboards keep warm-up apart
	}
	if base != wl.baseTags { // tag sets are interned: the same tags, the same pointer
		wl.baseTags = base
		wl.phaseName, _ = base.Get("scenario")
		if wl.phaseName == "" {
			wl.phaseName = "default"
		}
		wl.phase = wl.shared.phase(wl.phaseName)
		clear(wl.opTags)
	}
	tags := wl.opTags[db]
	if tags == nil {
		tags = new([5]*metrics.TagSet)
		protocol, suite := db.store.Negotiated()
		for i, o := range operations {
			tags[i] = base.With("op", string(o)).With("profile", db.profile).With("protocol", protocol).With("suite", suite)
		}
		wl.opTags[db] = tags
	}
	ts := tags[opIndex(op)]
	now := start.Add(d)
	var sample metrics.SampleContainer
	if err != nil {
		sample = metrics.Sample{TimeSeries: metrics.TimeSeries{Metric: wl.m.metrics.errors, Tags: ts}, Time: now, Value: 1}
	} else {
		sample = metrics.ConnectedSamples{Tags: ts, Time: now, Samples: []metrics.Sample{
			{TimeSeries: metrics.TimeSeries{Metric: wl.m.metrics.duration, Tags: ts}, Time: now, Value: metrics.D(d)},
			{TimeSeries: metrics.TimeSeries{Metric: wl.m.metrics.operations, Tags: ts}, Time: now, Value: 1},
		}}
	}
	// The sample first, the summary only once k6 took it: the scenario can end between the
	// check above and the push, which then drops the sample, and the series in Prometheus
	// must hold exactly the operations the summary counts (one more in the summary failed
	// a clean-clone CI run).
	if !metrics.PushIfNotDone(ctx, state.Samples, sample) {
		return err
	}
	wl.phase.record(op, start, d, err)
	if err != nil && wl.phase.errs[opIndex(op)].Load() == 1 {
		state.Logger.WithField("op", op).WithError(err).Warn("YCSB operation failed; further failures of this phase are only counted")
	}
	return err
}

// summaryOptions are the script's workload.summary(db, {...}) options.
type summaryOptions struct {
	Phase             string `js:"phase"`
	DroppedIterations int64  `js:"droppedIterations"`
}

// Summary is the phase's result as the JSON the operator reads.
func (wl *Workload) Summary(db *DB, opts sobek.Value) string {
	rt := wl.m.vu.Runtime()
	o := summaryOptions{Phase: "run"}
	if err := decode(rt, "workload.summary", opts, &o); err != nil {
		common.Throw(rt, err)
	}
	wl.shared.mu.Lock()
	p, g, pace, writes, stopped := wl.shared.phases[o.Phase], wl.shared.gate, wl.shared.pacer, wl.shared.writes, wl.shared.stopped
	wl.shared.mu.Unlock()
	if p == nil {
		p = &phase{}
	}
	s := p.summary()
	s.FirstError = cmp.Or(s.FirstError, stopped)
	if g != nil && o.Phase == "run" {
		s.WarmUp = g.warmUp()
	}
	s.Driver, s.Phase, s.Profile, s.DroppedIterations, s.Writes = "k6-ycsb", o.Phase, db.profile, o.DroppedIterations, writes
	if pace != nil && o.Phase == "run" {
		s.DroppedIterations += pace.dropped[1].Load()
	}
	if db.open(wl.shared.w.FieldCount) == nil { // the session the users shared, or nothing
		s.Protocol, s.Suite = db.store.Negotiated()
		s.Connections = db.store.Connections()
		s.ClientSide = db.opts.ClientSide.summary(wl.shared.w.FieldCount)
	}
	b, err := s.Marshal()
	if err != nil {
		common.Throw(rt, err)
	}
	return string(b)
}
