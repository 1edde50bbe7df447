package controllers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/study"
)

// TradeoffStudyReconciler runs TradeoffStudies: it plans the cells (pruning by the
// constraints), creates a datastore per cell, runs one benchmark repetition at a time in the
// randomized interleaved schedule, analyses the results into status, a report ConfigMap and
// metrics, and deletes what it created. Every piece of progress is in status: a restarted
// operator resumes at status.nextRun.
type TradeoffStudyReconciler struct {
	Client client.Client
	// APIReader reads around the cache, before creating a benchmark.
	APIReader client.Reader
	Recorder  events.EventRecorder
	// Now is the clock that seeds studies without spec.seed.
	Now func() time.Time
}

// studyScope carries what one reconcile pass read and decided.
type studyScope struct {
	study   *v1alpha1.TradeoffStudy
	requeue time.Duration
	// finish: the study ended in this pass (all repetitions done, or cancelled).
	finish bool
	// waiting says what the study waits for, for the Progressing condition.
	waiting string
}

// +kubebuilder:rbac:groups=datastore.secured.dev,resources=tradeoffstudies,verbs=get;list;watch
// +kubebuilder:rbac:groups=datastore.secured.dev,resources=tradeoffstudies/status,verbs=get;patch
// +kubebuilder:rbac:groups=datastore.secured.dev,resources=encryptionprofiles,verbs=get;list;watch
// +kubebuilder:rbac:groups=datastore.secured.dev,resources=secureddatastores,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=datastore.secured.dev,resources=datastorebenchmarks,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch

