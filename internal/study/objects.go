package study

import (
	"cmp"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
)

// StudyLabel marks every object a study created, so it can find and delete them.
const StudyLabel = "datastore.secured.dev/study"

// CellLabel names the cell a datastore or benchmark belongs to.
const CellLabel = "datastore.secured.dev/cell"

// labels of a study's object; cell is nil for the study's own objects and for a datastore that
// cells share.
func labels(study *v1alpha1.TradeoffStudy, cell *v1alpha1.StudyCell) map[string]string {
	l := map[string]string{StudyLabel: study.Name, "app.kubernetes.io/managed-by": "secured-datastore-operator"}
	if cell != nil && len(cell.Name) <= 63 {
		l[CellLabel] = cell.Name
	}
	return l
}

// Datastore is the cell's SecuredDatastore: the template with the cell's profile, size and
// acceleration. By default each profile, acceleration and size has its own: switching one
// datastore between profiles is a rolling restart per switch, which interleaved repetitions
// pay at every step, and a Switched study asks for exactly that. A Shared study's datastore
// runs the other profile than the baseline whichever cell it is built for, its client channel
// Optional so that the baseline's runs connect in plaintext. A datastore that cells share
// carries no cell label.
func Datastore(study *v1alpha1.TradeoffStudy, cell *v1alpha1.StudyCell) *v1alpha1.SecuredDatastore {
	t := study.Spec.Template
	owner := cell
	if cell.FieldLength > 0 || sharesDatastores(&study.Spec) {
		owner = nil
	}
	enc := v1alpha1.DatastoreEncryption{ProfileRef: cell.Profile}
	if Shared(&study.Spec) {
		enc.ProfileRef = SharedProfile(&study.Spec)
		enc.ClientToNode = &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelOptional}}
	}
	ds := &v1alpha1.SecuredDatastore{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "SecuredDatastore"},
		ObjectMeta: metav1.ObjectMeta{Name: cell.Datastore, Namespace: study.Namespace, Labels: labels(study, owner)},
		Spec: v1alpha1.SecuredDatastoreSpec{
			Engine: t.Engine, Version: t.Version, Image: t.Image,
			Encryption:   enc,
			Certificates: t.Certificates.DeepCopy(),
			// Probed when it starts, when a pod restarts and when a certificate is reissued,
			// not on the 5-minute timer: a probe's TLS handshakes land in whichever run
			// measures the datastore at that moment (make demo: a plaintext run's window
			// compiled the JVM's handshake code, 2026-12-01).
			Verification: &v1alpha1.VerificationSpec{Interval: &metav1.Duration{Duration: StudyVerificationInterval}},
		},
	}
	switch t.Engine {
	case v1alpha1.EngineCassandra:
		ds.Spec.Cassandra = &v1alpha1.CassandraTopology{}
		if t.Cassandra != nil {
			ds.Spec.Cassandra = t.Cassandra.DeepCopy()
		}
		ds.Spec.Cassandra.Nodes = ptr.To(cell.Nodes)
		ds.Spec.Cassandra.Storage.WhenDeleted = v1alpha1.VolumeDelete
	case v1alpha1.EngineHBase:
		ds.Spec.HBase = &v1alpha1.HBaseTopology{}
		if t.HBase != nil {
			ds.Spec.HBase = t.HBase.DeepCopy()
		}
		ds.Spec.HBase.RegionServers = ptr.To(cell.Nodes)
		ds.Spec.HBase.Storage.WhenDeleted = v1alpha1.VolumeDelete
	}
	if cell.Acceleration == v1alpha1.AccelerationEmulatedOff {
		ds.Spec.Placement = &v1alpha1.PlacementSpec{EmulateNoAcceleration: true}
	}
	return ds
}

// StudyVerificationInterval is the wire-probe timer of a study's datastores: longer than a study
// runs, so the timer never fires during one.
const StudyVerificationInterval = 24 * time.Hour

