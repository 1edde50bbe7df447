package k6ycsb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"

	"secured.dev/operator/internal/writecheck"
)

// verifyOptions are the script's workload.verifyWrites(db, {...}) options.
type verifyOptions struct {
	// History to check: the workload's own (ycsb.workload's history, closed first) when empty.
	History string `js:"history"`
	// Consistency of the reads; ALL, so that no replica's loss hides behind another's copy.
	Consistency string `js:"consistency"`
}

// checkTimeout bounds a check: reads of every key written, a few hundred thousand at most.
const checkTimeout = 30 * time.Minute

// VerifyWrites reads back every key-field whose latest recorded write the datastore
// acknowledged, and keeps the verdict for the summary (its "writes"). A script calls it in
// teardown, after the run, or in a phase of its own after a fault has healed.
func (wl *Workload) VerifyWrites(db *DB, opts sobek.Value) {
	rt := wl.m.vu.Runtime()
	o := verifyOptions{Consistency: "ALL"}
	if err := decode(rt, "workload.verifyWrites", opts, &o); err != nil {
		common.Throw(rt, err)
	}
	path := o.History
	if h := wl.shared.history; h != nil {
		if err := h.Close(); err != nil {
			common.Throw(rt, fmt.Errorf("workload.verifyWrites: %w", err))
		}
		if path == "" {
			path = wl.shared.historyAt
		}
	}
	if path == "" {
		common.Throw(rt, errors.New("workload.verifyWrites: no history; give history, or record one with ycsb.workload({history})"))
	}
	consistency, err := parseConsistency(o.Consistency)
	if err != nil {
		common.Throw(rt, fmt.Errorf("workload.verifyWrites: %w", err))
	}
	db.client(wl) // opens the session, or throws why it cannot
	name := wl.shared.w.KeyName
	checker := writecheck.Checker{
		Name:        name,
		Consistency: strings.ToUpper(o.Consistency),
		Read: func(ctx context.Context, key int64) ([][]byte, error) {
			return db.store.Record(ctx, name(key), consistency)
		},
	}
	// Not the VU's context: a run that was stopped (SIGTERM) still checks what it wrote.
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	res, err := checker.Check(ctx, path)
	if err != nil {
		common.Throw(rt, fmt.Errorf("workload.verifyWrites: %w", err))
	}
	wl.shared.mu.Lock()
	wl.shared.writes = &res
	wl.shared.mu.Unlock()
}
