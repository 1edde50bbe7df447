package main

import (
	"math/rand/v2"
	"testing"
)

func TestPreciseByFollowsTheSpread(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 0))
	// Identical pairs are precise as soon as the signed-rank interval exists (6 rounds).
	if got := preciseBy(rng, normal, 0, 0.05, 6, 8, 50); got[0] != 1 {
		t.Errorf("no spread: precise within 6 rounds in %.2f of studies, want all", got[0])
	}
	// Pairs 30 points apart never narrow to ±5 in 8 rounds.
	if got := preciseBy(rng, normal, 0.30, 0.05, 6, 8, 200); got[2] > 0.01 {
		t.Errorf("30-point spread: precise within 8 rounds in %.2f of studies, want none", got[2])
	}
	// At a spread of 5 points, more rounds raise the odds clearly.
	got := preciseBy(rng, student(4), 0.05, 0.05, 6, 12, 500)
	if got[len(got)-1]-got[2] < 0.1 {
		t.Errorf("5-point spread: %.2f within 8 rounds and %.2f within 12, want a clear gain", got[2], got[len(got)-1])
	}
}

// Rounds of the imprecise cell only never lose a study that whole rounds would have ended
// precise (the lagging cell is judged at every round whole rounds judge it, and more), and at
// a 5-point spread they win clearly more.
func TestPairBySpendsTheBudgetOnTheImpreciseCell(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 0))
	if whole, apart := pairBy(rng, normal, 0, 0.05, 6, 9, 50); whole != 1 || apart != 1 {
		t.Errorf("no spread: %.2f and %.2f of studies precise, want all", whole, apart)
	}
	whole, apart := pairBy(rng, normal, 0.05, 0.05, 6, 9, 600)
	if apart < whole+0.05 {
		t.Errorf("5-point spread: %.2f precise with whole rounds, %.2f with rounds of the imprecise cell; want a clear gain", whole, apart)
	}
}
