package study

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/stats"
)

// Keys of the report ConfigMap.
const (
	ReportMarkdownKey = "report.md"
	ReportJSONKey     = "report.json"
)

// ReportConfigMapName of a study.
func ReportConfigMapName(study string) string { return study + "-report" }

// Report is the machine-readable result of a study (report.json); Markdown and Text render it
// for people.
type Report struct {
	Study       string `json:"study"`
	Engine      string `json:"engine"`
	Baseline    string `json:"baseline"`
	Workload    string `json:"workload"`
	Repetitions int    `json:"repetitions"`
	Seed        int64  `json:"seed"`
	Phase       string `json:"phase,omitempty"`
	// WallTime: from the study's creation to its conclusion, provisioning and warm-ups
	// included, e.g. "14m30s"; set on a concluded study's report.
	WallTime       string                   `json:"wallTime,omitempty"`
	Cells          []CellReport             `json:"cells"`
	Candidates     []Candidate              `json:"candidates,omitempty"`
	ParetoFrontier []string                 `json:"paretoFrontier,omitempty"`
	Recommendation *v1alpha1.Recommendation `json:"recommendation,omitempty"`
	// DecidingAcceleration: the cells the recommendation rests on.
	DecidingAcceleration string  `json:"decidingAcceleration,omitempty"`
	Currency             string  `json:"currency,omitempty"`
	PricePerNodeHour     float64 `json:"pricePerNodeHour,omitempty"`
	Method               string  `json:"method"`
	// OverheadMetric: what every cell's comparison, the decision and the cost rest on.
	OverheadMetric v1alpha1.OverheadMetric `json:"overheadMetric"`
	// Precision: the stopping rule and whether it was met, when the study has one.
	Precision *PrecisionReport `json:"precision,omitempty"`
	// AccelerationEffects: for each profile measured with hardware AES and with it emulated
	// off, how much more the latter costs.
	AccelerationEffects []AccelerationEffect `json:"accelerationEffects,omitempty"`
	// BaselineSpreads: the baseline with AES emulated off against itself with hardware AES;
	// for a baseline that uses no AES, the difference between two datastores of one
	// configuration.
	BaselineSpreads []BaselineSpread `json:"baselineSpreads,omitempty"`
	// CheaperThanBaseline: a caution for each cell measured significantly cheaper than the
	// baseline, which encryption cannot be (cheaperThanBaseline).
	CheaperThanBaseline []string `json:"cheaperThanBaseline,omitempty"`
}

// CellReport is one cell with its raw repetitions and statistics.
type CellReport struct {
	Name         string `json:"name"`
	Profile      string `json:"profile"`
	Acceleration string `json:"acceleration"`
	Nodes        int32  `json:"nodes"`
	FieldLength  int32  `json:"fieldLength,omitempty"`
	Rank         int32  `json:"rank"`
	State        string `json:"state"`
	Reason       string `json:"reason,omitempty"`
	// Datastore the cell's runs measured (its pods are <datastore>-<ordinal>).
	Datastore        string          `json:"datastore,omitempty"`
	Runs             []int64         `json:"runsOpsPerSec"`
	MedianThroughput int64           `json:"medianThroughputOpsPerSec,omitempty"`
	ThroughputCI     *stats.Interval `json:"throughputCI95,omitempty"`
	// Comparison is the one the decision weighs (Report.OverheadMetric): Throughput or ServerCPU.
	Comparison           *stats.Comparison `json:"comparison,omitempty"`
	ExtraNodesFraction   *float64          `json:"extraNodesFraction,omitempty"`
	P99Micros            int64             `json:"p99Micros,omitempty"`
	ClientCPUMicrosPerOp *float64          `json:"clientCPUMicrosPerOp,omitempty"`
	// Throughput compares operations per second.
	Throughput *stats.Comparison `json:"throughputComparison,omitempty"`
	// ServerCPU compares operations per server CPU-second.
	ServerCPU            *stats.Comparison `json:"serverCPUComparison,omitempty"`
	ServerCPUMicrosPerOp *float64          `json:"serverCPUMicrosPerOp,omitempty"`
	// RunCosts: each run's CPU figures, in the order the runs ran.
	RunCosts []RunCost `json:"runCosts,omitempty"`
	// SetAside: runs measured while the nodes were busy, left out of the analysis.
	SetAside []RunCost `json:"setAside,omitempty"`
	// SwitchSeconds: each switch of a shared datastore to the cell's profile, from the change
	// to Ready and a verified wire (Switched studies).
	SwitchSeconds []float64 `json:"switchSeconds,omitempty"`
}

