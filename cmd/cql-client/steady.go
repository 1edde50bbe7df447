package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

// steadyOptions: how long and how fast the steady client writes.
type steadyOptions struct {
	rate     float64
	limit    time.Duration
	stopFile string
}

// SteadySummary is the steady client's last line of output (JSON): what a datastore that
// changed under an application did to it.
type SteadySummary struct {
	// Writes attempted; Failed of them returned an error after the driver's retries (the
	// application saw the failure); Acknowledged = Writes - Failed.
	Writes, Failed, Acknowledged int
	// FirstFailure is the first failed write's error.
	FirstFailure string `json:",omitempty"`
	// SlowestMillis: the longest a write took, retries included.
	SlowestMillis int64
	// ReadBack: acknowledged rows read back at QUORUM with their value once the writes
	// stopped; Lost: acknowledged rows missing or holding another value.
	ReadBack, Lost int
	// Seconds the writes went on.
	Seconds float64
}

// configure makes the session behave as a production application's: token-aware routing and,
// for idempotent writes, retries on the next replica when one fails or goes away mid-request.
func (o steadyOptions) configure(c *gocql.ClusterConfig) {
	c.Consistency = gocql.Quorum
	c.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	c.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 3}
	c.Timeout = 5 * time.Second
}

// steady writes one row per tick at QUORUM until the limit or the stop file, then reads every
// acknowledged row back. It fails only when an acknowledged row is lost: failed writes are
// the figure the caller judges.
func steady(session *gocql.Session, o steadyOptions, out io.Writer) error {
	var s SteadySummary
	acked := map[string]string{}
	start := time.Now()
	tick := time.NewTicker(time.Duration(float64(time.Second) / o.rate))
	defer tick.Stop()
	for next := time.Now(); time.Since(start) < o.limit; next = <-tick.C {
		if o.stopFile != "" {
			if _, err := os.Stat(o.stopFile); err == nil {
				break
			}
		}
		key, value := fmt.Sprintf("steady-%d", s.Writes), next.UTC().Format(time.RFC3339Nano)
		s.Writes++
		began := time.Now()
		err := session.Query("INSERT INTO e2e.kv (k, v) VALUES (?, ?)", key, value).Idempotent(true).Exec()
		s.SlowestMillis = max(s.SlowestMillis, time.Since(began).Milliseconds())
		if err != nil {
			s.Failed++
			if s.FirstFailure == "" {
				s.FirstFailure = fmt.Sprintf("%s after %.1f s: %v", key, time.Since(start).Seconds(), err)
			}
			continue
		}
		acked[key] = value
	}
	s.Seconds = time.Since(start).Seconds()
	s.Acknowledged = len(acked)
	// One read at a time took about 90 s for 12,000 rows on a loaded 2-core machine, and
	// longer than the data-plane test waits for the summary under CI's load; eight reads in
	// flight hide the round trips.
	fmt.Fprintf(os.Stderr, "stopped after %d writes in %.0f s; reading %d acknowledged rows back\n", s.Writes, s.Seconds, s.Acknowledged)
	lost, err := readBack(session, acked, readBackWorkers)
	if err != nil {
		return err
	}
	s.Lost, s.ReadBack = lost, s.Acknowledged-lost
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s\n", b)
	if s.Lost > 0 {
		return fmt.Errorf("%d of %d acknowledged writes were lost", s.Lost, s.Acknowledged)
	}
	return nil
}

// readBackWorkers: reads in flight while the steady client checks its acknowledged rows.
const readBackWorkers = 8

// readBack reads every acknowledged row at the session's consistency and counts those missing
// or holding another value. A read that fails (rather than finding the row absent) is an
// error: it proves nothing either way.
func readBack(session *gocql.Session, acked map[string]string, workers int) (lost int, err error) {
	keys := make(chan string)
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for key := range keys {
				var got string
				err := session.Query("SELECT v FROM e2e.kv WHERE k = ?", key).Idempotent(true).Scan(&got)
				mu.Lock()
				switch {
				case errors.Is(err, gocql.ErrNotFound) || (err == nil && got != acked[key]):
					lost++
				case err != nil && firstErr == nil:
					firstErr = fmt.Errorf("reading %s back: %w", key, err)
				}
				mu.Unlock()
			}
		}()
	}
	for key := range acked {
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if failed {
			break
		}
		keys <- key
	}
	close(keys)
	wg.Wait()
	return lost, firstErr
}
