// Package study turns a TradeoffStudy into its plan (cells, pruning, randomized interleaved
// schedule) and its measurements into an analysis and a report. Pure functions: the
// controller feeds them what it read and applies what they return.
package study

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
)

// Defaults of a study spec.
const (
	// DefaultRepetitions: the paired signed-rank test needs 6 rounds to ever reach p < 0.05.
	DefaultRepetitions = 6
	DefaultClusterSize = 3
	// DefaultRunsPerSwitch of a Switched study: half the switches of one run per switch.
	DefaultRunsPerSwitch = 2
)

// Profile is what the plan needs to know of an EncryptionProfile.
type Profile struct {
	Rank    int32
	Presets []v1alpha1.CompliancePreset
	// EncryptsVolume: atRest.volume, which no running datastore can switch on or off.
	EncryptsVolume bool
	// ClientTLS and Beyond: what it protects (Protection), which a Shared study checks.
	ClientTLS bool
	Beyond    []string
}

// Repetitions of every cell.
func Repetitions(spec *v1alpha1.TradeoffStudySpec) int {
	if spec.Repetitions != nil {
		return int(*spec.Repetitions)
	}
	return DefaultRepetitions
}

// Accelerations of the matrix, defaulted.
func Accelerations(m v1alpha1.StudyMatrix) []v1alpha1.Acceleration {
	if len(m.Acceleration) == 0 {
		return []v1alpha1.Acceleration{v1alpha1.AccelerationAvailable}
	}
	return m.Acceleration
}

// ClusterSizes of the matrix, defaulted.
func ClusterSizes(m v1alpha1.StudyMatrix) []int32 {
	if len(m.ClusterSizes) == 0 {
		return []int32{DefaultClusterSize}
	}
	return m.ClusterSizes
}

// FieldLengths of the matrix: the value sizes that are a factor, or a single 0 (the
// workload's own) when they are not.
func FieldLengths(m v1alpha1.StudyMatrix) []int32 {
	if len(m.FieldLengths) == 0 {
		return []int32{0}
	}
	return m.FieldLengths
}

// CellName names a combination of factors, e.g. tls13-aes128-on-3, or tls13-aes128-on-3-f100
// where value sizes are a factor.
func CellName(profile string, acc v1alpha1.Acceleration, nodes, fieldLength int32) string {
	level := "on"
	if acc == v1alpha1.AccelerationEmulatedOff {
		level = "off"
	}
	name := fmt.Sprintf("%s-%s-%d", profile, level, nodes)
	if fieldLength > 0 {
		name += fmt.Sprintf("-f%d", fieldLength)
	}
	return name
}

// Table of a value size's records: cells that share a datastore must not overwrite each
// other's records. "" (the benchmark's default) where value sizes are no factor.
func Table(fieldLength int32) string {
	if fieldLength == 0 {
		return ""
	}
	return fmt.Sprintf("usertable_f%d", fieldLength)
}

// DatastoreName of the i-th cell: short and stable, since the datastore's own objects (pods,
// Services, Jobs of its benchmarks) derive names from it.
func DatastoreName(study string, i int) string { return fmt.Sprintf("%s-c%d", study, i) }

// Cells is steps 1 and 2 of the evidence process: every combination of the matrix's factors,
// with the cells whose profile violates a constraint marked Pruned and the reason. The
// baseline is never pruned: it is the reference every overhead is computed against. The
// cells of one profile, acceleration and size that differ in value size share a datastore
// (named after the first of them), since the value size is the workload's, not the
// datastore's; in a Switched or Shared study so do the profiles, apart from volume encryption.
// Each cell keeps benchmarks of its own name.
func Cells(study string, spec *v1alpha1.TradeoffStudySpec, profiles map[string]Profile) []v1alpha1.StudyCell {
	var cells []v1alpha1.StudyCell
	lengths := FieldLengths(spec.Matrix)
	for _, nodes := range ClusterSizes(spec.Matrix) {
		for _, acc := range Accelerations(spec.Matrix) {
			shared := map[bool]string{} // by volume encryption: the datastores profiles share
			for _, name := range spec.Matrix.Profiles {
				p := profiles[name]
				datastore := DatastoreName(study, len(cells))
				if sharesDatastores(spec) {
					datastore = cmp.Or(shared[p.EncryptsVolume], datastore)
				}
				for _, length := range lengths {
					cell := v1alpha1.StudyCell{
						Name: CellName(name, acc, nodes, length), Profile: name, Acceleration: acc, Nodes: nodes, FieldLength: length,
						State: v1alpha1.CellPending, Rank: p.Rank, Datastore: datastore,
					}
					if own := DatastoreName(study, len(cells)); own != datastore {
						cell.BenchmarkPrefix = own
					}
					if reason := violation(spec.Constraints, p); reason != "" && name != spec.Matrix.Baseline {
						cell.State, cell.Reason, cell.Datastore, cell.BenchmarkPrefix = v1alpha1.CellPruned, reason, "", ""
					} else if sharesDatastores(spec) {
						shared[p.EncryptsVolume] = datastore
					}
					cells = append(cells, cell)
				}
			}
		}
	}
	return cells
}

