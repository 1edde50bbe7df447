package cqlwire

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// streams is how many requests one connection carries at once (v4 allows 32,768); a caller
// beyond them waits for a free one.
const streams = 1024

// ErrTimeout is a request the server did not answer within the connection's timeout.
var ErrTimeout = errors.New("cqlwire: no response within the request timeout")

// A stream's life: a caller takes it idle and waits on it; the reader delivers the response,
// or the caller gives up first (its context, the watchdog's timeout) and the reader, when the
// late response comes, frees the stream.
const (
	idle int32 = iota
	waiting
	delivered
	abandoned
)

type stream struct {
	state   atomic.Int32
	started atomic.Int64 // unix nanoseconds of the request, for the watchdog
	done    chan struct{}
	flags   byte
	op      byte
	body    []byte // the response, owned by the caller until it frees the stream
}

// Conn is one connection carrying many requests at once. Safe for concurrent use.
type Conn struct {
	nc      net.Conn
	timeout time.Duration
	free    chan int16
	streams []stream

	// Under wmu: frames waiting for the wire, whether a caller is writing them, and whether
	// the connection is closed (no request may start). writing is also read without wmu, by
	// the pool, to send a request where a write is about to happen anyway.
	wmu     sync.Mutex
	out     []byte
	spare   []byte
	writing atomic.Bool
	closed  bool
	err     atomic.Pointer[error]
	quit    chan struct{}
}

// Config says how to open and log in.
type Config struct {
	// Dial opens the transport (TCP, or TLS over it).
	Dial func(ctx context.Context, addr string) (net.Conn, error)
	// Login answers the server's AUTHENTICATE with the initial SASL token for its
	// authenticator class; nil when the cluster must not ask for one.
	Login func(class string) ([]byte, error)
	// Timeout of one request; 10 s when zero.
	Timeout time.Duration
}