// RunCost is one run's CPU: what an operation cost the datastore and the client, and how busy
// the nodes were with everything else (Unavailable says why the server figures are missing).
type RunCost struct {
	Round int32 `json:"round,omitempty"`
	// Start and End of the measured window.
	Start               *metav1.Time `json:"start,omitempty"`
	End                 *metav1.Time `json:"end,omitempty"`
	ThroughputOpsPerSec int64        `json:"throughputOpsPerSec,omitempty"`
	// ThroughputCV: the coefficient of variation of the run's per-second throughput.
	ThroughputCV *float64 `json:"throughputCV,omitempty"`
	// WarmUpSeconds: the warm-up until steady before the run (a cell's first), and whether it
	// ended steady or at its maximum.
	WarmUpSeconds        *float64 `json:"warmUpSeconds,omitempty"`
	WarmUpSteady         *bool    `json:"warmUpSteady,omitempty"`
	ServerCPUMicrosPerOp *float64 `json:"serverCPUMicrosPerOp,omitempty"`
	// SidecarCPUMicrosPerOp: the sidecars' part of ServerCPUMicrosPerOp.
	SidecarCPUMicrosPerOp *float64 `json:"sidecarCPUMicrosPerOp,omitempty"`
	ClientCPUMicrosPerOp  *float64 `json:"clientCPUMicrosPerOp,omitempty"`
	BackgroundCores       *float64 `json:"backgroundCores,omitempty"`
	// CoveredSeconds: how much of the window the kubelets' CPU samples spanned.
	CoveredSeconds int32  `json:"coveredSeconds,omitempty"`
	Unavailable    string `json:"unavailable,omitempty"`
	// BackgroundUnavailable says why BackgroundCores is missing when the server figures are not.
	BackgroundUnavailable string `json:"backgroundUnavailable,omitempty"`
	// Busy: the run's background exceeded the study's limit, or its clients could not keep the
	// fixed rate (set aside and repeated, or kept after the last repeat).
	Busy string `json:"busy,omitempty"`
}

func cellReport(c *v1alpha1.StudyCell) CellReport {
	r := CellReport{Name: c.Name, Profile: c.Profile, Acceleration: string(c.Acceleration), Nodes: c.Nodes, FieldLength: c.FieldLength,
		Rank: c.Rank, State: string(c.State), Reason: c.Reason, Datastore: c.Datastore, Runs: []int64{}}
	for _, run := range c.Runs {
		r.Runs = append(r.Runs, run.ThroughputOpsPerSec)
		r.RunCosts = append(r.RunCosts, runCost(run))
	}
	for _, run := range c.SetAside {
		r.SetAside = append(r.SetAside, runCost(run))
	}
	r.SwitchSeconds = switchSeconds(c)
	return r
}

// switchSeconds are the durations of the cell's switches, in seconds.
func switchSeconds(c *v1alpha1.StudyCell) []float64 {
	var out []float64
	for _, d := range c.SwitchDurations {
		out = append(out, d.Seconds())
	}
	return out
}

// switchesText lists how long the switches into each cell's profile took, for every rendering
// of a Switched study's report; "" when no datastore was switched.
func (r Report) switchesText() string {
	var b strings.Builder
	for _, c := range r.Cells {
		if len(c.SwitchSeconds) == 0 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("Switches into each profile (from the change of the shared datastore's profile to Ready and a verified wire; not measured):\n")
		}
		s := make([]string, len(c.SwitchSeconds))
		for i, v := range c.SwitchSeconds {
			s[i] = strconv.FormatFloat(v, 'f', 0, 64)
		}
		fmt.Fprintf(&b, "- %s: %s s (median %s s)\n", c.Name, strings.Join(s, ", "), strconv.FormatFloat(stats.Median(c.SwitchSeconds), 'f', 0, 64))
	}
	return b.String()
}

