// Package cqlwire speaks the part of Cassandra's native protocol (version 4) that a benchmark
// client's measured operations need: a login, prepared statements and their execution, many
// requests in flight on one connection. It exists for the client's CPU: gocql spends a channel,
// a timer, a select and a deadline per request and a hand-off through its own goroutines, three
// quarters of our client's CPU in make bench-client. Here a request is one write by the caller
// and one wake-up by the connection's reader; deadlines are kept by one watchdog per connection.
//
// Everything else (schema, topology, retries over nodes, a client that must ride through a
// rolling restart) stays with gocql, which does it well.
package cqlwire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Opcodes of protocol v4 (native_protocol_v4.spec, section 2.4).
const (
	opError         byte = 0x00
	opStartup       byte = 0x01
	opReady         byte = 0x02
	opAuthenticate  byte = 0x03
	opResult        byte = 0x08
	opPrepare       byte = 0x09
	opExecute       byte = 0x0A
	opAuthChallenge byte = 0x0E
	opAuthResponse  byte = 0x0F
	opAuthSuccess   byte = 0x10
)

const (
	version        = 0x04
	responseBit    = 0x80
	headerLen      = 9
	maxBody        = 256 << 20 // the protocol's own limit on a frame
	flagTracing    = 0x02
	flagPayload    = 0x04
	flagWarning    = 0x08
	resultVoid     = 0x0001
	resultRows     = 0x0002
	resultPrepared = 0x0004
	rowsGlobalSpec = 0x0001
	rowsMorePages  = 0x0002
	rowsNoMetadata = 0x0004
	execValues     = 0x01
	execSkipMeta   = 0x02
	execTimestamp  = 0x20
	codeUnprepared = 0x2500
)

// ServerError is an ERROR frame: Cassandra's code and message.
type ServerError struct {
	Code    int32
	Message string
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("cassandra error 0x%04x: %s", e.Code, e.Message)
}

var errShort = errors.New("cqlwire: frame body shorter than its contents")

// appendHeader starts a request frame; its stream is set when it is sent, and the body's
// length by finish.
func appendHeader(dst []byte, op byte) []byte {
	return append(dst, version, 0, 0, 0, op, 0, 0, 0, 0)
}

// finish sets the length of the frame that starts at dst[0].
func finish(frame []byte) []byte {
	binary.BigEndian.PutUint32(frame[5:headerLen], uint32(len(frame)-headerLen))
	return frame
}

type header struct {
	flags  byte
	stream int16
	op     byte
	length int
}

func parseHeader(b []byte) (header, error) {
	if b[0] != version|responseBit {
		return header{}, fmt.Errorf("cqlwire: the server answered with protocol byte 0x%02x, want 0x%02x (protocol v4)", b[0], version|responseBit)
	}
	n := binary.BigEndian.Uint32(b[5:9])
	if n > maxBody {
		return header{}, fmt.Errorf("cqlwire: a frame of %d bytes exceeds the protocol's 256 MiB", n)
	}
	return header{flags: b[1], stream: int16(binary.BigEndian.Uint16(b[2:4])), op: b[4], length: int(n)}, nil
}

func appendShort(dst []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(dst, v) }
func appendInt(dst []byte, v int32) []byte    { return binary.BigEndian.AppendUint32(dst, uint32(v)) }

func appendString(dst []byte, s string) []byte {
	return append(appendShort(dst, uint16(len(s))), s...)
}

func appendLongString(dst []byte, s string) []byte {
	return append(appendInt(dst, int32(len(s))), s...)
}

// appendBytes appends [bytes]: nil is the protocol's null (length -1).
func appendBytes(dst, v []byte) []byte {
	if v == nil {
		return appendInt(dst, -1)
	}
	return append(appendInt(dst, int32(len(v))), v...)
}

func appendStringMap(dst []byte, m [][2]string) []byte {
	dst = appendShort(dst, uint16(len(m)))
	for _, kv := range m {
		dst = appendString(appendString(dst, kv[0]), kv[1])
	}
	return dst
}

// reader takes a response body apart; the first short read sets err and every later read
// returns zero values, so a parser checks err once at its end.
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		r.err = errShort
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) short() int {
	b := r.take(2)
	if b == nil {
		return 0
	}
	return int(binary.BigEndian.Uint16(b))
}

func (r *reader) int() int32 {
	b := r.take(4)
	if b == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}

func (r *reader) string() string { return string(r.take(r.short())) }

// bytes reads [bytes]: nil for the protocol's null.
func (r *reader) bytes() []byte {
	n := r.int()
	if n < 0 || r.err != nil {
		return nil
	}
	return r.take(int(n))
}

func (r *reader) shortBytes() []byte { return r.take(r.short()) }

func (r *reader) stringList() {
	for n := r.short(); n > 0 && r.err == nil; n-- {
		r.take(r.short())
	}
}

// option skips a column type ([option], section 4.2.5.2), recursing into collections, UDTs and
// tuples.
func (r *reader) option() {
	switch id := r.short(); id {
	case 0x0000: // custom: its Java class
		r.take(r.short())
	case 0x0020, 0x0022: // list, set
		r.option()
	case 0x0021: // map
		r.option()
		r.option()
	case 0x0030: // UDT
		r.take(r.short())
		r.take(r.short())
		for n := r.short(); n > 0 && r.err == nil; n-- {
			r.take(r.short())
			r.option()
		}
	case 0x0031: // tuple
		for n := r.short(); n > 0 && r.err == nil; n-- {
			r.option()
		}
	}
}

// skipPreamble skips what a response's flags put before its body: a tracing id, warnings and a
// custom payload.
func (r *reader) skipPreamble(flags byte) {
	if flags&flagTracing != 0 {
		r.take(16)
	}
	if flags&flagWarning != 0 {
		r.stringList()
	}
	if flags&flagPayload != 0 {
		for n := r.short(); n > 0 && r.err == nil; n-- {
			r.take(r.short())
			r.bytes()
		}
	}
}

// serverError reads an ERROR body.
func serverError(body []byte) error {
	r := reader{b: body}
	e := &ServerError{Code: r.int(), Message: r.string()}
	if r.err != nil {
		return fmt.Errorf("cqlwire: malformed ERROR frame: %w", r.err)
	}
	return e
}

// columns reads a metadata's flags, column count and column specs (rows metadata; section
// 4.2.5.2), returning the count.
func (r *reader) columns(pkIndices bool) int {
	flags := r.int()
	n := int(r.int())
	if pkIndices {
		for k := r.int(); k > 0 && r.err == nil; k-- {
			r.short()
		}
	}
	if flags&rowsMorePages != 0 {
		r.bytes()
	}
	if flags&rowsNoMetadata != 0 {
		return n
	}
	if flags&rowsGlobalSpec != 0 {
		r.string()
		r.string()
	}
	for i := 0; i < n && r.err == nil; i++ {
		if flags&rowsGlobalSpec == 0 {
			r.take(r.short())
			r.take(r.short())
		}
		r.take(r.short())
		r.option()
	}
	return n
}
