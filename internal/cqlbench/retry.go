package cqlbench

import (
	"context"
	"errors"
	"time"
)

// retryBackoff is the first pause before a statement is tried again on every node; it doubles
// up to maxRetryBackoff. A rolling restart takes a node away for tens of seconds, and gocql
// gives each statement one pass over the nodes it knows: a statement that met a broken
// connection on one node and a node going down on the next has used up that pass in
// milliseconds, and must wait for the ring to settle rather than fail.
const (
	retryBackoff    = 100 * time.Millisecond
	maxRetryBackoff = 2 * time.Second
)

// retrying runs op until it succeeds, up to retries more times after the first, pausing
// between rounds. A read of a missing key and the caller's deadline are answers, not faults,
// and end it at once.
func retrying(ctx context.Context, retries int, op func() error) error {
	pause := retryBackoff
	for attempt := 0; ; attempt++ {
		err := op()
		if err == nil || attempt >= retries || errors.Is(err, ErrNotFound) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause = min(2*pause, maxRetryBackoff)
	}
}
