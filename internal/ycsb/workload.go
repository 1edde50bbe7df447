package ycsb

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Operation kinds of the core workload.
type Operation string

const (
	Read            Operation = "read"
	Update          Operation = "update"
	Insert          Operation = "insert"
	Scan            Operation = "scan"
	ReadModifyWrite Operation = "readmodifywrite"
)

// Workload is the subset of YCSB's CoreWorkload properties the product uses, with YCSB's
// names in the comments and YCSB's defaults from Core.
type Workload struct {
	RecordCount    int64 // recordcount
	OperationCount int64 // operationcount
	FieldCount     int   // fieldcount
	FieldLength    int   // fieldlength (constant distribution)
	ReadAllFields  bool  // readallfields
	WriteAllFields bool  // writeallfields

	Proportions map[Operation]float64 // readproportion, updateproportion, ...

	RequestDistribution string // requestdistribution: uniform, zipfian, latest or hotspot
	HotspotDataFraction float64
	HotspotOpnFraction  float64
	MaxScanLength       int64 // maxscanlength; scans are uniform in [1, max]

	Ordered     bool // insertorder=ordered (default hashed)
	ZeroPadding int  // zeropadding
}

// Core returns YCSB's core workload A–F as its workload files define them.
func Core(name string) (Workload, error) {
	w := Workload{
		RecordCount: 1000, OperationCount: 1000, FieldCount: 10, FieldLength: 100,
		ReadAllFields: true, RequestDistribution: "zipfian", HotspotDataFraction: 0.2, HotspotOpnFraction: 0.8,
		MaxScanLength: 1000, ZeroPadding: 1,
	}
	switch strings.ToUpper(name) {
	case "A": // update heavy
		w.Proportions = map[Operation]float64{Read: 0.5, Update: 0.5}
	case "B": // read mostly
		w.Proportions = map[Operation]float64{Read: 0.95, Update: 0.05}
	case "C": // read only
		w.Proportions = map[Operation]float64{Read: 1}
	case "D": // read latest
		w.Proportions = map[Operation]float64{Read: 0.95, Insert: 0.05}
		w.RequestDistribution = "latest"
	case "E": // short ranges
		w.Proportions = map[Operation]float64{Scan: 0.95, Insert: 0.05}
		w.MaxScanLength = 100
	case "F": // read-modify-write
		w.Proportions = map[Operation]float64{Read: 0.5, ReadModifyWrite: 0.5}
	default:
		return Workload{}, fmt.Errorf("workload %q: YCSB's core workloads are A, B, C, D, E and F", name)
	}
	return w, nil
}

// KeyName is CoreWorkload.buildKeyName: "user" and the key number, hashed unless inserts are
// ordered, left-padded with zeros to ZeroPadding digits.
func (w Workload) KeyName(keynum int64) string {
	if !w.Ordered {
		keynum = FNVHash64(keynum)
	}
	v := strconv.FormatInt(keynum, 10)
	if pad := w.ZeroPadding - len(v); pad > 0 {
		return "user" + strings.Repeat("0", pad) + v
	}
	return "user" + v
}

// order fixes the order YCSB adds operations to its chooser, which decides which operation a
// given random number picks.
var order = []Operation{Read, Update, Insert, Scan, ReadModifyWrite}

// Chooser picks operations and keys for one virtual user; it shares the insert sequence with
// the other users of the run.
type Chooser struct {
	w       Workload
	weights []float64
	ops     []Operation
	keys    func(*rand.Rand) int64
	inserts *InsertSequence
}

// NewChooser builds the run phase's generators as CoreWorkload.init does.
func NewChooser(w Workload, inserts *InsertSequence) (*Chooser, error) {
	c := &Chooser{w: w, inserts: inserts}
	sum := 0.0
	for _, op := range order {
		if p := w.Proportions[op]; p > 0 {
			c.ops, c.weights = append(c.ops, op), append(c.weights, p)
			sum += p
		}
	}
	if sum == 0 {
		return nil, fmt.Errorf("the workload has no operation with a positive proportion")
	}
	for i := range c.weights {
		c.weights[i] /= sum
	}
	n := w.RecordCount
	switch w.RequestDistribution {
	case "uniform":
		g := NewUniform(0, n-1)
		c.keys = g.Next
	case "zipfian":
		// Room for the keys the run will insert, so their arrival does not reshuffle popularity.
		expected := int64(float64(w.OperationCount) * w.Proportions[Insert] * 2)
		g := NewScrambledZipfian(0, n+expected)
		c.keys = g.Next
	case "latest":
		g := NewSkewedLatest(inserts)
		c.keys = g.Next
	case "hotspot":
		g := NewHotspot(0, n-1, w.HotspotDataFraction, w.HotspotOpnFraction)
		c.keys = g.Next
	default:
		return nil, fmt.Errorf("requestdistribution %q: use uniform, zipfian, latest or hotspot", w.RequestDistribution)
	}
	return c, nil
}

// Operation draws the next operation kind.
func (c *Chooser) Operation(r *rand.Rand) Operation {
	v := r.Float64()
	for i, w := range c.weights {
		if v < w {
			return c.ops[i]
		}
		v -= w
	}
	return c.ops[len(c.ops)-1]
}

// Key draws the key number of a read, update, scan or read-modify-write: never one whose
// insert has not completed (YCSB redraws those).
func (c *Chooser) Key(r *rand.Rand) int64 {
	for {
		if k := int64(int32(c.keys(r))); k <= c.inserts.Limit() { // YCSB takes intValue()
			return k
		}
	}
}

// Properties are the workload as YCSB's own properties, for the JVM driver: both drivers run
// the same definition.
func (w Workload) Properties() map[string]string {
	p := map[string]string{
		"workload":            "site.ycsb.workloads.CoreWorkload",
		"recordcount":         strconv.FormatInt(w.RecordCount, 10),
		"operationcount":      strconv.FormatInt(w.OperationCount, 10),
		"fieldcount":          strconv.Itoa(w.FieldCount),
		"fieldlength":         strconv.Itoa(w.FieldLength),
		"readallfields":       strconv.FormatBool(w.ReadAllFields),
		"writeallfields":      strconv.FormatBool(w.WriteAllFields),
		"requestdistribution": w.RequestDistribution,
		"hotspotdatafraction": strconv.FormatFloat(w.HotspotDataFraction, 'g', -1, 64),
		"hotspotopnfraction":  strconv.FormatFloat(w.HotspotOpnFraction, 'g', -1, 64),
		"maxscanlength":       strconv.FormatInt(w.MaxScanLength, 10),
		"zeropadding":         strconv.Itoa(w.ZeroPadding),
		"insertorder":         "hashed",
	}
	if w.Ordered {
		p["insertorder"] = "ordered"
	}
	names := map[Operation]string{Read: "readproportion", Update: "updateproportion", Insert: "insertproportion",
		Scan: "scanproportion", ReadModifyWrite: "readmodifywriteproportion"}
	for _, op := range order {
		p[names[op]] = strconv.FormatFloat(w.Proportions[op], 'g', -1, 64)
	}
	return p
}
