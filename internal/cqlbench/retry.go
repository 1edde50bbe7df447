package cqlbench

import (
	"context"
	"errors"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
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
// between rounds. An error that answers (final) and the caller's deadline end it at once.
func retrying(ctx context.Context, retries int, final func(error) bool, op func() error) error {
	pause := retryBackoff
	for attempt := 0; ; attempt++ {
		err := op()
		if err == nil || attempt >= retries || final(err) || ctx.Err() != nil {
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

// missing: a read of a key no record has is an answer, not a fault.
func missing(err error) bool { return errors.Is(err, ErrNotFound) }

// refused: the server judged the statement itself (its syntax, the schema it names, the login's
// rights or credentials, the server's configuration) and will answer the same every time, unlike
// a timeout, an overloaded or bootstrapping node or a broken connection. Only schema changes end
// at a refusal: during a live change of a cluster's logins a node may refuse what another one
// accepts, which a measured operation rides out.
func refused(err error) bool {
	var re gocql.RequestError
	if !errors.As(err, &re) {
		return false
	}
	switch re.Code() {
	case gocql.ErrCodeSyntax, gocql.ErrCodeInvalid, gocql.ErrCodeUnauthorized, gocql.ErrCodeCredentials, gocql.ErrCodeConfig, gocql.ErrCodeAlreadyExists:
		return true
	}
	return false
}