func (r *TradeoffStudyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	st := &v1alpha1.TradeoffStudy{}
	if err := r.Client.Get(ctx, req.NamespacedName, st); err != nil {
		if apierrors.IsNotFound(err) {
			forgetStudy(req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	s := &studyScope{study: st}
	p := pass[*v1alpha1.TradeoffStudy]{
		conditions: func(o *v1alpha1.TradeoffStudy) *[]metav1.Condition { return &o.Status.Conditions },
		recorder:   r.Recorder,
		status:     func(s *v1alpha1.TradeoffStudy) any { return s.Status },
		observed:   func(s *v1alpha1.TradeoffStudy) { s.Status.ObservedGeneration = s.Generation },
		summarize: func(st *v1alpha1.TradeoffStudy) {
			r.summarize(s)
			publishStudy(st)
		},
		afterWrite: func(ctx context.Context) error {
			if !s.finish {
				return nil
			}
			// Only once the final status is stored: a crash before it leaves the objects for
			// the pass that finishes again.
			return r.cleanUp(ctx, st)
		},
	}
	return p.reconcile(ctx, r.Client, st, func(ctx context.Context) (ctrl.Result, error) {
		return runPhases(ctx, s, r.begin, r.plan, r.cancel, r.provision, r.warmUp, r.run, r.extend, r.succeed)
	})
}

func ended(p v1alpha1.StudyPhase) bool {
	return p == v1alpha1.StudySucceeded || p == v1alpha1.StudyFailed || p == v1alpha1.StudyCancelled
}

// begin stops at an ended study: its results are final, and cleanUp ran after the final write.
func (r *TradeoffStudyReconciler) begin(_ context.Context, s *studyScope) (ctrl.Result, error) {
	st := &s.study.Status
	if ended(st.Phase) {
		return ctrl.Result{}, errPhaseBlocked
	}
	if st.Phase == "" {
		st.Phase = v1alpha1.StudyPending
	}
	return ctrl.Result{}, nil
}

// cancel concludes a study whose spec asks for it, with what it measured so far.
func (r *TradeoffStudyReconciler) cancel(ctx context.Context, s *studyScope) (ctrl.Result, error) {
	if !s.study.Spec.Cancel {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, waitOr(r.conclude(ctx, s, v1alpha1.StudyCancelled, v1alpha1.ReasonCancelled, "cancelled by spec.cancel"))
}

// succeed concludes a study whose every repetition ran; it failed when its cells' failures
// left it nothing to compare, which a Succeeded phase would hide.
func (r *TradeoffStudyReconciler) succeed(ctx context.Context, s *studyScope) (ctrl.Result, error) {
	if why := study.NothingCompared(s.study.Status.Cells, s.study.Spec.Matrix.Baseline); why != "" {
		return ctrl.Result{}, r.conclude(ctx, s, v1alpha1.StudyFailed, v1alpha1.ReasonNothingCompared, why)
	}
	return ctrl.Result{}, r.conclude(ctx, s, v1alpha1.StudySucceeded, v1alpha1.ReasonSucceeded, "every repetition ran")
}

// plan is steps 1 to 4: resolve the profiles, prune the matrix, fix seed and schedule.
func (r *TradeoffStudyReconciler) plan(ctx context.Context, s *studyScope) (ctrl.Result, error) {
	studyObj := s.study
	if len(studyObj.Status.Cells) > 0 {
		return ctrl.Result{}, nil // planned once, at creation: the design cannot change
	}
	profiles := map[string]study.Profile{}
	var missing []string
	for _, name := range studyObj.Spec.Matrix.Profiles {
		var p v1alpha1.EncryptionProfile
		switch err := r.Client.Get(ctx, types.NamespacedName{Name: name}, &p); {
		case apierrors.IsNotFound(err):
			missing = append(missing, name)
			continue
		case err != nil:
			return ctrl.Result{}, err
		}
		a := p.Status.Assessment
		if a == nil || p.Status.ObservedGeneration != p.Generation {
			// Pruning by a rank not computed yet would drop or keep the wrong cells.
			return ctrl.Result{RequeueAfter: 2 * time.Second}, errPhaseBlocked
		}
		clientTLS, beyond := study.Protection(&p.Spec.EncryptionSettings)
		profiles[name] = study.Profile{Rank: a.Rank, Presets: a.SatisfiedPresets, EncryptsVolume: p.Spec.AtRest != nil && p.Spec.AtRest.Volume != nil,
			ClientTLS: clientTLS, Beyond: beyond}
	}
	st := &studyObj.Status
	refuse := func(reason, msg string) (ctrl.Result, error) {
		if setCondition(&st.Conditions, studyObj.Generation, v1alpha1.ConditionReady, metav1.ConditionFalse, reason, msg) {
			r.Recorder.Eventf(studyObj, nil, "Warning", reason, "Plan", "%s", msg)
		}
		return ctrl.Result{}, errPhaseBlocked
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return refuse(v1alpha1.ReasonProfileNotFound, fmt.Sprintf("EncryptionProfiles %s do not exist: create them or remove them from spec.matrix.profiles", strings.Join(missing, ", ")))
	}
	if why := study.NotShareable(&studyObj.Spec, profiles); why != "" {
		return refuse(v1alpha1.ReasonNotShareable, why)
	}
	if st.Seed == nil {
		st.Seed = studyObj.Spec.Seed
		if st.Seed == nil {
			st.Seed = ptr.To(r.Now().UnixNano())
		}
	}
	st.Cells = study.Cells(studyObj.Name, &studyObj.Spec, profiles)
	st.Rounds = int32(study.Repetitions(&studyObj.Spec))
	st.Schedule = study.Schedule(st.Cells, int(st.Rounds), study.RoundsTogether(&studyObj.Spec), study.Shared(&studyObj.Spec), *st.Seed)
	st.NextRun, st.Phase = 0, v1alpha1.StudyRunning
	pruned := len(st.Cells) - countCells(st.Cells, func(c *v1alpha1.StudyCell) bool { return c.State != v1alpha1.CellPruned })
	msg := fmt.Sprintf("%d cells (%d pruned by the constraints), %d repetitions in randomized interleaved order, seed %d",
		len(st.Cells), pruned, len(st.Schedule), *st.Seed)
	setCondition(&st.Conditions, studyObj.Generation, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonPlanned, msg)
	r.Recorder.Eventf(studyObj, nil, "Normal", v1alpha1.ReasonPlanned, "Plan", "%s", msg)
	return ctrl.Result{}, nil
}

func countCells(cells []v1alpha1.StudyCell, keep func(*v1alpha1.StudyCell) bool) int {
	n := 0
	for i := range cells {
		if keep(&cells[i]) {
			n++
		}
	}
	return n
}

// provision creates the datastore of every live cell and moves the cell on when the datastore
// is Ready and its wire matches its profile. A wire that differs fails the cell: a study never
// measures a profile the wire does not carry.
func (r *TradeoffStudyReconciler) provision(ctx context.Context, s *studyScope) (ctrl.Result, error) {
	if study.Switched(&s.study.Spec) {
		return ctrl.Result{}, r.switchDatastores(ctx, s)
	}
	for i := range s.study.Status.Cells {
		cell := &s.study.Status.Cells[i]
		if cell.State != v1alpha1.CellPending && cell.State != v1alpha1.CellProvisioning && cell.State != v1alpha1.CellMeasuring {
			continue
		}
		if applied, err := r.applyForCell(ctx, s, cell, "Provision", study.Datastore(s.study, cell)); !applied {
			if err != nil {
				return ctrl.Result{}, err
			}
			continue
		}
		var ds v1alpha1.SecuredDatastore
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: s.study.Namespace, Name: cell.Datastore}, &ds); err != nil {
			if apierrors.IsNotFound(err) {
				continue // not in the cache yet; its creation event brings us back
			}
			return ctrl.Result{}, err
		}
		r.observeCell(s, cell, &ds)
	}
	return ctrl.Result{}, nil
}

// switchDatastores gives each datastore of a Switched study the profile of the cell whose run
// comes next, once its run is the next of all (study.Turn). A switch puts the datastore's
// other cells on standby; the cell becomes measurable once the datastore's status is of the
// spec that names its profile, Ready and its wire verified, and the switch's duration is
// recorded. Only then does its run start: a study never measures a profile the wire does not
// carry, nor a switch in progress.
func (r *TradeoffStudyReconciler) switchDatastores(ctx context.Context, s *studyScope) error {
	st := &s.study.Status
	turn := study.Turn(st.Cells, st.Schedule, int(st.NextRun))
	seen := map[string]bool{}
	for i := range st.Cells {
		name := st.Cells[i].Datastore
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		cell := study.Upcoming(st.Cells, st.Schedule, int(st.NextRun), name)
		if cell == nil {
			continue
		}
		var ds v1alpha1.SecuredDatastore
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: s.study.Namespace, Name: name}, &ds)
		if client.IgnoreNotFound(err) != nil {
			return err
		}
		if from := ds.Spec.Encryption.ProfileRef; err == nil && from != cell.Profile && cell.SwitchedAt == nil {
			if name != turn {
				continue // switches when its run is next, never under another datastore's run
			}
			for j := range st.Cells {
				if c := &st.Cells[j]; c.Datastore == name && c.State == v1alpha1.CellMeasuring {
					c.State = v1alpha1.CellStandby
				}
			}
			cell.State, cell.SwitchedAt = v1alpha1.CellProvisioning, ptr.To(metav1.Now())
			r.Recorder.Eventf(s.study, nil, "Normal", v1alpha1.ReasonSwitching, "Switch", "datastore %s: profile %s → %s for cell %s", name, from, cell.Profile, cell.Name)
		}
		if applied, err := r.applyForCell(ctx, s, cell, "Switch", study.Datastore(s.study, cell)); !applied {
			if err != nil {
				return err
			}
			continue
		}
		if err != nil || ds.Spec.Encryption.ProfileRef != cell.Profile || ds.Status.ObservedGeneration != ds.Generation {
			continue // its status is not of the spec that names the cell's profile yet
		}
		r.observeCell(s, cell, &ds)
		if since := cell.SwitchedAt; since != nil && cell.State == v1alpha1.CellMeasuring {
			took := time.Since(since.Time).Round(time.Second)
			cell.SwitchDurations, cell.SwitchedAt = append(cell.SwitchDurations, metav1.Duration{Duration: took}), nil
			r.Recorder.Eventf(s.study, nil, "Normal", v1alpha1.ReasonSwitched, "Switch", "datastore %s runs profile %s for cell %s, Ready and verified %s after the switch", name, cell.Profile, cell.Name, took)
		}
	}
	return nil
}

