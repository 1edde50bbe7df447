package main

import "testing"

// The memory unit is worth timing only if its walk cannot be guessed or cut short: the
// permutation must be one cycle through every slot, whatever the size.
func TestCycleVisitsEverySlotOnce(t *testing.T) {
	for _, n := range []int{2, 3, 1000, 1 << 16} {
		p := cycle(n, 7)
		seen := make([]bool, n)
		at := 0
		for i := range n {
			if seen[at] {
				t.Fatalf("n=%d: slot %d visited twice after %d steps; the walk is not one cycle", n, at, i)
			}
			seen[at] = true
			at = p[at]
		}
		if at != 0 {
			t.Errorf("n=%d: after %d steps the walk is at %d, not back at its start", n, n, at)
		}
	}
}
