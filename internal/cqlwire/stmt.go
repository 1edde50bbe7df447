package cqlwire

import (
	"context"
	"fmt"
)

// Prepared is a statement prepared on a connection.
type Prepared struct {
	Query string
	id    []byte
	// Params is how many values the statement binds, Columns how many its rows hold.
	Params, Columns int
}

// Prepare prepares query on the connection.
func (c *Conn) Prepare(ctx context.Context, query string) (*Prepared, error) {
	resp, err := c.roundTrip(ctx, finish(appendLongString(appendHeader(nil, opPrepare), query)))
	if err != nil {
		return nil, fmt.Errorf("preparing %q: %w", query, err)
	}
	defer resp.release()
	r := reader{b: resp.body}
	if kind := r.int(); resp.op != opResult || kind != resultPrepared {
		return nil, fmt.Errorf("preparing %q: the server answered opcode 0x%02x, result kind %d", query, resp.op, kind)
	}
	p := &Prepared{Query: query, id: append([]byte(nil), r.shortBytes()...)}
	p.Params = r.columns(true)
	p.Columns = r.columns(false)
	if r.err != nil {
		return nil, fmt.Errorf("preparing %q: %w", query, r.err)
	}
	return p, nil
}

// Request is one execution of a prepared statement; Frame is the caller's buffer, reused
// between requests.
type Request struct {
	Consistency uint16
	// Timestamp of a write in microseconds; 0 sends none, and the coordinator stamps it.
	Timestamp int64
	Values    [][]byte
	Frame     []byte
	row       [][]byte
}

// Execute runs the statement and passes each row's columns to row (nil for a statement
// without rows), returning the number of rows. The columns are valid only during the call.
// A node that no longer knows the statement answers a *ServerError with code 0x2500 (Pool
// prepares it again).
func (c *Conn) Execute(ctx context.Context, p *Prepared, q *Request, row func([][]byte) error) (int, error) {
	if len(q.Values) != p.Params {
		return 0, fmt.Errorf("%q binds %d values, got %d", p.Query, p.Params, len(q.Values))
	}
	f := appendHeader(q.Frame[:0], opExecute)
	f = append(appendShort(f, uint16(len(p.id))), p.id...)
	flags := byte(execValues | execSkipMeta)
	if q.Timestamp != 0 {
		flags |= execTimestamp
	}
	f = append(appendShort(f, q.Consistency), flags)
	f = appendShort(f, uint16(len(q.Values)))
	for _, v := range q.Values {
		f = appendBytes(f, v)
	}
	if q.Timestamp != 0 {
		f = appendInt(appendInt(f, int32(q.Timestamp>>32)), int32(q.Timestamp))
	}
	q.Frame = finish(f)
	resp, err := c.roundTrip(ctx, q.Frame)
	if err != nil {
		return 0, err
	}
	defer resp.release()
	r := reader{b: resp.body}
	kind := r.int()
	switch {
	case resp.op != opResult:
		return 0, fmt.Errorf("EXECUTE answered with opcode 0x%02x", resp.op)
	case kind == resultVoid || row == nil:
		return 0, r.err
	case kind != resultRows:
		return 0, fmt.Errorf("EXECUTE answered with result kind %d", kind)
	}
	cols := r.columns(false)
	rows := int(r.int())
	if r.err != nil || cols != p.Columns {
		return 0, fmt.Errorf("rows of %q: %d columns (want %d): %v", p.Query, cols, p.Columns, r.err)
	}
	for range rows {
		q.row = q.row[:0]
		for range cols {
			q.row = append(q.row, r.bytes())
		}
		if r.err != nil {
			return 0, fmt.Errorf("rows of %q: %w", p.Query, r.err)
		}
		if err := row(q.row); err != nil {
			return 0, err
		}
	}
	return rows, nil
}