// warmUp warms the cells before round 1 where runs cannot judge their own warm-up
// (study.WarmsFirst), and holds round 1 until every live cell is warm. Only before round 1: a
// warm-up recreated later would load the machine under a measured run.
func (r *TradeoffStudyReconciler) warmUp(ctx context.Context, s *studyScope) (ctrl.Result, error) {
	st := &s.study.Status
	if !study.WarmsFirst(&s.study.Spec) || st.NextRun > 0 || s.study.Spec.Paused {
		return ctrl.Result{}, nil
	}
	var cold []string
	provisioning := false
	// The warm-ups that exist, and what they hold: their datastores until their windows close,
	// and the data they loaded.
	warm := map[string]*v1alpha1.DatastoreBenchmark{}
	warming, loaded := map[string]string{}, map[string]bool{}
	for i := range st.Cells {
		switch cell := &st.Cells[i]; cell.State {
		case v1alpha1.CellPruned, v1alpha1.CellFailed:
		case v1alpha1.CellMeasuring:
			b := &v1alpha1.DatastoreBenchmark{}
			if err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.study.Namespace, Name: study.WarmUpName(cell)}, b); err != nil {
				if !apierrors.IsNotFound(err) {
					return ctrl.Result{}, err
				}
				continue
			}
			warm[cell.Name] = b
			if isTrue(b.Status.Conditions, v1alpha1.ConditionLoaded) {
				loaded[study.WarmUpData(s.study, cell)] = true
			}
			if _, closed := study.WindowClosed(b); !closed && b.Status.Phase != v1alpha1.BenchmarkSucceeded && b.Status.Phase != v1alpha1.BenchmarkFailed {
				warming[cell.Datastore] = cell.Name
			}
		default:
			cold = append(cold, cell.Name+" (provisioning)")
			provisioning = true
		}
	}
	for i := range st.Cells {
		cell := &st.Cells[i]
		if cell.State != v1alpha1.CellMeasuring {
			continue
		}
		b, skipLoad := warm[cell.Name], loaded[study.WarmUpData(s.study, cell)]
		if b != nil {
			skipLoad = b.Spec.SkipLoad // as created: the data it loaded itself must not turn it off
		} else {
			if waits := study.WarmUpWaits(cell, warming, provisioning); waits != "" {
				cold = append(cold, fmt.Sprintf("%s (waits for %s)", cell.Name, waits))
				continue
			}
			warming[cell.Datastore] = cell.Name
			b = &v1alpha1.DatastoreBenchmark{}
		}
		if applied, err := r.applyForCell(ctx, s, cell, "WarmUp", study.WarmUpBenchmark(s.study, cell, skipLoad)); !applied {
			if err != nil {
				return ctrl.Result{}, err
			}
			continue
		}
		switch b.Status.Phase {
		case v1alpha1.BenchmarkSucceeded:
			noteEnd(st, study.Ended(b), "")
		case v1alpha1.BenchmarkFailed:
			r.failCell(s, cell, "WarmUp", fmt.Sprintf("warm-up %s failed: %s", b.Name, study.ConditionMessage(b.Status.Conditions, v1alpha1.ConditionComplete)))
		default:
			if end, closed := study.WindowClosed(b); closed {
				noteEnd(st, end, "") // nothing it measured counts: its figures need not be in
				continue
			}
			cold = append(cold, fmt.Sprintf("%s (%s)", cell.Name, cmp.Or(b.Status.Phase, v1alpha1.BenchmarkPending)))
		}
	}
	if len(cold) == 0 {
		return r.runIn(ctx, s)
	}
	s.waiting = fmt.Sprintf("round 1 waits for the cells to warm up, each datastore's in turn: %s", strings.Join(cold, ", "))
	return ctrl.Result{}, errPhaseBlocked // the benchmarks' and datastores' status changes bring us back
}