// Upcoming is the live cell of a Switched study's datastore whose run comes next in the
// schedule from position next: the profile the datastore must run now. Nil once none is left.
func Upcoming(cells []v1alpha1.StudyCell, schedule []string, next int, datastore string) *v1alpha1.StudyCell {
	for _, name := range schedule[min(next, len(schedule)):] {
		i := slices.IndexFunc(cells, func(c v1alpha1.StudyCell) bool { return c.Name == name })
		if i >= 0 && cells[i].Datastore == datastore && cells[i].State != v1alpha1.CellFailed {
			return &cells[i]
		}
	}
	return nil
}

// Turn is the datastore of the next live run from position next: in a Switched study the only
// one that may switch now. A switch restarts every node of its datastore, one after the other,
// for minutes; beside another datastore's measured run it would load the machine the run is
// measured on (seed 000's AR+RR study: two 3-node Cassandras, three rolls per switch).
func Turn(cells []v1alpha1.StudyCell, schedule []string, next int) string {
	for _, name := range schedule[min(next, len(schedule)):] {
		if i := slices.IndexFunc(cells, func(c v1alpha1.StudyCell) bool { return c.Name == name }); i >= 0 && cells[i].State != v1alpha1.CellFailed {
			return cells[i].Datastore
		}
	}
	return ""
}

// Coming names a cell of a Switched study whose datastore is not yet up with its first profile,
// "" once all are: the first run waits for every datastore, since one still starting its nodes
// would load the machine under it.
func Coming(cells []v1alpha1.StudyCell, schedule []string) string {
	seen := map[string]bool{}
	for _, c := range cells {
		if c.Datastore == "" || seen[c.Datastore] {
			continue
		}
		seen[c.Datastore] = true
		if first := Upcoming(cells, schedule, 0, c.Datastore); first != nil && first.State != v1alpha1.CellMeasuring {
			return first.Name
		}
	}
	return ""
}

// Switched: the study switches shared datastores between profiles (spec.datastores).
func Switched(spec *v1alpha1.TradeoffStudySpec) bool {
	return spec.Datastores == v1alpha1.DatastoresSwitched
}

func violation(c *v1alpha1.StudyConstraints, p Profile) string {
	if c == nil {
		return ""
	}
	var missing []string
	for _, preset := range c.Compliance {
		if !slices.Contains(p.Presets, preset) {
			missing = append(missing, string(preset))
		}
	}
	var reasons []string
	if len(missing) > 0 {
		reasons = append(reasons, "does not satisfy compliance preset "+strings.Join(missing, ", "))
	}
	if c.MinimumRank != nil && p.Rank < *c.MinimumRank {
		reasons = append(reasons, fmt.Sprintf("rank %d is below constraints.minimumRank %d", p.Rank, *c.MinimumRank))
	}
	return strings.Join(reasons, "; ")
}

