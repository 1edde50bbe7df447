package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DatastoreTemplate is the part of a SecuredDatastore a study keeps fixed; the matrix varies
// the encryption profile, crypto acceleration and cluster size.
type DatastoreTemplate struct {
	// engine of every cell's datastore.
	Engine Engine `json:"engine"`
	// version of the engine, e.g. 5.0.6 for Cassandra.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]+\.[0-9]+(\.[0-9]+)?(-[a-zA-Z0-9.]+)?$`
	Version string `json:"version,omitempty"`
	// image override.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*(:[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$')",message="spec.template.image must be an image reference such as registry.example/cassandra:5.0.6 or name@sha256:<64 hex digits>: lower-case repository, optional tag and digest"
	Image string `json:"image,omitempty"`
	// cassandra topology; nodes is set by the matrix.
	// +optional
	Cassandra *CassandraTopology `json:"cassandra,omitempty"`
	// hbase topology; regionServers is set by the matrix.
	// +optional
	HBase *HBaseTopology `json:"hbase,omitempty"`
	// certificates of every cell's datastore.
	// +optional
	Certificates *CertificatesSpec `json:"certificates,omitempty"`
}

// Acceleration is a level of the crypto-acceleration factor. (Not "On"/"Off": YAML 1.1 reads
// those as booleans.)
// +kubebuilder:validation:Enum=Available;EmulatedOff
type Acceleration string

const (
	// AccelerationAvailable: hardware AES as the node has it.
	AccelerationAvailable Acceleration = "Available"
	// AccelerationEmulatedOff: hardware AES switched off in software (placement.emulateNoAcceleration).
	AccelerationEmulatedOff Acceleration = "EmulatedOff"
)

// StudyMatrix is the design space (step 1 of the evidence process): every combination of its
// factors is a cell.
// +kubebuilder:validation:XValidation:rule="self.baseline in self.profiles",message="baseline must be one of profiles: it is the reference every overhead is computed against",fieldPath=".baseline"
type StudyMatrix struct {
	// profiles: EncryptionProfile names to compare.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.all(p, p.matches('^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$'))",message="spec.matrix.profiles must be EncryptionProfile names: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +listType=set
	Profiles []string `json:"profiles"`
	// baseline profile, usually plaintext, against which overheads are computed.
	// +kubebuilder:validation:MinLength=1
	Baseline string `json:"baseline"`
	// acceleration levels: Available (hardware AES as the node has it) and/or EmulatedOff
	// (switched off in software). Defaults to [Available].
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=2
	Acceleration []Acceleration `json:"acceleration,omitempty"`
	// clusterSizes: nodes (Cassandra) or RegionServers (HBase). Defaults to [3].
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:Minimum=1
	ClusterSizes []int32 `json:"clusterSizes,omitempty"`
	// fieldLengths: value sizes in bytes (the workload's fieldLength, YCSB fieldlength) as a
	// factor of their own, e.g. [10, 100, 1000, 10000] for how an encryption's overhead falls as
	// values grow (seed 004, PACE). The cells of one profile, acceleration and size share a
	// datastore, each value size in a table of its own (usertable_f<length>); the baseline is
	// the baseline's cell of the same value size. Unset: one level, workload.fieldLength.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=6
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=1048576
	FieldLengths []int32 `json:"fieldLengths,omitempty"`
}

// StudyConstraints prune the matrix (step 2): cells whose profile violates them are reported as
// pruned and never run.
type StudyConstraints struct {
	// compliance presets every profile must satisfy.
	// +optional
	// +listType=set
	Compliance []CompliancePreset `json:"compliance,omitempty"`
	// minimumRank a profile must reach.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=128
	MinimumRank *int32 `json:"minimumRank,omitempty"`
}

// Objective is how the study picks its recommendation.
// +kubebuilder:validation:Enum=HighestRankWithinBudget;BestThroughputAboveRank
type Objective string

const (
	// ObjectiveHighestRankWithinBudget: the highest-ranked profile whose overhead stays within
	// overheadBudgetPercent. Between profiles of one rank the lower overhead estimate wins, and
	// the recommendation says when the two intervals overlap, so the data did not decide.
	ObjectiveHighestRankWithinBudget Objective = "HighestRankWithinBudget"
	// ObjectiveBestThroughputAboveRank: the fastest profile that reaches constraints.minimumRank.
	ObjectiveBestThroughputAboveRank Objective = "BestThroughputAboveRank"
)