// runIn runs every warm cell once more before round 1, one at a time and in the cells' order,
// and discards what it measured (study.RunInBenchmark). Like a repetition, a run-in starts
// only once no other benchmark of the study may open a window, read from the API server.
func (r *TradeoffStudyReconciler) runIn(ctx context.Context, s *studyScope) (ctrl.Result, error) {
	st := &s.study.Status
	for i := range st.Cells {
		cell := &st.Cells[i]
		if cell.State != v1alpha1.CellMeasuring {
			continue
		}
		want := study.RunInBenchmark(s.study, cell)
		b := &v1alpha1.DatastoreBenchmark{}
		switch err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), b); {
		case apierrors.IsNotFound(err):
			if busy, err := r.measuring(ctx, s, want.Name); err != nil || busy != "" {
				if busy != "" {
					s.waiting = fmt.Sprintf("round 1 waits for the run-in of cell %s, which waits for benchmark %s to close its measured window", cell.Name, busy)
				}
				return ctrl.Result{}, waitOr(err)
			}
		case err != nil:
			return ctrl.Result{}, err
		}
		if applied, err := r.applyForCell(ctx, s, cell, "RunIn", want); !applied {
			if err != nil {
				return ctrl.Result{}, err
			}
			continue
		}
		if end, closed := study.WindowClosed(b); closed {
			noteEnd(st, end, cell.Datastore)
			continue // failed or not, nothing it measured counts
		}
		s.waiting = fmt.Sprintf("round 1 waits for the run-in of cell %s (benchmark %s, %s), whose figures are discarded",
			cell.Name, want.Name, cmp.Or(b.Status.Phase, v1alpha1.BenchmarkPending))
		return ctrl.Result{}, errPhaseBlocked // its status change brings us back
	}
	return ctrl.Result{}, nil
}