func runCost(run v1alpha1.StudyRun) RunCost {
	return RunCost{Round: run.Round, Start: run.Start, End: run.End, ThroughputOpsPerSec: run.ThroughputOpsPerSec, ThroughputCV: parsed(run.ThroughputCV),
		WarmUpSeconds: parsed(run.WarmUpSeconds), WarmUpSteady: run.WarmUpSteady, ServerCPUMicrosPerOp: parsed(run.ServerCPUMicrosPerOp),
		SidecarCPUMicrosPerOp: parsed(run.SidecarCPUMicrosPerOp),
		ClientCPUMicrosPerOp:  parsed(run.ClientCPUMicrosPerOp), BackgroundCores: parsed(run.BackgroundCores),
		CoveredSeconds: run.CoveredSeconds, Unavailable: run.CPUUnavailable, BackgroundUnavailable: run.BackgroundUnavailable, Busy: run.Busy}
}

// parsed reads a decimal string of the status; nil when it is empty or not a number.
func parsed(s string) *float64 {
	f, err := strconv.ParseFloat(s, 64)
	if s == "" || err != nil {
		return nil
	}
	return &f
}

// JSON of the report, indented for kubectl readers.
func (r Report) JSON() ([]byte, error) { return json.MarshalIndent(r, "", "  ") }

// ParseReport reads report.json.
func ParseReport(b []byte) (Report, error) {
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return Report{}, fmt.Errorf("report.json: %w", err)
	}
	return r, nil
}

// Markdown renders the report's tables.
func (r Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# TradeoffStudy %s\n\n", r.Study)
	fmt.Fprintf(&b, "%s, %s, %d repetitions per cell in randomized interleaved order (seed %d). Baseline: %s.\n\n",
		r.Engine, r.Workload, r.Repetitions, r.Seed, r.Baseline)
	if r.WallTime != "" {
		b.WriteString(r.wallTimeText() + "\n\n")
	}
	if r.Precision != nil {
		b.WriteString(r.Precision.text(r.Repetitions, r.compared()) + "\n\n")
	}
	b.WriteString("## Recommendation\n\n")
	b.WriteString(r.recommendationText() + "\n\n")

	b.WriteString("## Cells\n\n")
	fmt.Fprintf(&b, "Overheads are capacity lost against the baseline of the same setting (acceleration, size and, where it is a factor, value size), with their 95%% intervals; the decision, p and extra nodes rest on %s.\n\n", metricName(r.OverheadMetric))
	b.WriteString("| Cell | Profile | Acceleration | Nodes | Rank | State | Runs (ops/s) | Median ops/s | 95% CI | Throughput overhead | Server CPU µs/op | CPU overhead | p | Meaningful | p99 ms | Client CPU µs/op | Extra nodes |\n")
	b.WriteString("|---|---|---|---:|---:|---|---|---:|---|---|---:|---|---:|---|---:|---:|---:|\n")
	for _, c := range r.Cells {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			c.Name, c.Profile, c.Acceleration, c.Nodes, c.Rank, c.State, runs(c.Runs), orDash(c.MedianThroughput),
			throughputCI(c), withCI(c.Throughput), decimalOrDash(c.ServerCPUMicrosPerOp), withCI(c.ServerCPU), pValue(c), meaningful(c),
			millis(c.P99Micros), decimalOrDash(c.ClientCPUMicrosPerOp), extraNodes(c))
	}
	if notes := r.notes(); notes != "" {
		b.WriteString("\n" + notes)
	}
	if acc := r.accelerationText(); acc != "" {
		b.WriteString("\n## Hardware AES\n\n" + acc)
	}
	b.WriteString("\n" + r.runCosts())
	if sw := r.switchesText(); sw != "" {
		b.WriteString("\n## Switches\n\n" + sw)
	}
	if len(r.Candidates) > 0 {
		b.WriteString("\n## Decision\n\n| Profile | Rank | Worst overhead | Cell | Decision |\n|---|---:|---:|---|---|\n")
		for _, c := range r.Candidates {
			worst := "–"
			if c.Cell != "" {
				worst = percent(c.WorstOverhead) + "%"
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s |\n", c.Profile, c.Rank, worst, orDashString(c.Cell), c.Why)
		}
	}
	if len(r.ParetoFrontier) > 0 {
		fmt.Fprintf(&b, "\n## Pareto frontier\n\nNot dominated in (security rank, throughput) in their setting: %s.\n", strings.Join(r.ParetoFrontier, ", "))
	}
	fmt.Fprintf(&b, "\n## Method\n\n%s\n", r.Method)
	return b.String()
}

