package ycsb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// Key names are YCSB's, hashed or ordered, with and without zero padding: a table loaded by
// YCSB is read by our driver and the other way round.
func TestKeyNamesAreYCSBs(t *testing.T) {
	nums := []int64{0, 1, 5, 123, 999, 1_000_000}
	for _, tc := range []struct {
		ordered bool
		pad     int
	}{{false, 1}, {true, 1}, {true, 8}, {false, 25}} {
		order := "hashed"
		if tc.ordered {
			order = "ordered"
		}
		args := []string{"keys", order, strconv.Itoa(tc.pad)}
		for _, n := range nums {
			args = append(args, strconv.FormatInt(n, 10))
		}
		want := reference(t, args...)
		w := Workload{Ordered: tc.ordered, ZeroPadding: tc.pad}
		for i, n := range nums {
			if got := w.KeyName(n); got != want[i] {
				t.Errorf("%s, zeropadding %d: KeyName(%d) = %s; YCSB says %s", order, tc.pad, n, got, want[i])
			}
		}
	}
}

// Each core workload draws its operations in YCSB's proportions.
func TestCoreWorkloadProportions(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, name := range []string{"A", "B", "C", "D", "E", "F"} {
		w, err := Core(name)
		if err != nil {
			t.Fatal(err)
		}
		c, err := NewChooser(w, NewInsertSequence(w.RecordCount))
		if err != nil {
			t.Fatal(err)
		}
		const draws = 200_000
		counts := map[Operation]float64{}
		for range draws {
			counts[c.Operation(r)]++
		}
		for op, p := range w.Proportions {
			if got := counts[op] / draws; math.Abs(got-p) > 0.005 {
				t.Errorf("workload %s: %s %.4f of operations; want %.2f", name, op, got, p)
			}
		}
		for op := range counts {
			if w.Proportions[op] == 0 {
				t.Errorf("workload %s drew %s, which it does not have", name, op)
			}
		}
	}
	if _, err := Core("G"); err == nil || !strings.Contains(err.Error(), "A, B, C, D, E and F") {
		t.Errorf("an unknown workload: %v", err)
	}
}

// Readers never choose a key whose insert is still in flight.
func TestKeysStayBelowCompletedInserts(t *testing.T) {
	w, _ := Core("D")
	inserts := NewInsertSequence(w.RecordCount)
	c, err := NewChooser(w, inserts)
	if err != nil {
		t.Fatal(err)
	}
	inflight := inserts.Next() // 1000, not acknowledged
	r := rand.New(rand.NewPCG(5, 6))
	for range 100_000 {
		if k := c.Key(r); k >= inflight || k < 0 {
			t.Fatalf("chose key %d while %d is in flight", k, inflight)
		}
	}
	inserts.Acknowledge(inflight)
	seen := false
	for range 100_000 {
		seen = seen || c.Key(r) == inflight
	}
	if !seen {
		t.Error("the latest distribution never chose the newest key once it was acknowledged")
	}
}

// Field values carry YCSB's alphabet at every position: the bytes RandomByteIterator puts at
// position i are the bytes FillValue puts there.
func TestValuesAreRandomByteIterators(t *testing.T) {
	const length, count = 14, 20000
	want := reference(t, "values", strconv.Itoa(length), strconv.Itoa(count))
	r := rand.New(rand.NewPCG(5, 6))
	seen := make([][256]bool, length)
	buf := make([]byte, length)
	for range count {
		FillValue(r, buf)
		for i, b := range buf {
			seen[i][b] = true
		}
	}
	for i := range length {
		var got strings.Builder
		for b, ok := range seen[i] {
			if ok {
				fmt.Fprintf(&got, "%02x", b)
			}
		}
		if got.String() != want[i] {
			t.Errorf("position %d: bytes %s; YCSB puts %s there", i, got.String(), want[i])
		}
	}
}