// applyForCell applies an object of the cell's and reports whether it was applied. A study
// measures only what it created: an object of that name that someone else owns fails the cell,
// and is left alone.
func (r *TradeoffStudyReconciler) applyForCell(ctx context.Context, s *studyScope, cell *v1alpha1.StudyCell, action string, obj client.Object) (bool, error) {
	_, err := applyOwned(ctx, r.Client, s.study, obj)
	if notOwned := (*NotOwnedError)(nil); errors.As(err, &notOwned) {
		r.failCell(s, cell, action, notOwned.Error())
		return false, nil
	}
	return err == nil, err
}

// failCell ends a cell that cannot be measured; its remaining repetitions are skipped.
func (r *TradeoffStudyReconciler) failCell(s *studyScope, cell *v1alpha1.StudyCell, action, reason string) {
	cell.State, cell.Reason = v1alpha1.CellFailed, reason
	r.Recorder.Eventf(s.study, nil, "Warning", "CellFailed", action, "cell %s: %s", cell.Name, reason)
}

// observeCell moves the cell on from its datastore's conditions and says so in an event.
func (r *TradeoffStudyReconciler) observeCell(s *studyScope, cell *v1alpha1.StudyCell, ds *v1alpha1.SecuredDatastore) {
	switch failed, measurable := study.ObserveCell(cell, &ds.Status); {
	case failed:
		r.failCell(s, cell, "Provision", cell.Reason)
	case measurable:
		r.Recorder.Eventf(s.study, nil, "Normal", "CellReady", "Provision", "cell %s: datastore %s is Ready and its wire verified", cell.Name, ds.Name)
	}
}

// run works through the schedule from status.nextRun, one repetition at a time so runs never
// compete for the machine. The pass goes on to the conclusion once the schedule is exhausted.
func (r *TradeoffStudyReconciler) run(ctx context.Context, s *studyScope) (ctrl.Result, error) {
	st := &s.study.Status
	for int(st.NextRun) < len(st.Schedule) {
		cell := cellNamed(st.Cells, st.Schedule[st.NextRun])
		if !live(cell) {
			st.NextRun++ // a failed cell's remaining repetitions are skipped
			continue
		}
		k := study.Repetition(st.Schedule, int(st.NextRun))
		want := study.Benchmark(s.study, cell, k)
		var b v1alpha1.DatastoreBenchmark
		switch err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), &b); {
		case apierrors.IsNotFound(err):
			if s.study.Spec.Paused {
				s.waiting = "paused before repetition " + position(st)
				return ctrl.Result{}, errPhaseBlocked
			}
			if cell.State != v1alpha1.CellMeasuring {
				s.waiting = fmt.Sprintf("repetition %s waits for datastore %s of cell %s to be Ready and verified", position(st), cell.Datastore, cell.Name)
				if study.Switched(&s.study.Spec) {
					// The next pass switches the datastore: a status write of our own
					// brings no event.
					s.waiting = fmt.Sprintf("repetition %s waits for datastore %s to run profile %s of cell %s, Ready and verified", position(st), cell.Datastore, cell.Profile, cell.Name)
					return ctrl.Result{RequeueAfter: time.Second}, errPhaseBlocked
				}
				return ctrl.Result{}, errPhaseBlocked // its status change brings us back
			}
			if st.NextRun == 0 && study.Switched(&s.study.Spec) {
				if coming := study.Coming(st.Cells, st.Schedule); coming != "" {
					s.waiting = fmt.Sprintf("repetition %s waits for every datastore to be up: cell %s's is not yet Ready and verified", position(st), coming)
					return ctrl.Result{}, errPhaseBlocked // its status change brings us back
				}
			}
			return ctrl.Result{}, waitOr(r.startRepetition(ctx, s, int(st.NextRun), cell, want))
		case err != nil:
			return ctrl.Result{}, err
		}
		switch b.Status.Phase {
		case v1alpha1.BenchmarkSucceeded:
			noteEnd(st, study.Ended(&b), cell.Datastore)
			if run, ok := study.Run(&b, k+1); ok { // every round runs each cell once: its k-th run is round k+1
				run, repeat := study.Judge(&s.study.Spec, cell, run, study.Accounted(st.Cells))
				if repeat {
					r.setAside(s, cell, &b, run)
					continue
				}
				cell.Runs = append(cell.Runs, run)
			}
			if study.Scheduled(st.Schedule, cell.Name) == len(cell.Runs) {
				cell.State = v1alpha1.CellDone
			}
		case v1alpha1.BenchmarkFailed:
			if run, repeat := study.RateNotKept(&s.study.Spec, cell, &b, k+1); repeat {
				noteEnd(st, study.Ended(&b), cell.Datastore)
				r.setAside(s, cell, &b, run)
				continue
			}
			r.failCell(s, cell, "Run", fmt.Sprintf("benchmark %s failed: %s", b.Name, study.ConditionMessage(b.Status.Conditions, v1alpha1.ConditionComplete)))
		default:
			s.waiting = fmt.Sprintf("repetition %s: cell %s, benchmark %s is %s", position(st), cell.Name, b.Name,
				cmp.Or(b.Status.Phase, v1alpha1.BenchmarkPending))
			if end, closed := study.WindowClosed(&b); closed {
				noteEnd(st, end, cell.Datastore)
				s.waiting += ", accounting its CPU"
				return ctrl.Result{}, waitOr(r.startAhead(ctx, s))
			}
			return ctrl.Result{}, errPhaseBlocked // its status change brings us back
		}
		st.NextRun++
	}
	return ctrl.Result{}, nil
}