func (r Report) recommendationText() string {
	rec := r.Recommendation
	switch {
	case rec == nil && r.Phase == string(v1alpha1.StudyFailed):
		return "No recommendation: the study failed before any profile could be compared with the baseline (see Cells)."
	case rec == nil:
		return "No recommendation: no measured profile meets the decision rule (see Decision)."
	}
	s := fmt.Sprintf("**Recommended: %s.** %s", rec.Profile, rec.Reason)
	if rec.ExtraNodesPercent != "" {
		s += fmt.Sprintf(" Cost of security: +%s%% nodes to restore the baseline's capacity", rec.ExtraNodesPercent)
		if rec.ExtraCostPerHour != "" {
			s += fmt.Sprintf(", %s %s per hour at %s %s per node-hour", rec.ExtraCostPerHour, r.Currency, strconv.FormatFloat(r.PricePerNodeHour, 'f', -1, 64), r.Currency)
		}
		s += "."
	}
	return s
}

// notes lists why cells were pruned or failed.
func (r Report) notes() string {
	var b strings.Builder
	for _, c := range r.Cells {
		if c.Reason != "" {
			fmt.Fprintf(&b, "- %s %s: %s\n", c.Name, strings.ToLower(c.State), c.Reason)
		}
	}
	for _, caution := range r.CheaperThanBaseline {
		fmt.Fprintf(&b, "- **Caution:** %s\n", caution)
	}
	return b.String()
}

func runs(v []int64) string {
	if len(v) == 0 {
		return "–"
	}
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ", ")
}

func orDash(v int64) string {
	if v == 0 {
		return "–"
	}
	return strconv.FormatInt(v, 10)
}

