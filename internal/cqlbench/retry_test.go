package cqlbench

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

func TestRetryingStopsAtSuccessOrTheBudget(t *testing.T) {
	broken := errors.New("writev: broken pipe")
	for _, tc := range []struct {
		name       string
		retries    int
		failFirst  int
		wantCalls  int
		wantFailed bool
	}{
		{"no retries fails at once", 0, 1, 1, true},
		{"a transient fault is ridden out", 3, 2, 3, false},
		{"the budget is the limit", 2, 10, 3, true},
		{"success needs one call", 5, 0, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := retrying(context.Background(), tc.retries, missing, func() error {
				calls++
				if calls <= tc.failFirst {
					return broken
				}
				return nil
			})
			if calls != tc.wantCalls || (err != nil) != tc.wantFailed {
				t.Fatalf("calls %d err %v; want %d calls, failed %v", calls, err, tc.wantCalls, tc.wantFailed)
			}
		})
	}
}

func TestRetryingDoesNotRetryAnswers(t *testing.T) {
	calls := 0
	if err := retrying(context.Background(), 5, missing, func() error { calls++; return ErrNotFound }); !errors.Is(err, ErrNotFound) || calls != 1 {
		t.Fatalf("a missing key: %d calls, %v; want 1 call and ErrNotFound", calls, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	calls = 0
	err := retrying(ctx, 1000, missing, func() error { calls++; return errors.New("timeout") })
	if err == nil || calls > 3 {
		t.Fatalf("past the deadline: %d calls, %v; want the error after at most 3 calls", calls, err)
	}
}

// serverError is an error frame as gocql returns it.
type serverError struct{ code int }

func (e serverError) Code() int       { return e.code }
func (e serverError) Message() string { return "from the server" }
func (e serverError) Error() string   { return fmt.Sprintf("error 0x%04x from the server", e.code) }

func TestSchemaChangesEndAtARefusalButNotAtABusyNode(t *testing.T) {
	for _, tc := range []struct {
		err       error
		wantCalls int
	}{
		{serverError{gocql.ErrCodeUnauthorized}, 1},
		{serverError{gocql.ErrCodeSyntax}, 1},
		{serverError{gocql.ErrCodeInvalid}, 1},
		{fmt.Errorf("CREATE TABLE: %w", serverError{gocql.ErrCodeCredentials}), 1},
		{serverError{gocql.ErrCodeWriteTimeout}, 3},
		{serverError{gocql.ErrCodeOverloaded}, 3},
		{serverError{gocql.ErrCodeServer}, 3},
		{fmt.Errorf("CREATE TABLE: %w", gocql.ErrTimeoutNoResponse), 3},
	} {
		calls := 0
		err := retrying(context.Background(), 2, refused, func() error { calls++; return tc.err })
		if calls != tc.wantCalls || !errors.Is(err, tc.err) {
			t.Errorf("%v: %d calls, %v; want %d calls and the error", tc.err, calls, err, tc.wantCalls)
		}
	}
}