// Benchmark is the k-th repetition of a cell: one measured run against its datastore. The
// first repetition loads the data, unless the cell's warm-up did, and so does the first after
// each switch of a Switched study (AfterSwitch); the others reuse it. A round measured again
// because the machine was busy gets a benchmark of its own, named after the attempt.
func Benchmark(study *v1alpha1.TradeoffStudy, cell *v1alpha1.StudyCell, k int) *v1alpha1.DatastoreBenchmark {
	name, attempt := BenchmarkName(cell, k), Attempt(cell, k+1)
	fresh := k == 0 || AfterSwitch(study, cell, k)
	if attempt > 0 {
		name += fmt.Sprintf("-a%d", attempt)
	}
	b := &v1alpha1.DatastoreBenchmark{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "DatastoreBenchmark"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: study.Namespace, Labels: labels(study, cell)},
		Spec: v1alpha1.DatastoreBenchmarkSpec{
			Target:      target(study, cell),
			Workload:    workload(study, cell),
			Load:        load(&study.Spec),
			Repetitions: ptr.To[int32](1),
			WarmUp:      study.Spec.WarmUp,
			// The warm-up, or else the first attempt of a fresh repetition, loaded it.
			SkipLoad:   !fresh || attempt > 0 || WarmsFirst(&study.Spec),
			QuietStart: quietStart(&study.Spec),
		},
	}
	if q := b.Spec.QuietStart; q != nil {
		q.After = study.Status.LastRunEnd.DeepCopy()
		if !fresh && study.Status.LastRunEnd != nil && study.Status.LastRunDatastore == cell.Datastore {
			// The run just before measured this datastore: what it left behind (a flush, a
			// compaction) is in the measured pods, which a quiet start does not judge, and the
			// rest of the nodes was measured as its background up to its end, which Judge sets
			// aside when busy. Waiting would only hold the pair apart. A first run, or the
			// first after a switch, follows a load or a restart and still waits.
			b.Spec.QuietStart = nil
		}
	}
	if fresh && attempt == 0 {
		b.Spec.SteadyWarmUp = steadyWarmUp(&study.Spec)
		if b.Spec.SteadyWarmUp == nil && Switched(&study.Spec) && study.Spec.Workload.Storage == nil {
			// At a fixed rate a run cannot judge its own warm-up, and a Switched study has no
			// warm-up before round 1: the first run after a switch, on nodes that have just
			// restarted, warms up as long as a PerCell study's cells do before round 1. Seed
			// 000's AR+RR study with spec.warmUp alone (10 s): a 3-node Cassandra served 154 and
			// 280 of 500 operations per second right after it came up.
			b.Spec.WarmUp = firstWarmUp(&study.Spec)
		}
	}
	return b
}

// target of a cell's benchmarks: its datastore, in plaintext for a Shared study's baseline.
func target(study *v1alpha1.TradeoffStudy, cell *v1alpha1.StudyCell) v1alpha1.BenchmarkTarget {
	plaintext := Shared(&study.Spec) && cell.Profile == study.Spec.Matrix.Baseline
	return v1alpha1.BenchmarkTarget{DatastoreRef: &v1alpha1.SecuredDatastoreReference{Name: cell.Datastore, Plaintext: plaintext}}
}

// load of the study's benchmarks: a study without spec.load has no mode (the API server
// defaults it only inside a load that is there), and a benchmark's load must name one.
func load(spec *v1alpha1.TradeoffStudySpec) v1alpha1.Load {
	l := *spec.Load.DeepCopy()
	if l.Mode == "" {
		l.Mode = v1alpha1.LoadMaxThroughput
	}
	return l
}

// workload of the cell's benchmarks: the study's, with the cell's value size in a table of its
// own where value sizes are a factor.
func workload(study *v1alpha1.TradeoffStudy, cell *v1alpha1.StudyCell) v1alpha1.Workload {
	w := *study.Spec.Workload.DeepCopy()
	if cell.FieldLength > 0 {
		w.FieldLength, w.Table = ptr.To(cell.FieldLength), Table(cell.FieldLength)
	}
	return w
}