// Schedule is step 4, the experiment plan: rounds of a fresh random permutation of the cells
// to measure (randomized multiple interleaved trials, Abedi and Brecht, ICPE 2017), so drift
// on a shared machine hits every cell alike instead of the last one measured. The same seed
// gives the same order.
//
// together rounds share one permutation and run each cell that many times in a row (see
// RoundsTogether); with a number of rounds that is no multiple of it, the first block is the
// short one, so the schedule of n rounds is a prefix of that of n+together and the rounds that
// ran stay as they were when the stopping rule adds a block.
//
// adjacent (a Shared study) permutes the datastores instead, and runs the cells of each one
// after the other: the runs the analysis pairs are then next to each other, not anywhere in
// the round, so less of a JVM's drift lies between them. Their order is random in the first
// block and reversed in the next, so each cell runs first as often as second.
func Schedule(cells []v1alpha1.StudyCell, rounds, together int, adjacent bool, seed int64) []string {
	var groups [][]string
	at := map[string]int{} // datastore → index in groups
	for _, c := range cells {
		if c.State == v1alpha1.CellPruned {
			continue
		}
		if i, ok := at[c.Datastore]; ok && adjacent {
			groups[i] = append(groups[i], c.Name)
			continue
		}
		at[c.Datastore] = len(groups)
		groups = append(groups, []string{c.Name})
	}
	together = max(together, 1)
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5ec0ed))
	out := make([]string, 0, len(cells)*rounds)
	for n, block := 0, rounds%together; rounds > 0; n, block = n+1, together {
		if block == 0 {
			block = together
		}
		order := slices.Clone(groups) // a group's slice is shared: the next block reverses this one's order
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, group := range order {
			if n%2 == 0 {
				rng.Shuffle(len(group), func(i, j int) { group[i], group[j] = group[j], group[i] })
			} else {
				slices.Reverse(group)
			}
			for _, name := range group {
				for range block {
					out = append(out, name)
				}
			}
		}
		rounds -= block
	}
	return out
}

// RoundsTogether is how many rounds run each cell back to back: in a Switched study, where a
// switch between profiles takes minutes (seed 001's took 56 to 222 s on Kind, as long as the
// run itself), spec.runsPerSwitch (default 2, half the switches); one otherwise. The paired
// analysis still compares like with like: in each round of a block every run is, for every
// cell, the same rank after its switch.
func RoundsTogether(spec *v1alpha1.TradeoffStudySpec) int {
	if !Switched(spec) {
		return 1
	}
	return int(ptr.Deref(spec.RunsPerSwitch, DefaultRunsPerSwitch))
}

// Repetition is the index of the schedule entry at position among its cell's entries: the
// k-th repetition of that cell.
func Repetition(schedule []string, position int) int {
	k := 0
	for _, name := range schedule[:position] {
		if name == schedule[position] {
			k++
		}
	}
	return k
}

// AfterSwitch: the cell's k-th repetition is the first after its shared datastore was switched
// to it, so that run loads the data again and warms up as a first run does. Seed 001's runs
// show why: the first run of every profile's second block, right after its switch and with no
// load before it, found HBase still reopening its regions (45 to 135 of 300 operations per
// second, three to eight times the CPU per operation), while each first block's run, with its
// load, did not. The load also rewrites the rows under the profile just switched to, which a
// client-side encryption profile needs to read them.
func AfterSwitch(study *v1alpha1.TradeoffStudy, cell *v1alpha1.StudyCell, k int) bool {
	if !Switched(&study.Spec) {
		return false
	}
	schedule := study.Status.Schedule
	for pos, name := range schedule {
		if name != cell.Name {
			continue
		}
		if k == 0 {
			return pos == 0 || schedule[pos-1] != name
		}
		k--
	}
	return false
}

// BenchmarkName of a cell's k-th repetition.
func BenchmarkName(cell *v1alpha1.StudyCell, k int) string {
	return fmt.Sprintf("%s-r%d", benchmarkPrefix(cell), k)
}

// WarmUpName of a cell's warm-up benchmark (WarmUpBenchmark).
func WarmUpName(cell *v1alpha1.StudyCell) string {
	return benchmarkPrefix(cell) + "-warm"
}

// RunInName of a cell's run-in benchmark (RunInBenchmark).
func RunInName(cell *v1alpha1.StudyCell) string {
	return benchmarkPrefix(cell) + "-runin"
}

// benchmarkPrefix of a cell's benchmarks: its datastore's name where the cell has the
// datastore to itself (and in studies planned before datastores were shared).
func benchmarkPrefix(cell *v1alpha1.StudyCell) string {
	if cell.BenchmarkPrefix != "" {
		return cell.BenchmarkPrefix
	}
	return cell.Datastore
}