func orDashString(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func throughputCI(c CellReport) string {
	switch {
	case c.ThroughputCI != nil:
		return fmt.Sprintf("%.0f..%.0f", c.ThroughputCI.Low, c.ThroughputCI.High)
	case len(c.Runs) > 0:
		return "needs 6 runs"
	}
	return "–"
}

// withCI writes an overhead with its interval: "12.3% (5.0..20.1%)".
func withCI(cmp *stats.Comparison) string {
	switch {
	case cmp == nil:
		return "–"
	case !cmp.HasCI:
		return percent(cmp.Overhead) + "% (needs more runs)"
	}
	return fmt.Sprintf("%s%% (%s..%s%%)", percent(cmp.Overhead), percent(cmp.CI.Low), percent(cmp.CI.High))
}

func decimalOrDash(f *float64) string { return digitsOrDash(f, 1) }

func digitsOrDash(f *float64, digits int) string {
	if f == nil {
		return "–"
	}
	return strconv.FormatFloat(*f, 'f', digits, 64)
}

func metricName(m v1alpha1.OverheadMetric) string {
	if m == v1alpha1.OverheadMetricServerCPU {
		return "server CPU per operation (operations per server CPU-second)"
	}
	return "throughput"
}

// runCosts is the per-run table of CPU: what each run cost per operation, and how quiet the
// nodes were (background: the cores everything else used), so a reader can see whether a
// figure came from a disturbed run.
func (r Report) runCosts() string {
	var b strings.Builder
	b.WriteString("## Runs\n\nPer run, in the order the cell ran them: the warm-up until steady before a cell's first run (\"max\" when the throughput never settled), throughput and its coefficient of variation second by second (CV: a few hundredths when the window was steady), server CPU-µs per operation (the datastore's pods, sidecars included) and the sidecars' part of it, client CPU-µs per operation, background cores (CPU the nodes spent on anything else during the window), and how many seconds of the window the kubelets' CPU samples spanned (the CPU figures are the rate over that span; the shorter, the noisier). Runs set aside (for their background, for a fixed rate their clients could not keep, or for a server CPU figure they lost) follow the cell's runs; the analysis leaves them out.\n\n")
	b.WriteString("| Cell | Round | Warm-up s | ops/s | CV | Server CPU µs/op | of which sidecars | Client CPU µs/op | Background cores | Sampled s | Busy |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	var missing, missingBackground, busy []string
	row := func(cell string, rc RunCost, mark string) {
		warm := digitsOrDash(rc.WarmUpSeconds, 0)
		if rc.WarmUpSteady != nil && !*rc.WarmUpSteady {
			warm += " (max)"
		}
		sampled := "–"
		if rc.CoveredSeconds > 0 {
			sampled = strconv.Itoa(int(rc.CoveredSeconds))
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", cell, rc.Round, warm, rc.ThroughputOpsPerSec, digitsOrDash(rc.ThroughputCV, 3), decimalOrDash(rc.ServerCPUMicrosPerOp),
			decimalOrDash(rc.SidecarCPUMicrosPerOp), decimalOrDash(rc.ClientCPUMicrosPerOp), digitsOrDash(rc.BackgroundCores, 2), sampled, mark)
		if rc.Unavailable != "" && !slices.Contains(missing, rc.Unavailable) {
			missing = append(missing, rc.Unavailable)
		}
		if rc.BackgroundUnavailable != "" {
			missingBackground = append(missingBackground, fmt.Sprintf("%s, round %d: %s", cell, rc.Round, strings.TrimSuffix(rc.BackgroundUnavailable, ".")))
		}
		if rc.Busy != "" {
			busy = append(busy, fmt.Sprintf("%s, round %d: %s", cell, rc.Round, rc.Busy))
		}
	}
	for _, c := range r.Cells {
		for _, rc := range c.RunCosts {
			mark := ""
			if rc.Busy != "" {
				mark = "kept"
			}
			row(c.Name, rc, mark)
		}
		for _, rc := range c.SetAside {
			row(c.Name, rc, "set aside")
		}
	}
	for _, m := range missing {
		fmt.Fprintf(&b, "\nServer CPU missing: %s.\n", strings.TrimSuffix(m, "."))
	}
	bullets(&b, "Background missing (the server figures stand; the run could not be judged busy)", missingBackground)
	bullets(&b, "Busy runs", busy)
	return b.String()
}

// bullets writes a titled list of the runs that need a word, nothing when there are none.
func bullets(b *strings.Builder, title string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s:\n\n", title)
	for _, m := range items {
		fmt.Fprintf(b, "- %s\n", m)
	}
}

func pValue(c CellReport) string {
	if c.Comparison == nil {
		return "–"
	}
	return strconv.FormatFloat(c.Comparison.Test.P, 'f', 4, 64)
}

func meaningful(c CellReport) string {
	switch {
	case c.Comparison == nil:
		return "–"
	case c.Comparison.Meaningful:
		return "yes"
	case c.Comparison.Significant:
		return "no (under 2%)"
	}
	return "no (not significant)"
}

func millis(us int64) string {
	if us == 0 {
		return "–"
	}
	return strconv.FormatFloat(float64(us)/1000, 'f', 2, 64)
}

func extraNodes(c CellReport) string {
	if c.ExtraNodesFraction == nil {
		return "–"
	}
	if math.IsInf(*c.ExtraNodesFraction, 1) {
		return "∞"
	}
	if *c.ExtraNodesFraction > 0 {
		return "+" + percent(*c.ExtraNodesFraction) + "%"
	}
	return strconv.FormatFloat(100**c.ExtraNodesFraction, 'f', 1, 64) + "%"
}

// wallTimeText says how long the study took, for every rendering of the report.
func (r Report) wallTimeText() string {
	return "Wall time: " + r.WallTime + ", from the study's creation to this report (provisioning and warm-ups included)."
}