// setAside keeps a run that does not count with its cell, and says why. The same schedule
// position runs again: the set-aside run moves the cell to its next attempt, a benchmark of
// its own.
func (r *TradeoffStudyReconciler) setAside(s *studyScope, cell *v1alpha1.StudyCell, b *v1alpha1.DatastoreBenchmark, run v1alpha1.StudyRun) {
	cell.SetAside = append(cell.SetAside, run)
	s.study.Status.LastRunDatastore = "" // the machine was busy: the repeat waits for quiet nodes
	r.Recorder.Eventf(s.study, b, "Warning", v1alpha1.ReasonRunSetAside, "Run", "%s, round %d: %s", cell.Name, run.Round, run.Busy)
}

// extend adds rounds once every scheduled one ran, when spec.precision asks for it: the
// seeded schedule grows by a block (study.Extend; the rounds that ran stay as they were) and
// the cells it holds are measured again; their datastores are still up (in a Switched study,
// one profile at a time).
func (r *TradeoffStudyReconciler) extend(_ context.Context, s *studyScope) (ctrl.Result, error) {
	st := &s.study.Status
	rounds := int(st.Rounds)
	if rounds == 0 {
		rounds = study.Repetitions(&s.study.Spec) // planned before status.rounds existed
	}
	analysis := study.Analyze(s.study.Name, &s.study.Spec, *st.Seed, st.Cells)
	block, why := study.Extend(analysis, &s.study.Spec, st.Cells, st.Schedule, rounds, *st.Seed, time.Since(s.study.CreationTimestamp.Time))
	if len(block) == 0 {
		if why != "" {
			r.Recorder.Eventf(s.study, nil, "Normal", v1alpha1.ReasonRoundNotAdded, "Extend", "%s", why)
		}
		return ctrl.Result{}, nil
	}
	st.Rounds = int32(rounds + study.RoundsTogether(&s.study.Spec))
	st.Schedule = append(st.Schedule, block...)
	again := v1alpha1.CellMeasuring
	if study.Switched(&s.study.Spec) {
		again = v1alpha1.CellStandby // until the switch to its profile
	}
	for i := range st.Cells {
		if st.Cells[i].State == v1alpha1.CellDone && slices.Contains(block, st.Cells[i].Name) {
			st.Cells[i].State = again
		}
	}
	r.Recorder.Eventf(s.study, nil, "Normal", v1alpha1.ReasonRoundAdded, "Extend", "%s", why)
	return ctrl.Result{RequeueAfter: time.Second}, errPhaseBlocked // the next pass runs the new round
}

// startAhead starts the repetition after status.nextRun while nextRun's benchmark only waits
// for its CPU accounting, so the next run's quiet start and warm-up overlap that wait. Never
// across the end of the schedule: whether a round is added depends on the figures.
func (r *TradeoffStudyReconciler) startAhead(ctx context.Context, s *studyScope) error {
	st := &s.study.Status
	next := int(st.NextRun) + 1
	for next < len(st.Schedule) && !live(cellNamed(st.Cells, st.Schedule[next])) {
		next++ // run skips it too
	}
	if next >= len(st.Schedule) || s.study.Spec.Paused {
		return errPhaseBlocked
	}
	cell := cellNamed(st.Cells, st.Schedule[next])
	if cell.State != v1alpha1.CellMeasuring {
		return errPhaseBlocked
	}
	want := study.Benchmark(s.study, cell, study.Repetition(st.Schedule, next))
	switch err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), &v1alpha1.DatastoreBenchmark{}); {
	case err == nil:
		return errPhaseBlocked // started already
	case !apierrors.IsNotFound(err):
		return err
	}
	return r.startRepetition(ctx, s, next, cell, want)
}