// OverheadMetric is the cost a study's decision weighs.
// +kubebuilder:validation:Enum=Auto;ServerCPUPerOperation;Throughput
type OverheadMetric string

const (
	// OverheadMetricAuto: server CPU per operation when every compared cell has it, throughput
	// otherwise.
	OverheadMetricAuto OverheadMetric = "Auto"
	// OverheadMetricServerCPU: the datastore pods' CPU time per operation (sidecars included),
	// from the kubelets' counters: what a user pays for, and the least disturbed by what else
	// runs on the nodes.
	OverheadMetricServerCPU OverheadMetric = "ServerCPUPerOperation"
	// OverheadMetricThroughput: operations per second, the papers' metric; any neighbour's load
	// moves it.
	OverheadMetricThroughput OverheadMetric = "Throughput"
)

// StudyDecision is how the analysis turns measurements into a recommendation (step 6).
// +kubebuilder:validation:XValidation:rule="self.objective != 'HighestRankWithinBudget' || has(self.overheadBudgetPercent)",message="overheadBudgetPercent is required for objective HighestRankWithinBudget",fieldPath=".overheadBudgetPercent"
type StudyDecision struct {
	// objective. Defaults to HighestRankWithinBudget.
	// +kubebuilder:default=HighestRankWithinBudget
	Objective Objective `json:"objective"`
	// overheadBudgetPercent: the capacity loss against the baseline you accept, on metric.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	OverheadBudgetPercent *int32 `json:"overheadBudgetPercent,omitempty"`
	// metric the overhead is measured on. ServerCPUPerOperation compares operations per
	// CPU-second of the datastore (overhead 20%: a fifth of the capacity a core gives is lost,
	// an operation costs 25% more CPU); Throughput compares operations per second. Auto, the
	// default, takes server CPU per operation when every compared cell has it (the operator
	// needs --cpu-accounting-prometheus-url), throughput otherwise; the report says which.
	// +optional
	Metric OverheadMetric `json:"metric,omitempty"`
	// preferenceOrder overrides the operator's security rank: profile names from most to least
	// preferred (step 3, when your organisation orders profiles differently).
	// +optional
	// +listType=set
	PreferenceOrder []string `json:"preferenceOrder,omitempty"`
}

// StudyPrecision is a study's stopping rule: precision, not a number of rounds fixed in
// advance, decides when the measuring ends.
type StudyPrecision struct {
	// halfWidthPercent: the target half-width of every compared cell's 95% overhead interval,
	// in percentage points: half the interval's width (5 accepts 20..30%, and 21..31% around an
	// estimate of 24%, as the exact intervals need not be centred on the estimate). Defaults to 5.
	// +optional
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=50
	HalfWidthPercent int32 `json:"halfWidthPercent,omitempty"`
	// maxRounds bounds the study's runs, precise or not, to as many as maxRounds rounds of
	// every cell would take; the report says which cells missed the target. A round added for
	// precision measures only the cells still short of the target, with their baselines (every
	// cell in a Switched study), so those can run more than maxRounds rounds in the same time.
	// Defaults to 20.
	// +optional
	// +kubebuilder:default=20
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=100
	MaxRounds int32 `json:"maxRounds,omitempty"`
	// maxDuration bounds the study's wall time, from its creation: a round is added for
	// precision only if it ends within maxDuration at the pace of the study's last runs (as
	// many as the round holds, from the start of the run before them to the start of the last,
	// so the waits between runs count). The planned rounds always run, and the estimate can
	// fall short by the wait between two rounds (for the figures of the one that ended), a few
	// seconds: leave that as a margin. Unset, only maxRounds bounds the rounds added. Example: 15m.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) > duration('0s')",message="spec.precision.maxDuration must be a duration above zero written like 15m or 1h30m"
	MaxDuration *metav1.Duration `json:"maxDuration,omitempty"`
}

