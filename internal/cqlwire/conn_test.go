package cqlwire

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// These tests check the connection's own logic (framing, streams, timeouts, failures) against
// a scripted peer; the protocol against a real Cassandra is proven by the k6 client's tests
// (internal/k6ycsb, internal/test/dataplane), which run through this package.

type answer struct {
	op    byte
	flags byte
	body  []byte
	delay time.Duration
	drop  bool // close the connection instead
}

// peer answers each request frame with what script returns for it.
func peer(t *testing.T, script func(op byte, body []byte) answer) *Conn {
	t.Helper()
	client, server := net.Pipe()
	go func() {
		defer server.Close()
		var wmu sync.Mutex
		for {
			var h [headerLen]byte
			if _, err := io.ReadFull(server, h[:]); err != nil {
				return
			}
			body := make([]byte, binary.BigEndian.Uint32(h[5:9]))
			if _, err := io.ReadFull(server, body); err != nil {
				return
			}
			if h[0] != version {
				t.Errorf("request with protocol byte 0x%02x", h[0])
			}
			a := script(h[4], body)
			if a.drop {
				return
			}
			frame := append([]byte{version | responseBit, a.flags, h[2], h[3], a.op}, binary.BigEndian.AppendUint32(nil, uint32(len(a.body)))...)
			frame = append(frame, a.body...)
			go func() {
				time.Sleep(a.delay)
				wmu.Lock()
				defer wmu.Unlock()
				server.Write(frame)
			}()
		}
	}()
	c, err := Dial(context.Background(), "scripted", Config{
		Dial:    func(context.Context, string) (net.Conn, error) { return client, nil },
		Login:   func(class string) ([]byte, error) { return []byte("\x00u\x00p"), nil },
		Timeout: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// login answers STARTUP with AUTHENTICATE and a right token with AUTH_SUCCESS.
func login(op byte, body []byte) (answer, bool) {
	switch op {
	case opStartup:
		return answer{op: opAuthenticate, body: appendString(nil, "org.apache.cassandra.auth.PasswordAuthenticator")}, true
	case opAuthResponse:
		r := reader{b: body}
		if string(r.bytes()) != "\x00u\x00p" {
			return answer{op: opError, body: appendString(appendInt(nil, 0x0100), "bad credentials")}, true
		}
		return answer{op: opAuthSuccess, body: appendInt(nil, -1)}, true
	}
	return answer{}, false
}

var stmtID = []byte{0xca, 0xfe}

// prepared is a PREPARED result: two bound values (key, limit) in a global table spec, and
// rows of three columns, the third a map<text, frozen<list<int>>> (a nested type to skip).
func prepared() []byte {
	b := appendInt(nil, resultPrepared)
	b = append(appendShort(b, uint16(len(stmtID))), stmtID...)
	b = appendInt(appendInt(appendInt(b, rowsGlobalSpec), 2), 1)
	b = appendShort(b, 0)
	b = appendString(appendString(b, "ycsb"), "usertable")
	b = appendShort(appendString(b, "y_id"), 0x000D)
	b = appendShort(appendString(b, "[limit]"), 0x0009)
	b = appendInt(appendInt(b, 0), 3) // result metadata, per-column specs
	for _, name := range []string{"y_id", "field0"} {
		b = appendShort(appendString(appendString(appendString(b, "ycsb"), "usertable"), name), 0x000D)
	}
	b = appendString(appendString(appendString(b, "ycsb"), "usertable"), "tags")
	return appendShort(appendShort(appendShort(appendShort(b, 0x0021), 0x000D), 0x0020), 0x0009)
}

// rows is a ROWS result without metadata (the client asks to skip it) holding two rows, the
// second with a null.
func rows() []byte {
	b := appendInt(appendInt(appendInt(appendInt(nil, resultRows), rowsNoMetadata), 3), 2)
	for _, v := range [][]byte{[]byte("k1"), []byte("v1"), {1}, []byte("k2"), nil, {2}} {
		b = appendBytes(b, v)
	}
	return b
}

func TestLoginPrepareExecuteAndRows(t *testing.T) {
	var executes [][]byte
	var mu sync.Mutex
	c := peer(t, func(op byte, body []byte) answer {
		if a, ok := login(op, body); ok {
			return a
		}
		switch op {
		case opPrepare:
			return answer{op: opResult, body: prepared()}
		case opExecute:
			mu.Lock()
			executes = append(executes, body)
			mu.Unlock()
			// A warning before the body, as Cassandra sends for a large batch.
			return answer{op: opResult, flags: flagWarning, body: append(appendString(appendShort(nil, 1), "careful"), rows()...)}
		}
		return answer{op: opError, body: appendString(appendInt(nil, 0x000A), "unexpected")}
	})
	p, err := c.Prepare(context.Background(), "SELECT * FROM ycsb.usertable WHERE token(y_id) >= token(?) LIMIT ?")
	if err != nil {
		t.Fatal(err)
	}
	if p.Params != 2 || p.Columns != 3 || string(p.id) != string(stmtID) {
		t.Fatalf("prepared %+v; want 2 params, 3 columns, id cafe", p)
	}
	var got []string
	q := &Request{Consistency: 1, Timestamp: 1_700_000_000_000_001, Values: [][]byte{[]byte("k1"), {0, 0, 0, 2}}}
	n, err := c.Execute(context.Background(), p, q, func(cols [][]byte) error {
		got = append(got, string(cols[0])+"="+string(cols[1])+"/"+map[bool]string{true: "null", false: "set"}[cols[1] == nil])
		return nil
	})
	if err != nil || n != 2 || strings.Join(got, ",") != "k1=v1/set,k2=/null" {
		t.Fatalf("Execute = %d rows %v, %v", n, got, err)
	}
	// The request: id, consistency ONE, values + skip metadata + timestamp, two values, stamp.
	want := append(appendShort(nil, 2), stmtID...)
	want = append(appendShort(want, 1), execValues|execSkipMeta|execTimestamp)
	want = appendBytes(appendBytes(appendShort(want, 2), []byte("k1")), []byte{0, 0, 0, 2})
	want = binary.BigEndian.AppendUint64(want, 1_700_000_000_000_001)
	if len(executes) != 1 || string(executes[0]) != string(want) {
		t.Errorf("EXECUTE body\n %x\nwant\n %x", executes, want)
	}
	if _, err := c.Execute(context.Background(), p, &Request{Values: [][]byte{nil}}, nil); err == nil || !strings.Contains(err.Error(), "binds 2 values, got 1") {
		t.Errorf("wrong number of values: %v", err)
	}
}

func TestRefusedLoginNamesTheServersReason(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	go func() {
		for _, a := range []answer{
			{op: opAuthenticate, body: appendString(nil, "PasswordAuthenticator")},
			{op: opError, body: appendString(appendInt(nil, 0x0100), "Provided username u and/or password are incorrect")},
		} {
			var h [headerLen]byte
			if _, err := io.ReadFull(server, h[:]); err != nil {
				return
			}
			io.CopyN(io.Discard, server, int64(binary.BigEndian.Uint32(h[5:9])))
			server.Write(append(append([]byte{version | responseBit, 0, h[2], h[3], a.op}, binary.BigEndian.AppendUint32(nil, uint32(len(a.body)))...), a.body...))
		}
	}()
	_, err := Dial(context.Background(), "node-0", Config{
		Dial:  func(context.Context, string) (net.Conn, error) { return client, nil },
		Login: func(string) ([]byte, error) { return []byte("\x00u\x00wrong"), nil },
	})
	var se *ServerError
	if !errors.As(err, &se) || se.Code != 0x0100 || !strings.Contains(err.Error(), "node-0") || !strings.Contains(err.Error(), "incorrect") {
		t.Errorf("Dial with a wrong password = %v; want the server's authentication error, naming the node", err)
	}
}

// A node that restarted forgot its prepared statements: the statement is prepared again and
// run once more, without the caller seeing it.
// poolOf lays conns out as Open does for that many nodes, one connection each, with one query.
func poolOf(conns ...*Conn) *Pool {
	p := &Pool{nodes: uint64(len(conns)), queries: []string{"UPDATE t SET v = ? WHERE k = ?"},
		prepared: make([]atomic.Pointer[Prepared], 1), preparing: make([]sync.Mutex, 1)}
	for i, c := range conns {
		s := &slot{addr: fmt.Sprint("node", i), lastDial: time.Now()} // no redial within the test
		s.conn.Store(c)
		p.conns = append(p.conns, s)
	}
	return p
}

var unprepared = answer{op: opError, body: append(appendString(appendInt(nil, codeUnprepared), "unknown"), appendShort(nil, 2)...)}

// statementPeer answers the PREPARE and EXECUTE of one statement, holding mu while it calls
// prepare (which says how long the answer takes) and known (whether the node still knows the
// statement: if not, it answers UNPREPARED).
func statementPeer(t *testing.T, mu *sync.Mutex, prepare func() time.Duration, known func() bool) *Conn {
	return peer(t, func(op byte, body []byte) answer {
		if a, ok := login(op, body); ok {
			return a
		}
		mu.Lock()
		defer mu.Unlock()
		switch op {
		case opPrepare:
			return answer{op: opResult, body: prepared(), delay: prepare()}
		case opExecute:
			if !known() {
				return unprepared
			}
			return answer{op: opResult, body: appendInt(nil, resultVoid)}
		}
		return answer{op: opError}
	})
}

// A node that forgot the statement (a restart), then forgot it again (a schema change) gets it
// prepared each time; one that never keeps it fails the request with its own error, after a
// bounded number of attempts.
func TestUnpreparedStatementIsPreparedAgain(t *testing.T) {
	for _, c := range []struct {
		forgets         int
		prepares, execs int
		wantUnprepared  bool
	}{
		{forgets: 1, prepares: 2, execs: 2},
		{forgets: 2, prepares: 3, execs: 3},
		{forgets: 100, prepares: 1 + reprepares, execs: 1 + reprepares, wantUnprepared: true},
	} {
		var mu sync.Mutex
		prepares, execs := 0, 0
		p := poolOf(statementPeer(t, &mu, func() time.Duration { prepares++; return 0 }, func() bool { execs++; return execs > c.forgets }))
		_, err := p.Execute(context.Background(), 0, &Request{Values: [][]byte{{1}, {2}}}, nil)
		se := (*ServerError)(nil)
		if got := errors.As(err, &se) && se.Code == codeUnprepared; got != c.wantUnprepared {
			t.Errorf("forgotten %d times: Execute returned %v", c.forgets, err)
		}
		if prepares != c.prepares || execs != c.execs {
			t.Errorf("forgotten %d times: %d prepares and %d executes; want %d and %d", c.forgets, prepares, execs, c.prepares, c.execs)
		}
	}
}

// Callers that start at once never prepare one statement twice at the same time, on any node:
// Cassandra 4 may evict a statement whose prepares overlap (CASSANDRA-17401). Each of these
// nodes knows the statement only once it was prepared there.
func TestPoolPreparesAStatementOneAtATime(t *testing.T) {
	const nodes, callers, prepareTakes = 4, 16, 5 * time.Millisecond
	var mu sync.Mutex
	var busyUntil time.Time
	prepares, overlaps := 0, 0
	node := func() *Conn {
		known := false
		prepare := func() time.Duration {
			if now := time.Now(); now.Before(busyUntil) {
				overlaps++
			}
			busyUntil = time.Now().Add(prepareTakes)
			prepares++
			known = true
			return prepareTakes
		}
		return statementPeer(t, &mu, prepare, func() bool { return known })
	}
	var conns []*Conn
	for range nodes {
		conns = append(conns, node())
	}
	p := poolOf(conns...)
	errs := make(chan error, callers)
	for range callers {
		go func() {
			_, err := p.Execute(context.Background(), 0, &Request{Values: [][]byte{{1}, {2}}}, nil)
			errs <- err
		}()
	}
	for range callers {
		if err := <-errs; err != nil {
			t.Errorf("Execute: %v", err)
		}
	}
	if overlaps != 0 {
		t.Errorf("%d prepares began while another was under way", overlaps)
	}
	if prepares < nodes || prepares > 1+callers {
		t.Errorf("%d prepares; want one per node at least and at most one per caller that met an unknown statement, plus the first", prepares)
	}
}

// A request the server sits on fails after the timeout; its stream comes back when the late
// answer does, and the connection goes on serving.
func TestTimeoutFailsTheRequestAndTheLateAnswerFreesItsStream(t *testing.T) {
	slow := make(chan struct{})
	var once sync.Once
	c := peer(t, func(op byte, body []byte) answer {
		if a, ok := login(op, body); ok {
			return a
		}
		a := answer{op: opResult, body: prepared()}
		once.Do(func() { a.delay = 600 * time.Millisecond; close(slow) })
		return a
	})
	start := time.Now()
	if _, err := c.Prepare(context.Background(), "SELECT 1"); !errors.Is(err, ErrTimeout) {
		t.Fatalf("a request answered after 600 ms with a 200 ms timeout: %v", err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("the timeout took %v", d)
	}
	if _, err := c.Prepare(context.Background(), "SELECT 1"); err != nil {
		t.Fatalf("the next request: %v", err)
	}
	<-slow
	deadline := time.Now().Add(2 * time.Second)
	for len(c.free) != streams && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if len(c.free) != streams {
		t.Errorf("%d of %d streams free after the late answer", len(c.free), streams)
	}
}

// Many callers at once share the connection; when it breaks, every one waiting fails at once
// and later requests fail without waiting.
func TestABrokenConnectionFailsEveryWaitingCaller(t *testing.T) {
	var mu sync.Mutex
	n := 0
	c := peer(t, func(op byte, body []byte) answer {
		if a, ok := login(op, body); ok {
			return a
		}
		mu.Lock()
		defer mu.Unlock()
		if n++; n == 100 {
			return answer{drop: true}
		}
		return answer{op: opResult, body: prepared(), delay: 50 * time.Millisecond}
	})
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for range 200 {
		wg.Go(func() {
			_, err := c.Prepare(context.Background(), "SELECT 1")
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if err != nil {
			failed++
		}
	}
	if failed == 0 || !c.Broken() {
		t.Errorf("%d of 200 requests failed, broken %v; want the ones in flight when the peer hung up to fail", failed, c.Broken())
	}
	if _, err := c.Prepare(context.Background(), "SELECT 1"); err == nil || !strings.Contains(err.Error(), "connection closed") {
		t.Errorf("a request on the broken connection: %v", err)
	}
}

func TestMalformedFramesAreErrorsNotPanics(t *testing.T) {
	if _, err := parseHeader([]byte{0x83, 0, 0, 1, opResult, 0, 0, 0, 0}); err == nil || !strings.Contains(err.Error(), "protocol v4") {
		t.Errorf("a v3 answer: %v", err)
	}
	if _, err := parseHeader([]byte{0x84, 0, 0, 1, opResult, 0x7f, 0, 0, 0}); err == nil {
		t.Error("a 2 GiB frame was accepted")
	}
	body := prepared()
	for n := range len(body) {
		r := reader{b: body[:n]}
		r.int()
		r.shortBytes()
		r.columns(true)
		r.columns(false)
		if r.err == nil {
			t.Fatalf("a PREPARED result cut at %d of %d bytes parsed without error", n, len(body))
		}
	}
	if err := serverError([]byte{0, 0}); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Errorf("a cut ERROR frame: %v", err)
	}
}

// The nodes take turns; within a node's turn a request goes to the connection whose write is
// under way, if any, and otherwise the node's connections take turns too.
func TestPoolSendsWhereAWriteIsUnderWayOnTheNodeWhoseTurnItIs(t *testing.T) {
	script := func(op byte, body []byte) answer {
		a, _ := login(op, body)
		return a
	}
	// Two nodes, two connections each, laid out as Open does: a1 b1 a2 b2.
	p := &Pool{nodes: 2}
	for _, addr := range []string{"a", "b", "a", "b"} {
		s := &slot{addr: addr, lastDial: time.Now()} // no redial within the test
		s.conn.Store(peer(t, script))
		p.conns = append(p.conns, s)
	}
	conn := func(i int) *Conn { return p.conns[i].conn.Load() }
	picks := func() []*Conn {
		var out []*Conn
		for range 8 {
			c, err := p.pick(context.Background())
			if err == nil {
				out = append(out, c)
			}
		}
		return out
	}
	index := func(c *Conn) int {
		for i := range p.conns {
			if conn(i) == c {
				return i
			}
		}
		return -1
	}
	var got []int
	for _, c := range picks() {
		got = append(got, index(c))
	}
	if want := []int{1, 2, 3, 0, 1, 2, 3, 0}; !slices.Equal(got, want) {
		t.Errorf("with no write under way the picks were connections %v; want %v, every connection in turn", got, want)
	}

	conn(2).writing.Store(true) // a2
	got = got[:0]
	for _, c := range picks() {
		got = append(got, index(c))
	}
	if want := []int{1, 2, 3, 2, 1, 2, 3, 2}; !slices.Equal(got, want) {
		t.Errorf("while a2 writes the picks were connections %v; want %v: node a's turns to a2, node b's in turn", got, want)
	}

	conn(2).Close() // a broken connection is never chosen for its write
	for _, c := range picks() {
		if c == conn(2) {
			t.Errorf("pick chose a broken connection because it had been writing")
		}
	}
}