// Dial connects to addr, starts the protocol and logs in.
func Dial(ctx context.Context, addr string, cfg Config) (*Conn, error) {
	nc, err := cfg.Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	c := &Conn{nc: nc, timeout: cfg.Timeout, free: make(chan int16, streams), streams: make([]stream, streams), quit: make(chan struct{})}
	if c.timeout <= 0 {
		c.timeout = 10 * time.Second
	}
	for i := range c.streams {
		c.streams[i].done = make(chan struct{}, 1)
		c.free <- int16(i)
	}
	go c.read()
	go c.watch()
	if err := c.startup(ctx, cfg.Login); err != nil {
		c.Close()
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	return c, nil
}

func (c *Conn) startup(ctx context.Context, login func(string) ([]byte, error)) error {
	frame := finish(appendStringMap(appendHeader(nil, opStartup), [][2]string{{"CQL_VERSION", "3.0.0"}, {"DRIVER_NAME", "secured-datastore cqlwire"}}))
	resp, err := c.roundTrip(ctx, frame)
	if err != nil {
		return err
	}
	defer resp.release()
	switch resp.op {
	case opReady:
		return nil
	case opAuthenticate:
	default:
		return fmt.Errorf("cqlwire: STARTUP answered with opcode 0x%02x", resp.op)
	}
	r := reader{b: resp.body}
	class := r.string()
	if login == nil {
		return fmt.Errorf("the server demands a login (%s) and none was given", class)
	}
	token, err := login(class)
	if err != nil {
		return err
	}
	auth, err := c.roundTrip(ctx, finish(appendBytes(appendHeader(nil, opAuthResponse), token)))
	if err != nil {
		return err
	}
	defer auth.release()
	switch auth.op {
	case opAuthSuccess:
		return nil
	case opAuthChallenge:
		// Neither PasswordAuthenticator nor MutualTlsAuthenticator challenges twice.
		return errors.New("cqlwire: the server's authenticator asks for a second round, which this client does not speak")
	default:
		return fmt.Errorf("cqlwire: AUTH_RESPONSE answered with opcode 0x%02x", auth.op)
	}
}

// response is an answer; its body belongs to the caller until release.
type response struct {
	c    *Conn
	id   int16
	op   byte
	body []byte
}

// release frees the response's stream, and with it the body.
func (r response) release() {
	r.c.streams[r.id].state.Store(idle)
	r.c.free <- r.id
}

// roundTrip sends one request frame (appendHeader, the body, finish; the stream is set here)
// and waits for its answer. The frame is the caller's again when roundTrip returns. An ERROR
// answer is returned as a *ServerError.
func (c *Conn) roundTrip(ctx context.Context, frame []byte) (response, error) {
	var id int16
	select {
	case id = <-c.free:
	case <-ctx.Done():
		return response{}, ctx.Err()
	case <-c.quit:
		return response{}, c.failure()
	}
	resp := response{c: c, id: id}
	s := &c.streams[id]
	frame[2], frame[3] = byte(uint16(id)>>8), byte(id)
	s.started.Store(time.Now().UnixNano())
	s.state.Store(waiting)
	c.wmu.Lock()
	if c.closed {
		c.wmu.Unlock()
		return response{}, c.failure()
	}
	c.out = append(c.out, frame...)
	var err error
	if !c.writing.Load() {
		// Let the goroutines that are ready to send (the callers a burst of answers woke) queue
		// their frames first, so that they leave in this write.
		c.writing.Store(true)
		c.wmu.Unlock()
		runtime.Gosched()
		c.wmu.Lock()
		err = c.flush()
	}
	c.wmu.Unlock()
	if err != nil {
		c.fail(err)
		return response{}, c.failure()
	}
	select {
	case <-s.done:
	case <-ctx.Done():
		if s.state.CompareAndSwap(waiting, abandoned) {
			return response{}, ctx.Err()
		}
		<-s.done
	}
	switch s.state.Load() {
	case delivered:
	case abandoned: // the watchdog's timeout; the reader frees the stream when the answer comes
		return response{}, ErrTimeout
	default: // woken by a failing connection, whose streams are never used again
		return response{}, c.failure()
	}
	if s.op == opError {
		err := serverError(s.body)
		resp.release()
		return response{}, err
	}
	r := reader{b: s.body}
	r.skipPreamble(s.flags)
	if r.err != nil {
		resp.release()
		return response{}, r.err
	}
	resp.op, resp.body = s.op, r.b
	return resp, nil
}

// flush writes the frames callers queued until none is left, with wmu held on entry and exit.
// The caller that finds nobody writing does it, and frames queued meanwhile leave together in
// its next write: a burst of requests costs one system call (and over TLS one record), with
// neither a flusher goroutine nor a timer, which made gocql's coalescing cost more than it
// saved.
func (c *Conn) flush() error {
	c.writing.Store(true)
	defer c.writing.Store(false)
	for len(c.out) > 0 && !c.closed {
		batch := c.out
		c.out = c.spare[:0]
		c.wmu.Unlock()
		_, err := c.nc.Write(batch)
		c.wmu.Lock()
		c.spare = batch[:0]
		if err != nil {
			return err
		}
	}
	return nil
}

// read takes responses off the wire and hands each to its stream.
func (c *Conn) read() {
	br := bufio.NewReaderSize(c.nc, 64<<10)
	var hb [headerLen]byte
	for {
		if _, err := io.ReadFull(br, hb[:]); err != nil {
			c.fail(err)
			return
		}
		h, err := parseHeader(hb[:])
		if err == nil && (h.stream < 0 || int(h.stream) >= streams) {
			// We never REGISTER for events, so no server push is expected.
			err = fmt.Errorf("cqlwire: a response on stream %d, which no request used", h.stream)
		}
		if err != nil {
			c.fail(err)
			return
		}
		s := &c.streams[h.stream]
		if cap(s.body) < h.length {
			s.body = make([]byte, h.length)
		}
		s.body = s.body[:h.length]
		if _, err := io.ReadFull(br, s.body); err != nil {
			c.fail(err)
			return
		}
		s.flags, s.op = h.flags, h.op
		if s.state.CompareAndSwap(waiting, delivered) {
			s.done <- struct{}{}
		} else if s.state.CompareAndSwap(abandoned, idle) {
			c.free <- h.stream
		}
	}
}

// watch gives up on requests older than the timeout: their callers get ErrTimeout, and their
// streams come back when the late answers do.
func (c *Conn) watch() {
	tick := time.NewTicker(max(c.timeout/10, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-c.quit:
			return
		case now := <-tick.C:
			limit := now.Add(-c.timeout).UnixNano()
			for i := range c.streams {
				s := &c.streams[i]
				if s.state.Load() == waiting && s.started.Load() < limit && s.state.CompareAndSwap(waiting, abandoned) {
					s.done <- struct{}{}
				}
			}
		}
	}
}

// fail closes the connection for good and wakes every caller waiting on it.
func (c *Conn) fail(err error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	c.err.Store(&err)
	close(c.quit)
	c.nc.Close()
	for i := range c.streams {
		s := &c.streams[i]
		if s.state.CompareAndSwap(waiting, idle) {
			s.done <- struct{}{}
		}
	}
}

func (c *Conn) failure() error {
	if p := c.err.Load(); p != nil {
		return fmt.Errorf("cqlwire: connection closed: %w", *p)
	}
	return errors.New("cqlwire: connection closed")
}

// Broken says whether the connection has failed or been closed.
func (c *Conn) Broken() bool { return c.err.Load() != nil }

// Close closes the connection; requests in flight fail.
func (c *Conn) Close() { c.fail(net.ErrClosed) }
