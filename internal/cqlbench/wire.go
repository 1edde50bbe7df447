package cqlbench

import (
	"context"
	"encoding/binary"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"secured.dev/operator/internal/cqlwire"
)

// The measured operations go through cqlwire, a leaner executor than gocql, whenever the
// session needs nothing that only gocql does: no retries over nodes and no plaintext
// fallback (clients that ride through a rolling change). Schema, the history checker's reads
// and those clients stay with gocql.
func wanted(o Options) bool { return o.Retries == 0 && !o.PlaintextFallback }

// wire is the Store's cqlwire pool and its statements.
type wire struct {
	pool        *cqlwire.Pool
	consistency uint16
	read, scan  cqlwire.Statement
	insert      cqlwire.Statement
	update      []cqlwire.Statement // by field
}

// openWire connects to every node of the ring gocql found from the contact points, as gocql
// itself does (its default policy takes the nodes in turn): a contact point is often a Service
// in front of the whole cluster, and the load must reach every node as a coordinator.
func (s *Store) openWire(consistency gocql.Consistency, timeout time.Duration, perHost int, o Options) error {
	var hosts []string
	for _, h := range s.session.GetHosts() {
		if h.IsUp() {
			hosts = append(hosts, h.ConnectAddressAndPort())
		}
	}
	cfg := cqlwire.Config{Dial: s.dialer.dial, Timeout: timeout}
	switch {
	case o.Login != nil:
		token := append(append(append([]byte{0}, o.Login.Username...), 0), o.Login.Password...)
		cfg.Login = func(string) ([]byte, error) { return token, nil }
	case presentsCertificate(o):
		// MutualTlsAuthenticator asks for a response and ignores it, as CertificateLogin says.
		cfg.Login = func(string) ([]byte, error) { return []byte{}, nil }
	}
	queries := append([]string{s.read, s.scan, s.insert}, s.update...)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	pool, err := cqlwire.Open(ctx, hosts, perHost, cfg, queries)
	if err != nil {
		return err
	}
	s.wire = &wire{pool: pool, consistency: uint16(consistency), read: 0, scan: 1, insert: 2, update: make([]cqlwire.Statement, s.fields)}
	for i := range s.wire.update {
		s.wire.update[i] = cqlwire.Statement(3 + i)
	}
	return nil
}

// wireClient is a Client's buffers for cqlwire.
type wireClient struct {
	w      *wire
	req    cqlwire.Request
	values [][]byte
	key    []byte
	limit  [4]byte
	// onRow is c.openRow or c.countRow, bound once: a method value made per read is garbage.
	onRow func([][]byte) error
}

func (c *Client) wireExec(ctx context.Context, st cqlwire.Statement, stamp int64, values [][]byte, row func([][]byte) error) (int, error) {
	w := &c.wire
	if stamp == 0 && row == nil {
		stamp = time.Now().UnixMicro() // as gocql stamps a write at sending
	}
	w.req.Consistency, w.req.Timestamp, w.req.Values = w.w.consistency, stamp, values
	return w.w.pool.Execute(ctx, st, &w.req, row)
}

func (c *Client) wireInsert(ctx context.Context, key string, values [][]byte, stamp int64) error {
	w := &c.wire
	w.key = append(w.key[:0], key...)
	w.values = append(w.values[:0], w.key)
	for i, v := range values {
		if c.crypt != nil {
			sealed, err := c.crypt.seal(key, i, v)
			if err != nil {
				return err
			}
			v = sealed
		}
		w.values = append(w.values, v)
	}
	_, err := c.wireExec(ctx, w.w.insert, stamp, w.values, nil)
	return err
}

func (c *Client) wireUpdate(ctx context.Context, key string, field int, value []byte, stamp int64) error {
	w := &c.wire
	if c.crypt != nil {
		sealed, err := c.crypt.seal(key, field, value)
		if err != nil {
			return err
		}
		value = sealed
	}
	w.key = append(w.key[:0], key...)
	w.values = append(w.values[:0], value, w.key)
	_, err := c.wireExec(ctx, w.w.update[field], stamp, w.values, nil)
	return err
}

func (c *Client) wireRead(ctx context.Context, key string) (int, error) {
	w := &c.wire
	w.key = append(w.key[:0], key...)
	w.values = append(w.values[:0], w.key)
	return c.wireExec(ctx, w.w.read, 0, w.values, w.onRow)
}

func (c *Client) wireScan(ctx context.Context, key string, n int) error {
	w := &c.wire
	w.key = append(w.key[:0], key...)
	binary.BigEndian.PutUint32(w.limit[:], uint32(int32(n)))
	w.values = append(w.values[:0], w.key, w.limit[:])
	_, err := c.wireExec(ctx, w.w.scan, 0, w.values, w.onRow)
	return err
}

// countRow takes a row off the wire without looking at it: the frame was read whole (and over
// TLS decrypted), which is the work a client must do; the values are of no use to a benchmark.
func countRow([][]byte) error { return nil }

// openRow opens the sealed fields of a row whose first column is its key.
func (c *Client) openRow(cols [][]byte) error {
	for i, v := range cols[1:] {
		if _, err := c.crypt.open(cols[0], i, v); err != nil {
			return err
		}
	}
	return nil
}