// startRepetition creates the benchmark of schedule position pos, but only from the API
// server's current study (a study read from a cache that has not seen our last status write
// would start again a repetition already recorded), and only while no other benchmark of the
// study may still open a window: a study's runs never overlap.
func (r *TradeoffStudyReconciler) startRepetition(ctx context.Context, s *studyScope, pos int, cell *v1alpha1.StudyCell, b *v1alpha1.DatastoreBenchmark) error {
	var current v1alpha1.TradeoffStudy
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(s.study), &current); err != nil {
		return err
	}
	if current.ResourceVersion != s.study.ResourceVersion {
		return errStale
	}
	if busy, err := r.measuring(ctx, s, b.Name); err != nil || busy != "" {
		if busy != "" {
			s.waiting = fmt.Sprintf("repetition %d of %d waits for benchmark %s to close its measured window", pos+1, len(s.study.Status.Schedule), busy)
		}
		return waitOr(err)
	}
	if applied, err := r.applyForCell(ctx, s, cell, "Run", b); !applied {
		if err != nil {
			// Progressing names what holds the study, not what it waited for before.
			s.waiting = fmt.Sprintf("repetition %d of %d cannot start benchmark %s: %v", pos+1, len(s.study.Status.Schedule), b.Name, err)
		}
		return err
	}
	st := s.study.Status
	r.Recorder.Eventf(s.study, nil, "Normal", "RepetitionStarted", "Run", "repetition %d of %d: %s (benchmark %s)",
		pos+1, len(st.Schedule), st.Schedule[pos], b.Name)
	return nil
}

// measuring names another of the study's benchmarks that may still open a measured window
// (study.Measuring), read from the API server: a benchmark created moments ago may not be in
// the cache yet. A failed cell's benchmarks no longer count.
func (r *TradeoffStudyReconciler) measuring(ctx context.Context, s *studyScope, except string) (string, error) {
	var bs v1alpha1.DatastoreBenchmarkList
	if err := r.APIReader.List(ctx, &bs, client.InNamespace(s.study.Namespace), client.MatchingLabels{study.StudyLabel: s.study.Name}); err != nil {
		return "", err
	}
	kept := slices.DeleteFunc(bs.Items, func(b v1alpha1.DatastoreBenchmark) bool {
		c := cellNamed(s.study.Status.Cells, b.Labels[study.CellLabel])
		return c != nil && !live(c) // a benchmark without a known cell still counts
	})
	return study.Measuring(kept, except), nil
}

// noteEnd keeps the latest end of a measured window in status, and the datastore it measured,
// for the next run's quiet start. Warm-ups pass no datastore: two of them end side by side.
func noteEnd(st *v1alpha1.TradeoffStudyStatus, end *metav1.Time, datastore string) {
	if end != nil && (st.LastRunEnd == nil || !end.Before(st.LastRunEnd)) {
		st.LastRunEnd, st.LastRunDatastore = end, datastore
	}
}

// live: a cell of the study that has not failed.
func live(c *v1alpha1.StudyCell) bool { return c != nil && c.State != v1alpha1.CellFailed }

func position(st *v1alpha1.TradeoffStudyStatus) string {
	return fmt.Sprintf("%d of %d", st.NextRun+1, len(st.Schedule))
}

func cellNamed(cells []v1alpha1.StudyCell, name string) *v1alpha1.StudyCell {
	if i := slices.IndexFunc(cells, func(c v1alpha1.StudyCell) bool { return c.Name == name }); i >= 0 {
		return &cells[i]
	}
	return nil
}

// summarize refreshes the running study's statistics and phase, so partial results are
// readable while it runs.
func (r *TradeoffStudyReconciler) summarize(s *studyScope) {
	st := &s.study.Status
	if st.Phase != v1alpha1.StudyRunning && st.Phase != v1alpha1.StudyPaused {
		return
	}
	a := study.Analyze(s.study.Name, &s.study.Spec, ptr.Deref(st.Seed, 0), st.Cells)
	st.Cells, st.ParetoFrontier = a.Cells, a.ParetoFrontier
	st.Phase = v1alpha1.StudyRunning
	if s.study.Spec.Paused {
		st.Phase = v1alpha1.StudyPaused
	}
	if s.waiting != "" {
		setCondition(&st.Conditions, s.study.Generation, v1alpha1.ConditionProgressing, metav1.ConditionTrue, string(st.Phase), s.waiting)
	}
}