// WarmsFirst: every cell warms up before round 1 (WarmUpWaits says in which order), where a
// run cannot judge its own warm-up (a fixed rate or a fixed operation count, see
// steadyWarmUp); round 1 then finds every cell warm.
// A storage workload has no warm-up: each run lays out its own file on a new volume. In a
// Switched study no cell is up before its turn and every switch restarts the nodes: each run
// warms up for itself, and a cell's first run after each switch loads its data (AfterSwitch).
func WarmsFirst(spec *v1alpha1.TradeoffStudySpec) bool {
	return spec.Workload.Storage == nil && steadyWarmUp(spec) == nil && !Switched(spec)
}

// WarmUpsTogether bounds the warm-ups that run side by side, each on a datastore of its own.
// Six 3-node cells warming together on two cores (their loads staggered) dropped 79 to 89% of
// their schedules, and the first cell's load, beside twelve starting JVMs, timed out 26 inserts
// in three attempts. At a fixed rate each offers its share of the study's rate (warmUpRate).
const WarmUpsTogether = 2

// WarmUpWaits says what a cell's warm-up waits for before it may start, "" once it may:
// warming maps each datastore whose warm-up still runs to its cell. The cells of a datastore
// warm in turn, since they share its JVM, and none warms while a cell still comes up (provisioning):
// JVMs starting beside a warm-up make its load time out.
func WarmUpWaits(cell *v1alpha1.StudyCell, warming map[string]string, provisioning bool) string {
	switch on := warming[cell.Datastore]; {
	case provisioning:
		return "every cell to be up"
	case on != "":
		return on + "'s warm-up on datastore " + cell.Datastore
	case len(warming) >= WarmUpsTogether:
		return fmt.Sprintf("%d warm-ups at once", WarmUpsTogether)
	}
	return ""
}

// warmUpDroppedPercent: a warm-up's figures are discarded, and it only has to run: a JIT still
// compiling may hold the clients back from a fixed rate.
const warmUpDroppedPercent = 50

// warmUpWindow is the warm-up benchmark's measured window, discarded: the benchmark always
// measures something after its warm-up.
const warmUpWindow = 5 * time.Second

// WarmUpBenchmark loads a cell's data, unless another cell's warm-up on the same datastore
// loaded the same table already (loaded; see WarmUpData), and warms its datastore for
// steadyWarmUp's minimum, at the study's load (WarmsFirst). Nothing it measures counts.
func WarmUpBenchmark(study *v1alpha1.TradeoffStudy, cell *v1alpha1.StudyCell, loaded bool) *v1alpha1.DatastoreBenchmark {
	spec := &study.Spec
	w := workload(study, cell)
	if w.OperationCount == nil {
		w.Duration = &metav1.Duration{Duration: warmUpWindow}
	}
	load := load(spec)
	if load.Mode == v1alpha1.LoadFixedRate {
		load.MaxDroppedPercent = ptr.To[int32](warmUpDroppedPercent)
		load.Rate = warmUpRate(load.Rate)
	}
	return &v1alpha1.DatastoreBenchmark{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "DatastoreBenchmark"},
		ObjectMeta: metav1.ObjectMeta{Name: WarmUpName(cell), Namespace: study.Namespace, Labels: labels(study, cell)},
		Spec: v1alpha1.DatastoreBenchmarkSpec{
			Target:      target(study, cell),
			Workload:    w,
			Load:        load,
			Repetitions: ptr.To[int32](1),
			WarmUp:      firstWarmUp(spec),
			SkipLoad:    loaded,
		},
	}
}

// RunInBenchmark is a cell's run-in: after every cell's warm-up and before round 1, each cell
// runs once more, one at a time, exactly as its first measured run will, and the figures are
// discarded. Right after the warm-ups a cell's first run is not yet typical: in make demo's
// study of 2026-12-02 (run 28) the TLS cell's round 1 cost 1,411 server CPU-µs per operation
// against 784 to 949 in its 11 later rounds, while its plaintext partner's was typical; that
// one pair took the spread of the pairs' log ratios from 7.3 to 16.6 points and kept the
// overhead's interval wide. With the run-in the pairs spread by 5.2 to 8.9 points (runs 29 to
// 31), though a TLS cell's excess can outlast it: run 29's cost 1,013 in its run-in and 986 in
// round 1 against 652 to 831 later. A run-in at a fixed rate that misses its schedule does not
// fail: nothing it measures counts.
func RunInBenchmark(study *v1alpha1.TradeoffStudy, cell *v1alpha1.StudyCell) *v1alpha1.DatastoreBenchmark {
	b := Benchmark(study, cell, 0)
	b.Name = RunInName(cell)
	if b.Spec.Load.Mode == v1alpha1.LoadFixedRate {
		b.Spec.Load.MaxDroppedPercent = ptr.To[int32](warmUpDroppedPercent)
	}
	return b
}

