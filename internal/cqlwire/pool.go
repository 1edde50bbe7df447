package cqlwire

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// redialPause is the least time between two attempts to replace a failed connection, so that
// a node that is down costs a dial per second, not one per operation.
const redialPause = time.Second

// reprepares bounds how often one request prepares its statement again after a node answered
// that it does not know it: once for a node that restarted or never saw it, and again for an
// eviction by a schema change between the prepare and the execute.
const reprepares = 3

// Pool spreads requests over a number of connections to each of a set of nodes, in turn.
// Safe for concurrent use.
type Pool struct {
	cfg      Config
	conns    []*slot // node after node, perHost times over
	nodes    uint64  // how many nodes
	next     atomic.Uint64
	queries  []string
	prepared []atomic.Pointer[Prepared] // by Statement, on first use
	// preparing serialises the pool's prepares of each statement. Cassandra 4 evicts a
	// statement when two prepares of its text overlap (CASSANDRA-17401), and the executes
	// that follow get UNPREPARED; eight callers that start at once made two of 2,000 inserts
	// fail in clean-clone CI before this.
	preparing []sync.Mutex
}

// slot is one of the pool's connections, replaced when it fails.
type slot struct {
	addr     string
	mu       sync.Mutex
	conn     atomic.Pointer[Conn]
	lastDial time.Time
}

// Statement is the index of one of the queries given to Open.
type Statement int

// Open connects perHost times to each address; every connection must open. The queries are
// prepared when first executed (their tables may not exist yet), on one node; a node that does
// not know one yet prepares it when it first gets it (see Conn.Execute).
func Open(ctx context.Context, addrs []string, perHost int, cfg Config, queries []string) (*Pool, error) {
	if len(addrs) == 0 || perHost < 1 {
		return nil, fmt.Errorf("cqlwire: %d addresses with %d connections each: give at least one of each", len(addrs), perHost)
	}
	p := &Pool{cfg: cfg, nodes: uint64(len(addrs)), queries: queries,
		prepared: make([]atomic.Pointer[Prepared], len(queries)), preparing: make([]sync.Mutex, len(queries))}
	for range perHost {
		for _, a := range addrs {
			c, err := Dial(ctx, a, cfg)
			if err != nil {
				p.Close()
				return nil, err
			}
			s := &slot{addr: a, lastDial: time.Now()}
			s.conn.Store(c)
			p.conns = append(p.conns, s)
		}
	}
	return p, nil
}

// Execute runs st on a connection about to write, or else on the next one, and passes each
// row's columns to row (nil for a statement without rows), returning the number of rows. The
// columns are valid only during the call. A node that does not know the statement (it
// restarted, never saw it, or a schema change evicted it) gets it prepared again.
func (p *Pool) Execute(ctx context.Context, st Statement, q *Request, row func([][]byte) error) (int, error) {
	c, err := p.pick(ctx)
	if err != nil {
		return 0, err
	}
	pr := p.prepared[st].Load()
	if pr == nil {
		if pr, err = p.prepare(ctx, c, st, true); err != nil {
			return 0, err
		}
	}
	for again := 0; ; again++ {
		n, err := c.Execute(ctx, pr, q, row)
		if se := (*ServerError)(nil); again == reprepares || !errors.As(err, &se) || se.Code != codeUnprepared {
			return n, err
		}
		if pr, err = p.prepare(ctx, c, st, false); err != nil {
			return 0, err
		}
	}
}

// prepare prepares st on c, one prepare of st at a time. A first use leaves it to whoever
// got there first; a node that answered UNPREPARED needs it on that node, so it is always sent.
func (p *Pool) prepare(ctx context.Context, c *Conn, st Statement, firstUse bool) (*Prepared, error) {
	p.preparing[st].Lock()
	defer p.preparing[st].Unlock()
	if pr := p.prepared[st].Load(); firstUse && pr != nil {
		return pr, nil
	}
	pr, err := c.Prepare(ctx, p.queries[st])
	if err != nil {
		return nil, err
	}
	p.prepared[st].Store(pr)
	return pr, nil
}

// pick chooses the connection for a request. The nodes take turns, so that every node
// coordinates its share. Among the turn's node's connections, a request goes where a caller
// is about to write (or writing): it leaves in that write or the next, which costs no system
// call of its own, where an idle connection costs one write, and over TLS a record.
// Operations that start together, as a fixed rate's do within a tick, so share a write
// instead of each paying one (make bench-client's fixed-rate case).
func (p *Pool) pick(ctx context.Context) (*Conn, error) {
	n := p.next.Add(1) % uint64(len(p.conns))
	// Open lays the connections out node after node, perHost times over.
	for i := n % p.nodes; i < uint64(len(p.conns)); i += p.nodes {
		if c := p.conns[i].conn.Load(); c != nil && c.writing.Load() && !c.Broken() {
			return c, nil
		}
	}
	return p.conns[n].get(ctx, p.cfg)
}

// get returns the slot's connection, dialled again if it failed and the last attempt is a
// redialPause old.
func (s *slot) get(ctx context.Context, cfg Config) (*Conn, error) {
	c := s.conn.Load()
	if c != nil && !c.Broken() {
		return c, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c = s.conn.Load(); c != nil && !c.Broken() {
		return c, nil
	}
	if time.Since(s.lastDial) < redialPause {
		if c != nil {
			return nil, c.failure()
		}
		return nil, errors.New("cqlwire: " + s.addr + ": not connected")
	}
	s.lastDial = time.Now()
	fresh, err := Dial(ctx, s.addr, cfg)
	if err != nil {
		return nil, err
	}
	s.conn.Store(fresh)
	return fresh, nil
}

// Nodes are the addresses the pool connects to, in the order given to Open.
func (p *Pool) Nodes() []string {
	var out []string
	for _, s := range p.conns {
		if !slices.Contains(out, s.addr) {
			out = append(out, s.addr)
		}
	}
	return out
}

// Close closes every connection.
func (p *Pool) Close() {
	for _, s := range p.conns {
		if c := s.conn.Load(); c != nil {
			c.Close()
		}
	}
}