// conclude is step 6: the analysis into status, the report ConfigMap and an event; cleanUp
// follows once this is stored.
func (r *TradeoffStudyReconciler) conclude(ctx context.Context, s *studyScope, phase v1alpha1.StudyPhase, reason, why string) error {
	st := &s.study.Status
	a := study.Analyze(s.study.Name, &s.study.Spec, ptr.Deref(st.Seed, 0), st.Cells)
	if phase == v1alpha1.StudyFailed {
		a.Recommendation, a.Report.Recommendation = nil, nil // the rule had nothing to weigh
	}
	a.Report.Phase = string(phase)
	a.Report.WallTime = time.Since(s.study.CreationTimestamp.Time).Round(time.Second).String()
	cm, err := study.ReportConfigMap(s.study, a.Report)
	if err != nil {
		return err
	}
	if _, err := applyOwned(ctx, r.Client, s.study, cm); err != nil {
		return err
	}
	st.Cells, st.ParetoFrontier, st.Recommendation, st.ReportConfigMap = a.Cells, a.ParetoFrontier, a.Recommendation, cm.Name
	st.Phase, s.finish = phase, true
	msg, eventType := why+"; no profile meets the decision rule (see the report)", "Normal"
	switch rec := a.Recommendation; {
	case phase == v1alpha1.StudyFailed:
		msg, eventType = why+";", "Warning"
	case rec != nil:
		msg = fmt.Sprintf("%s; recommended %s: %s", why, rec.Profile, rec.Reason)
	}
	msg += fmt.Sprintf(" Report: ConfigMap %s.", cm.Name)
	setCondition(&st.Conditions, s.study.Generation, v1alpha1.ConditionComplete, metav1.ConditionTrue, reason, msg)
	setCondition(&st.Conditions, s.study.Generation, v1alpha1.ConditionProgressing, metav1.ConditionFalse, reason, why)
	r.Recorder.Eventf(s.study, nil, eventType, reason, "Analyze", "%s", msg)
	return nil
}

// cleanUp deletes the datastores and benchmarks the study created; the report stays.
func (r *TradeoffStudyReconciler) cleanUp(ctx context.Context, st *v1alpha1.TradeoffStudy) error {
	// Only what the study controls: a label is anyone's to set, a controller reference is not.
	opts := []client.ListOption{client.InNamespace(st.Namespace), client.MatchingLabels{study.StudyLabel: st.Name}}
	var benchmarks v1alpha1.DatastoreBenchmarkList
	if err := r.Client.List(ctx, &benchmarks, opts...); err != nil {
		return err
	}
	var datastores v1alpha1.SecuredDatastoreList
	if err := r.Client.List(ctx, &datastores, opts...); err != nil {
		return err
	}
	var objs []client.Object
	for i := range benchmarks.Items {
		objs = append(objs, &benchmarks.Items[i])
	}
	for i := range datastores.Items {
		objs = append(objs, &datastores.Items[i])
	}
	var errs []error
	for _, o := range objs {
		if metav1.IsControlledBy(o, st) {
			errs = append(errs, client.IgnoreNotFound(r.Client.Delete(ctx, o)))
		}
	}
	return errors.Join(errs...)
}

// SetupWithManager registers the reconciler: it follows the datastores and benchmarks it
// created and the profiles its studies wait for.
func (r *TradeoffStudyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Now == nil {
		r.Now = time.Now
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.TradeoffStudy{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&v1alpha1.SecuredDatastore{}).
		Owns(&v1alpha1.DatastoreBenchmark{}).
		Owns(&corev1.ConfigMap{}).
		Watches(&v1alpha1.EncryptionProfile{}, handler.EnqueueRequestsFromMapFunc(r.studiesUsingProfile),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Named("tradeoffstudy").
		Complete(r)
}

func (r *TradeoffStudyReconciler) studiesUsingProfile(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1alpha1.TradeoffStudyList
	if err := r.Client.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing studies that use a profile failed", "profile", o.GetName())
		return nil
	}
	return requestsFor(list.Items, func(s *v1alpha1.TradeoffStudy) bool {
		return slices.Contains(s.Spec.Matrix.Profiles, o.GetName())
	})
}