// warmUpRate is a warm-up's share of the study's fixed rate: warm-ups side by side offer the
// machine what one measured run does. At the full rate each, make demo's two datastores warming
// side by side on two cores served 660 to 840 operations per second of the 1,600 offered, and 5
// of 8 warm-ups in two studies dropped more than half their schedules and ran again, a minute
// each (runs 29 and 30, 2026-12-02). The run-in after the warm-ups runs at the full rate.
func warmUpRate(rate *int64) *int64 {
	if rate == nil {
		return nil
	}
	return ptr.To(max(1, *rate/WarmUpsTogether))
}

// WarmUpData names the data a cell's warm-up loads: its datastore's table. The cells of a
// Shared study's datastore read one table, which the first warm-up loads for both.
func WarmUpData(study *v1alpha1.TradeoffStudy, cell *v1alpha1.StudyCell) string {
	return cell.Datastore + "/" + workload(study, cell).Table
}

// DefaultSteadyWarmUp bounds the warm-up of a cell's first run when the study does not.
var DefaultSteadyWarmUp = v1alpha1.SteadyWarmUp{Minimum: metav1.Duration{Duration: 20 * time.Second}, Maximum: metav1.Duration{Duration: 2 * time.Minute}}

// steadyWarmUp of a cell's first run: the study's, or the default where the load allows one
// (a closed loop of a duration).
func steadyWarmUp(spec *v1alpha1.TradeoffStudySpec) *v1alpha1.SteadyWarmUp {
	if spec.Load.Mode == v1alpha1.LoadFixedRate || spec.Workload.OperationCount != nil || spec.Workload.Storage != nil {
		return nil
	}
	return ptr.To(cmp.Or(ptr.Deref(spec.SteadyWarmUp, v1alpha1.SteadyWarmUp{}), DefaultSteadyWarmUp))
}

// firstWarmUp of a cell where steadiness cannot be judged: at a fixed rate the throughput
// stays flat while the JIT still compiles, and the compiling CPU would count against the first
// round. It lasts at least steadyWarmUp's minimum.
func firstWarmUp(spec *v1alpha1.TradeoffStudySpec) *metav1.Duration {
	least := cmp.Or(ptr.Deref(spec.SteadyWarmUp, v1alpha1.SteadyWarmUp{}).Minimum.Duration, DefaultSteadyWarmUp.Minimum.Duration)
	if spec.WarmUp == nil || spec.WarmUp.Duration >= least {
		return spec.WarmUp // the benchmark's default, 30s, is longer than any default minimum
	}
	return &metav1.Duration{Duration: least}
}

// ReportConfigMap holds the report for kubectl and the CLI.
func ReportConfigMap(study *v1alpha1.TradeoffStudy, r Report) (*corev1.ConfigMap, error) {
	js, err := r.JSON()
	if err != nil {
		return nil, err
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: ReportConfigMapName(study.Name), Namespace: study.Namespace, Labels: labels(study, nil)},
		Data:       map[string]string{ReportMarkdownKey: r.Markdown(), ReportJSONKey: string(js)},
	}, nil
}