// StudyBackground bounds what else may run on the measured nodes during a run: a run whose
// background (the CPU the nodes spent on anything but the datastore and its clients) exceeds
// maxCores measured a busy machine, so the study sets it aside and measures that round again.
type StudyBackground struct {
	// maxCores: the background a run may have, in cores ("500m", "1"); "0" turns the rule off.
	// Defaults to 500m.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!quantity(string(self)).isLessThan(quantity('0'))",message="spec.background.maxCores must be a CPU quantity of 0 or more, such as 500m or 1 (0 turns the rule off)"
	MaxCores *resource.Quantity `json:"maxCores,omitempty"`
	// repeats: how many times a round of a cell is measured again when its background is too
	// high (after the last one the run is kept, flagged in the report), when its clients could
	// not keep a fixed rate (after the last one the cell fails), or when it lost its server CPU
	// figure while the study's other runs have theirs, e.g. to kubelet samples too sparse in
	// its window (after the last one the run is kept for its throughput). Defaults to 2.
	// +optional
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5
	Repeats int32 `json:"repeats,omitempty"`
	// settle: the longest a run waits, before its clients start, for the background to fall
	// below half of maxCores (the compactions and flushes that the previous runs left behind,
	// above all): each run's benchmark gets it as spec.quietStart. A run that waited this long
	// starts anyway and is judged by the rule above. Defaults to 90s; 0s turns the wait off.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$')",message="spec.background.settle must be a duration written like 90s or 2m (0s turns the wait off)"
	Settle *metav1.Duration `json:"settle,omitempty"`
}

