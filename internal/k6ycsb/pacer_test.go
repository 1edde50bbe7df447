package k6ycsb

import (
	"strings"
	"testing"
	"time"
)

// The schedule: operation k is due k/rate after the first user arrived, rounded up to the
// millisecond, operations due in the warm-up are not measured, and the schedule ends with the
// measured window.
func TestPacerSchedule(t *testing.T) {
	p, err := newPacer(paceOptions{Rate: 3, WarmUp: "1s", Duration: "2s"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	p.begin(t0)
	p.begin(t0.Add(time.Hour)) // a later user does not move the origin
	var measured, warm int
	for k := 0; ; k++ {
		due, isMeasured, end, ok := p.take()
		if !ok {
			if k != 9 {
				t.Fatalf("the schedule ended after %d operations; 3/s for 1 s + 2 s is 9", k)
			}
			break
		}
		// k/3 s: 0, 333.3.., 666.6.. ms, ... rounded up to 334, 667, 1000, 1334 ...
		want := t0.Add(time.Duration(k/3)*time.Second + []time.Duration{0, 334 * time.Millisecond, 667 * time.Millisecond}[k%3])
		if !due.Equal(want) {
			t.Errorf("operation %d due %s; want %s", k, due, want)
		}
		if !end.Equal(t0.Add(3 * time.Second)) {
			t.Errorf("window ends %s; want 3 s after the origin", end)
		}
		if isMeasured {
			measured++
		} else {
			warm++
		}
	}
	if warm != 3 || measured != 6 {
		t.Errorf("%d warm-up and %d measured operations; want 3 and 6", warm, measured)
	}
	p.drop(false)
	p.drop(true)
	p.drop(true)
	if p.dropped[0].Load() != 1 || p.dropped[1].Load() != 2 {
		t.Errorf("dropped %d in the warm-up and %d measured; want 1 and 2", p.dropped[0].Load(), p.dropped[1].Load())
	}
}

func TestPacerRejectsWhatCannotRun(t *testing.T) {
	for _, o := range []paceOptions{
		{Rate: 0, WarmUp: "0s", Duration: "1s"},
		{Rate: -5, WarmUp: "0s", Duration: "1s"},
		{Rate: 10, WarmUp: "soon", Duration: "1s"},
		{Rate: 10, WarmUp: "0s", Duration: "0s"},
		{Rate: 10, WarmUp: "-1s", Duration: "1s"},
	} {
		_, err := newPacer(o)
		if err == nil || !strings.Contains(err.Error(), "workload.runAtRate") {
			t.Errorf("%+v: error %v; want one naming workload.runAtRate and the option", o, err)
		}
	}
}