// Run turns a succeeded benchmark's valid run into the cell's record of the given round (from 1).
func Run(b *v1alpha1.DatastoreBenchmark, round int) (v1alpha1.StudyRun, bool) {
	for i := len(b.Status.Runs) - 1; i >= 0; i-- {
		r := b.Status.Runs[i]
		if r.Phase != v1alpha1.RunSucceeded || r.ThroughputOpsPerSec <= 0 {
			continue
		}
		out := v1alpha1.StudyRun{Benchmark: b.Name, Round: int32(round), Start: r.StartTime.DeepCopy(), End: r.CompletionTime.DeepCopy(),
			ThroughputOpsPerSec: r.ThroughputOpsPerSec, ThroughputCV: r.ThroughputCV}
		out.WarmUpSeconds, out.WarmUpSteady = r.WarmUpSeconds, r.WarmUpSteady
		var ops int64
		for _, l := range r.Latencies {
			out.P99Micros = max(out.P99Micros, l.P99Micros)
			ops += l.Count
		}
		if ops > 0 && r.ClientCPUMillis > 0 {
			out.ClientCPUMicrosPerOp = decimal(float64(r.ClientCPUMillis) * 1000 / float64(ops))
		}
		switch c := r.CPU; {
		case c == nil:
			out.CPUUnavailable = "the benchmark recorded no CPU accounting"
		case c.Unavailable != "":
			out.CPUUnavailable = c.Unavailable
		default:
			out.ServerCPUMicrosPerOp, out.SidecarCPUMicrosPerOp = podsPerOperation(c, ops)
			out.BackgroundUnavailable, out.CoveredSeconds = c.BackgroundUnavailable, c.CoveredSeconds
			if c.BackgroundUnavailable == "" && r.StartTime != nil && r.CompletionTime != nil {
				if window := r.CompletionTime.Sub(r.StartTime.Time).Seconds(); window > 0 {
					out.BackgroundCores = decimal(float64(c.BackgroundMillis) / 1000 / window)
				}
			}
		}
		return out, true
	}
	return v1alpha1.StudyRun{}, false
}

// podsPerOperation is what an operation cost the datastore's pods, their sidecars included (a
// VPN profile's tunnel encrypts in its sidecar: in seed 001's third run, 1,741 CPU-µs per
// operation for WireGuard's beside the datastore's 2,015, 863 for OpenVPN's beside 2,576), and
// the sidecars' part of it.
func podsPerOperation(c *v1alpha1.RunCPU, ops int64) (total, sidecars string) {
	server, err := strconv.ParseFloat(c.ServerMicrosPerOp, 64)
	if err != nil || ops <= 0 || c.SidecarMillis <= 0 {
		return c.ServerMicrosPerOp, ""
	}
	side := float64(c.SidecarMillis) * 1000 / float64(ops)
	return decimal(server + side), decimal(side)
}

// Ended is when the latest of a benchmark's succeeded runs ended its measured window, nil
// before one did.
func Ended(b *v1alpha1.DatastoreBenchmark) *metav1.Time {
	var end *metav1.Time
	for _, r := range b.Status.Runs {
		if r.Phase == v1alpha1.RunSucceeded && r.CompletionTime != nil && (end == nil || end.Before(r.CompletionTime)) {
			end = r.CompletionTime
		}
	}
	return end.DeepCopy()
}

// WindowClosed reports whether a benchmark will measure no more: it ended, or its last window
// closed and only its CPU accounting is pending (RunAccounting). end is when its latest window
// closed, nil when none did. A study starts its next run once the previous one's window closed,
// so the run's accounting settles while the next one starts up.
func WindowClosed(b *v1alpha1.DatastoreBenchmark) (end *metav1.Time, closed bool) {
	if b.Status.Phase == v1alpha1.BenchmarkSucceeded || b.Status.Phase == v1alpha1.BenchmarkFailed {
		return Ended(b), true
	}
	if n := len(b.Status.Runs); n > 0 && b.Status.Runs[n-1].Phase == v1alpha1.RunAccounting {
		return b.Status.Runs[n-1].CompletionTime.DeepCopy(), true
	}
	return nil, false
}

// Measuring names a benchmark among bs, other than except, that may still open a measured
// window (see WindowClosed), or "" when none may: a study's runs never overlap.
func Measuring(bs []v1alpha1.DatastoreBenchmark, except string) string {
	for i := range bs {
		if _, closed := WindowClosed(&bs[i]); !closed && bs[i].Name != except {
			return bs[i].Name
		}
	}
	return ""
}