// StudyCost turns overhead into money: the extra nodes needed to restore the baseline's capacity.
type StudyCost struct {
	// pricePerNodeHour of one datastore node, e.g. "0.192".
	PricePerNodeHour resource.Quantity `json:"pricePerNodeHour"`
	// currency of the price. Defaults to USD.
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Z]{3}$`
	Currency string `json:"currency,omitempty"`
}

// TradeoffStudySpec declares a study: design space, constraints, preferences, experiment plan
// and decision rule. Only paused and cancel can change after creation: the cells, the seeded
// order and every run measured so far belong to the design they were planned from.
// +kubebuilder:validation:XValidation:rule="self.template == oldSelf.template && self.matrix == oldSelf.matrix && self.workload == oldSelf.workload && has(self.constraints) == has(oldSelf.constraints) && (!has(self.constraints) || self.constraints == oldSelf.constraints) && has(self.load) == has(oldSelf.load) && (!has(self.load) || self.load == oldSelf.load) && has(self.repetitions) == has(oldSelf.repetitions) && (!has(self.repetitions) || self.repetitions == oldSelf.repetitions) && has(self.warmUp) == has(oldSelf.warmUp) && (!has(self.warmUp) || self.warmUp == oldSelf.warmUp) && has(self.seed) == has(oldSelf.seed) && (!has(self.seed) || self.seed == oldSelf.seed) && has(self.decision) == has(oldSelf.decision) && (!has(self.decision) || self.decision == oldSelf.decision) && has(self.cost) == has(oldSelf.cost) && (!has(self.cost) || self.cost == oldSelf.cost) && has(self.precision) == has(oldSelf.precision) && (!has(self.precision) || self.precision == oldSelf.precision) && has(self.background) == has(oldSelf.background) && (!has(self.background) || self.background == oldSelf.background) && has(self.steadyWarmUp) == has(oldSelf.steadyWarmUp) && (!has(self.steadyWarmUp) || self.steadyWarmUp == oldSelf.steadyWarmUp) && has(self.datastores) == has(oldSelf.datastores) && (!has(self.datastores) || self.datastores == oldSelf.datastores) && has(self.runsPerSwitch) == has(oldSelf.runsPerSwitch) && (!has(self.runsPerSwitch) || self.runsPerSwitch == oldSelf.runsPerSwitch)",message="a study's design cannot change once it exists, only paused and cancel can: create a new TradeoffStudy (or delete this one) to run a different experiment"
// +kubebuilder:validation:XValidation:rule="!has(self.runsPerSwitch) || (has(self.datastores) && self.datastores == 'Switched')",message="spec.runsPerSwitch counts runs between switches of a shared datastore: set spec.datastores: Switched, or remove runsPerSwitch (each cell of a PerCell study keeps its own datastore)",fieldPath=".runsPerSwitch"
// +kubebuilder:validation:XValidation:rule="!has(self.datastores) || self.datastores != 'Shared' || (self.template.engine == 'Cassandra' && size(self.matrix.profiles) == 2)",message="spec.datastores Shared measures the baseline and one other profile on the same Cassandra nodes: use engine Cassandra and exactly two spec.matrix.profiles, or set spec.datastores to PerCell or Switched",fieldPath=".datastores"
// +kubebuilder:validation:XValidation:rule="!has(self.matrix.fieldLengths) || !has(self.workload.fieldLength)",message="spec.workload.fieldLength and spec.matrix.fieldLengths both set the value size: keep one (matrix.fieldLengths makes it a factor of the study)",fieldPath=".workload.fieldLength"
// +kubebuilder:validation:XValidation:rule="!has(self.workload.storage) || (!has(self.warmUp) && !has(self.steadyWarmUp) && (!has(self.load) || ((!has(self.load.mode) || self.load.mode == 'MaxThroughput') && (!has(self.load.clientPods) || self.load.clientPods == 1))))",message="spec.workload.storage runs fio once per run on a new scratch volume: leave out warmUp and steadyWarmUp, and use one client pod at full speed (no load.mode FixedRate)"
// +kubebuilder:validation:XValidation:rule="!has(self.matrix.fieldLengths) || !has(self.workload.storage)",message="spec.matrix.fieldLengths varies the YCSB value size: a storage workload has none; remove matrix.fieldLengths (set workload.storage.blockSizeKiB instead)",fieldPath=".matrix.fieldLengths"
// +kubebuilder:validation:XValidation:rule="!has(self.matrix.fieldLengths) || !has(self.workload.table)",message="spec.workload.table cannot be set with spec.matrix.fieldLengths: each value size gets a table of its own (usertable_f<length>); remove spec.workload.table",fieldPath=".workload.table"
// +kubebuilder:validation:XValidation:rule="!has(self.precision) || !has(self.precision.maxRounds) || self.precision.maxRounds >= (has(self.repetitions) ? self.repetitions : 6)",message="spec.precision.maxRounds must be at least spec.repetitions (6 when unset): the study adds rounds after the planned ones, never fewer"
type TradeoffStudySpec struct {
	// template of every cell's SecuredDatastore: engine, version, topology and certificates. The
	// matrix sets the encryption profile, acceleration and cluster size of each cell.
	Template DatastoreTemplate `json:"template"`
	// matrix of factors (step 1, the design space): profiles × acceleration × cluster sizes ×
	// value sizes; every combination is a cell.
	Matrix StudyMatrix `json:"matrix"`
	// datastores: how cells get their datastore. PerCell (the default) gives every profile,
	// acceleration and size a datastore of its own, all up for the whole study: no run waits,
	// but all of them share the machine. Switched keeps one datastore per acceleration and size
	// and switches it to the profile of each run's cell through the live-change path (a rolling
	// restart, or HBase's one step), waiting for Ready and a verified wire before the run: only
	// the measured profile's nodes run, so clusters that cannot stand side by side (seven 3+3
	// HBase clusters on one machine) can still be compared. A switch is never measured, and a
	// datastore switches only when its run is next, never under another datastore's run; the
	// first run waits until every datastore is up. Its duration is recorded per cell
	// (status.cells[].switchDurations). Rounds then come in
	// pairs that run each profile twice per switch (the first round alone when their number is
	// odd; see runsPerSwitch). Profiles that differ in atRest.volume, which no running
	// datastore can change, get datastores of their own.
	// Shared keeps one Cassandra datastore per acceleration and size that serves both cells of
	// a two-profile study at once: it runs the non-baseline profile with its client-to-node
	// channel Optional, and the baseline's runs connect in plaintext while the other's connect
	// over TLS, pinned to the profile's suite. Plaintext and TLS are then measured on the same
	// JVM, so the overhead no longer carries how far two datastores of one configuration are
	// apart (5 to 10 points on two cores), and half as many datastores start and warm up. It
	// needs a baseline that protects nothing and a profile whose only protection is the
	// client-to-node channel; the study refuses other profiles and names what is in the way.
	// +optional
	// +kubebuilder:default=PerCell
	Datastores StudyDatastores `json:"datastores,omitempty"`
	// runsPerSwitch: in a Switched study, how many rounds share one order and run each profile
	// back to back after a single switch. Defaults to 2. More saves switches (seed 001's took
	// one to four minutes each on Kind, longer than a run) at the price of drift: the runs a
	// round pairs lie further apart in time. Every round still runs each profile once, and a
	// round's runs are all the same rank after their switch (first, second, ...), so the paired
	// comparison sets like beside like. With a number of rounds that is no multiple of it, the
	// first block is the short one, and rounds added for precision come runsPerSwitch at a time.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=6
	RunsPerSwitch *int32 `json:"runsPerSwitch,omitempty"`
	// constraints (step 2) prune cells whose profile misses a compliance preset or a minimum
	// security rank; pruned cells are listed in status with the reason, never run.
	// +optional
	Constraints *StudyConstraints `json:"constraints,omitempty"`
	// workload each repetition runs: a YCSB core workload.
	Workload Workload `json:"workload"`
	// load each repetition applies: closed loop at full speed, or a fixed rate.
	// +optional
	Load Load `json:"load,omitempty"`
	// repetitions per cell, run in randomized interleaved order across cells: each round runs
	// every cell once, and the analysis compares a cell with the baseline round by round, so
	// drift on a shared machine cancels. Fewer than 6 rounds can never show a significant
	// difference. Defaults to 6.
	// +optional
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=100
	Repetitions *int32 `json:"repetitions,omitempty"`
	// precision makes the number of rounds follow the evidence: after the planned repetitions,
	// the study adds one round at a time until every compared cell's 95% overhead interval is
	// at most twice halfWidthPercent points wide, or maxRounds is reached.
	// Without it the study runs exactly repetitions rounds.
	// +optional
	Precision *StudyPrecision `json:"precision,omitempty"`
	// background is the quiet-machine rule: runs measured while the nodes were busy with
	// something else are set aside and repeated. Needs the operator's CPU accounting
	// (--cpu-accounting-prometheus-url); without it no run has a background to judge.
	// +optional
	Background *StudyBackground `json:"background,omitempty"`
	// steadyWarmUp: before the first measured run of each cell, warm the datastore up until its
	// throughput is steady, between minimum and maximum; later runs warm up for warmUp.
	// Defaults to 20s..2m for closed-loop workloads of a duration. At a fixed rate, or for a
	// number of operations, throughput cannot show steadiness: once every cell is up, each
	// warms up before round 1, for the longer of warmUp and minimum (benchmark
	// <datastore>-warm, which loads the data unless another cell's warm-up loaded it into the
	// same datastore; its figures are discarded), the cells of a datastore in turn and two
	// datastores at most side by side, each at half a fixed rate; then each cell runs once as
	// in a round, at the full rate and one at a time
	// (benchmark <datastore>-runin, figures discarded too: a cell's first run after the
	// warm-ups is not yet typical), and every run warms up for warmUp. In a Switched study
	// the first run after each switch does that warm-up itself (its nodes have just
	// restarted), after loading the data.
	// +optional
	SteadyWarmUp *SteadyWarmUp `json:"steadyWarmUp,omitempty"`
	// warmUp before each measured repetition; its samples are discarded. Defaults to the
	// benchmark's 30s.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$')",message="spec.warmUp must be a duration written like 30s or 2m (0s for none)"
	WarmUp *metav1.Duration `json:"warmUp,omitempty"`
	// seed of the randomized order; the same seed gives the same order. Defaults to a value
	// recorded in status.
	// +optional
	Seed *int64 `json:"seed,omitempty"`
	// decision rule (steps 3 and 6): how measurements become a recommendation, e.g. the
	// highest-ranked profile whose overhead stays within a budget.
	// +optional
	Decision StudyDecision `json:"decision,omitempty"`
	// cost inputs: the price of a node-hour, to express the cost of security as the extra nodes
	// (and money) needed to restore the baseline's capacity.
	// +optional
	Cost *StudyCost `json:"cost,omitempty"`
	// paused stops scheduling new repetitions; a running one finishes and is recorded. Set it
	// back to false to resume where the study stopped.
	// +optional
	Paused bool `json:"paused,omitempty"`
	// cancel ends the study for good: the running benchmark and every datastore the study
	// created are deleted, and the repetitions measured so far are analysed into the report.
	// +optional
	Cancel bool `json:"cancel,omitempty"`
}

// StudyDatastores says how a study's cells get their datastore.
// +kubebuilder:validation:Enum=PerCell;Switched;Shared
type StudyDatastores string

const (
	// DatastoresPerCell: a datastore per profile, acceleration and size, all up at once.
	DatastoresPerCell StudyDatastores = "PerCell"
	// DatastoresSwitched: one datastore per acceleration and size, switched between profiles.
	DatastoresSwitched StudyDatastores = "Switched"
	// DatastoresShared: one datastore per acceleration and size, its client channel Optional,
	// measured in plaintext for the baseline and over TLS for the other profile.
	DatastoresShared StudyDatastores = "Shared"
)

// CellState is the state of one study cell.
// +kubebuilder:validation:Enum=Pending;Pruned;Provisioning;Measuring;Standby;Done;Failed
type CellState string

const (
	CellPending      CellState = "Pending"
	CellPruned       CellState = "Pruned"
	CellProvisioning CellState = "Provisioning"
	CellMeasuring    CellState = "Measuring"
	// CellStandby: a cell of a Switched study whose datastore runs another cell's profile
	// until this cell's next run.
	CellStandby CellState = "Standby"
	CellDone    CellState = "Done"
	CellFailed  CellState = "Failed"
)

// StudyCell is one combination of factors and its results.
type StudyCell struct {
	// name of the cell, e.g. tls13-aes128-on-3.
	Name string `json:"name"`
	// profile of the cell.
	Profile string `json:"profile"`
	// acceleration of the cell.
	Acceleration Acceleration `json:"acceleration"`
	// nodes of the cell.
	Nodes int32 `json:"nodes"`
	// fieldLength: the cell's value size in bytes, when spec.matrix.fieldLengths makes it a
	// factor.
	// +optional
	FieldLength int32 `json:"fieldLength,omitempty"`
	// state of the cell.
	State CellState `json:"state"`
	// reason for Pruned or Failed.
	// +optional
	Reason string `json:"reason,omitempty"`
	// rank of the cell's profile.
	// +optional
	Rank int32 `json:"rank,omitempty"`
	// runsDone: valid repetitions measured.
	// +optional
	RunsDone int32 `json:"runsDone,omitempty"`
	// medianThroughputOpsPerSec over valid repetitions.
	// +optional
	MedianThroughputOpsPerSec int64 `json:"medianThroughputOpsPerSec,omitempty"`
	// throughputCI95: 95% confidence interval of the median, "low..high" ops/s.
	// +optional
	ThroughputCI95 string `json:"throughputCI95,omitempty"`
	// overheadPercent: throughput lost against the baseline of the same acceleration and size, decimal string.
	// +optional
	OverheadPercent string `json:"overheadPercent,omitempty"`
	// overheadCI95: 95% confidence interval of the overhead, "low..high" percent.
	// +optional
	OverheadCI95 string `json:"overheadCI95,omitempty"`
	// serverCPUMicrosPerOp: median over repetitions of the datastore pods' CPU time per
	// operation, sidecars included (see runs[].serverCPUMicrosPerOp).
	// +optional
	ServerCPUMicrosPerOp string `json:"serverCPUMicrosPerOp,omitempty"`
	// serverCPUOverheadPercent: operations per server CPU-second lost against the baseline,
	// decimal string (paired by round like the throughput overhead).
	// +optional
	ServerCPUOverheadPercent string `json:"serverCPUOverheadPercent,omitempty"`
	// serverCPUOverheadCI95: its 95% confidence interval, "low..high" percent.
	// +optional
	ServerCPUOverheadCI95 string `json:"serverCPUOverheadCI95,omitempty"`
	// significant: whether the difference from the baseline is statistically significant.
	// +optional
	Significant *bool `json:"significant,omitempty"`
	// pValue of the two-sided Mann-Whitney U test against the baseline, decimal string.
	// +optional
	PValue string `json:"pValue,omitempty"`
	// meaningful: significant and an overhead of at least 2% either way, a difference worth
	// acting on.
	// +optional
	Meaningful *bool `json:"meaningful,omitempty"`
	// p99Micros: median p99 latency over repetitions (the slowest operation type of each).
	// +optional
	P99Micros int64 `json:"p99Micros,omitempty"`
	// datastore created for the cell; the cells of one profile, acceleration and size that
	// differ in value size share it, and in a Switched study so do the profiles.
	// +optional
	Datastore string `json:"datastore,omitempty"`
	// benchmarkPrefix of the names of the cell's DatastoreBenchmarks (<prefix>-r<repetition>,
	// <prefix>-warm, <prefix>-runin), where it differs from the datastore's name: cells sharing a datastore
	// each have their own.
	// +optional
	BenchmarkPrefix string `json:"benchmarkPrefix,omitempty"`
	// switchedAt: when the study began switching the cell's datastore to its profile
	// (spec.datastores Switched); cleared once the switch is done.
	// +optional
	SwitchedAt *metav1.Time `json:"switchedAt,omitempty"`
	// switchDurations: how long each switch to the cell's profile took, from the change of the
	// datastore's profile to Ready and a verified wire (spec.datastores Switched).
	// +optional
	// +listType=atomic
	SwitchDurations []metav1.Duration `json:"switchDurations,omitempty"`
	// runs: the valid repetitions measured so far, in the order they ran.
	// +optional
	// +listType=atomic
	Runs []StudyRun `json:"runs,omitempty"`
	// setAside: runs measured while the nodes were busy with something else (background above
	// spec.background.maxCores) and measured again; the analysis leaves them out.
	// +optional
	// +listType=atomic
	SetAside []StudyRun `json:"setAside,omitempty"`
}

// StudyRun is one measured repetition of a cell, kept so the analysis can be redone from
// status alone.
type StudyRun struct {
	// benchmark that measured it.
	Benchmark string `json:"benchmark"`
	// round of the schedule the repetition ran in, from 1: the analysis pairs it with the
	// baseline's run of the same round. Absent in runs recorded before rounds were.
	// +optional
	Round int32 `json:"round,omitempty"`
	// start of the run's measured window (warm-up excluded): when to look in Grafana, or in
	// any other record of the machine, for what the run shared it with.
	// +optional
	Start *metav1.Time `json:"start,omitempty"`
	// end of the run's measured window.
	// +optional
	End *metav1.Time `json:"end,omitempty"`
	// throughputOpsPerSec of the repetition.
	ThroughputOpsPerSec int64 `json:"throughputOpsPerSec"`
	// p99Micros of the slowest operation type.
	// +optional
	P99Micros int64 `json:"p99Micros,omitempty"`
	// clientCPUMicrosPerOp: client CPU time per operation, when the client reported it.
	// +optional
	ClientCPUMicrosPerOp string `json:"clientCPUMicrosPerOp,omitempty"`
	// serverCPUMicrosPerOp: the datastore pods' CPU time per operation, from the kubelets'
	// counters: the datastore's containers and their sidecars, because a VPN profile encrypts
	// in its tunnel sidecar (wireguard-go, where the node has no WireGuard kernel module) and
	// that is part of what the protection costs. The kernel module's workers belong to no
	// container: their CPU shows as background.
	// +optional
	ServerCPUMicrosPerOp string `json:"serverCPUMicrosPerOp,omitempty"`
	// sidecarCPUMicrosPerOp: how much of serverCPUMicrosPerOp the sidecars (VPN tunnel, TLS
	// reloader) spent.
	// +optional
	SidecarCPUMicrosPerOp string `json:"sidecarCPUMicrosPerOp,omitempty"`
	// warmUpSeconds: how long the warm-up until steady before this run took (first runs).
	// +optional
	WarmUpSeconds string `json:"warmUpSeconds,omitempty"`
	// warmUpSteady: whether it ended steady (false: at its maximum).
	// +optional
	WarmUpSteady *bool `json:"warmUpSteady,omitempty"`
	// throughputCV: the coefficient of variation of the run's per-second throughput; a few
	// hundredths when the window was steady.
	// +optional
	ThroughputCV string `json:"throughputCV,omitempty"`
	// backgroundCores: the CPU the nodes spent on anything else during the run, in cores.
	// +optional
	BackgroundCores string `json:"backgroundCores,omitempty"`
	// backgroundUnavailable says why backgroundCores is missing although the server figures
	// are not; such a run cannot be judged busy.
	// +optional
	BackgroundUnavailable string `json:"backgroundUnavailable,omitempty"`
	// coveredSeconds: how much of the run's window the kubelets' samples spanned (the
	// benchmark's cpu.coveredSeconds): the CPU figures are the rate over that span, so a short
	// one is a noisier figure.
	// +optional
	CoveredSeconds int32 `json:"coveredSeconds,omitempty"`
	// cpuUnavailable says why the server figures are missing.
	// +optional
	CPUUnavailable string `json:"cpuUnavailable,omitempty"`
	// busy says why the machine was too busy for the run: its background exceeded
	// spec.background.maxCores, or its clients could not keep the fixed rate; and what the
	// study did about it: set it aside and repeated the round, or kept it after the last repeat.
	// +optional
	Busy string `json:"busy,omitempty"`
}

// Recommendation is the study's answer.
type Recommendation struct {
	// profile recommended.
	Profile string `json:"profile"`
	// reason, one sentence a person can check against the report.
	Reason string `json:"reason"`
	// extraNodesPercent: additional nodes needed to restore the baseline's capacity.
	// +optional
	ExtraNodesPercent string `json:"extraNodesPercent,omitempty"`
	// extraCostPerHour of those nodes, in the cost currency.
	// +optional
	ExtraCostPerHour string `json:"extraCostPerHour,omitempty"`
}

// StudyPhase summarises a study.
// +kubebuilder:validation:Enum=Pending;Planning;Running;Analyzing;Succeeded;Failed;Paused;Cancelled
type StudyPhase string

const (
	StudyPending   StudyPhase = "Pending"
	StudyPlanning  StudyPhase = "Planning"
	StudyRunning   StudyPhase = "Running"
	StudyAnalyzing StudyPhase = "Analyzing"
	StudySucceeded StudyPhase = "Succeeded"
	StudyFailed    StudyPhase = "Failed"
	StudyPaused    StudyPhase = "Paused"
	StudyCancelled StudyPhase = "Cancelled"
)

// TradeoffStudyStatus is the progress and results of a study; every piece of progress lives
// here so a restarted operator resumes where it was.
type TradeoffStudyStatus struct {
	// observedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// phase of the study.
	// +optional
	Phase StudyPhase `json:"phase,omitempty"`
	// seed used for the randomized order.
	// +optional
	Seed *int64 `json:"seed,omitempty"`
	// cells of the matrix, pruned ones included with their reason.
	// +optional
	// +listType=map
	// +listMapKey=name
	Cells []StudyCell `json:"cells,omitempty"`
	// schedule: the randomized interleaved order of repetitions, as cell names.
	// +optional
	// +listType=atomic
	Schedule []string `json:"schedule,omitempty"`
	// nextRun: index into schedule of the next repetition.
	// +optional
	NextRun int32 `json:"nextRun,omitempty"`
	// rounds in the schedule: spec.repetitions, plus those spec.precision added.
	// +optional
	Rounds int32 `json:"rounds,omitempty"`
	// lastRunEnd: when the latest recorded run's (or the warm-up's) measured window ended. The
	// next run's quiet start looks only at what followed (quietStart.after of its benchmark).
	// +optional
	LastRunEnd *metav1.Time `json:"lastRunEnd,omitempty"`
	// lastRunDatastore: the datastore that run measured; empty after the warm-ups, which end
	// side by side. A run on the same datastore starts without a quiet start: what the run
	// before left behind is in the measured pods themselves, and their neighbours' background
	// was measured up to its end.
	// +optional
	LastRunDatastore string `json:"lastRunDatastore,omitempty"`
	// paretoFrontier: cells not dominated in (rank, throughput).
	// +optional
	// +listType=set
	ParetoFrontier []string `json:"paretoFrontier,omitempty"`
	// recommendation of the study.
	// +optional
	Recommendation *Recommendation `json:"recommendation,omitempty"`
	// reportConfigMap holding the Markdown and JSON report.
	// +optional
	ReportConfigMap string `json:"reportConfigMap,omitempty"`
	// conditions: Ready, Complete.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// TradeoffStudy runs the six-step evidence process for choosing a wire-encryption profile:
// design space (matrix), constraints, preference ordering (rank), experiment plan (randomized
// interleaved repetitions), execution and analysis, ending in a recommendation with confidence
// intervals and the cost of security.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=tos;study,categories=secured
// +kubebuilder:printcolumn:name="Engine",type=string,JSONPath=`.spec.template.engine`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Progress",type=integer,JSONPath=`.status.nextRun`,priority=1
// +kubebuilder:printcolumn:name="Recommended",type=string,JSONPath=`.status.recommendation.profile`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must start with a letter and hold only lower-case letters, digits and '-': the study's datastores (<name>-c<cell>) and their Services are named after it"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 40",message="metadata.name is too long: at most 40 characters, so that its cells' datastores (<name>-c<cell>) and benchmarks (<name>-c<cell>-r<repetition>) have valid names; choose a shorter name"
type TradeoffStudy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec: the study's design.
	Spec TradeoffStudySpec `json:"spec"`
	// status: progress and results.
	// +optional
	Status TradeoffStudyStatus `json:"status,omitempty"`
}

// TradeoffStudyList is a list of TradeoffStudies.
// +kubebuilder:object:root=true
type TradeoffStudyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TradeoffStudy `json:"items"`
}

func init() {
	SchemeBuilder.Register(&TradeoffStudy{}, &TradeoffStudyList{})
}
