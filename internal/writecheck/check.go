package writecheck

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"secured.dev/operator/internal/benchresult"
	"secured.dev/operator/internal/ycsb"
)

// ReadFunc reads a record's fields: nil when no record has the key, a nil field when the field
// holds nothing.
type ReadFunc func(ctx context.Context, key int64) ([][]byte, error)

// Checker reads back what a history says must be there.
type Checker struct {
	Read ReadFunc
	// Name turns a key number into the record's key, as the writes sealed it.
	Name func(int64) string
	// Consistency the reads use, for the report.
	Consistency string
	// Workers reading in parallel; 8 when zero.
	Workers int
	// Attempts per record before its fields count as unreadable; 3 when zero.
	Attempts int
}

type keyField struct {
	key   int64
	field int32
}

type stamped struct {
	stamp int64
	tag   uint64
}

// expectation is what a key-field must hold: its latest acknowledged write (more than one tag
// only when writes tie on the timestamp, which the datastore breaks its own way), or one of
// the unacknowledged writes at least as recent, which may have landed.
type expectation struct {
	acked   bool
	stamp   int64
	tags    []uint64
	unacked []stamped
}

type outcome int

const (
	verified outcome = iota
	lost
	stale
	corrupted
	unreadable
	unknownValue // a sealed value that is not what is expected: stale or lost, the history says which
)

type verdict struct {
	kf      keyField
	outcome outcome
	tag     uint64
	why     string
}

// Check reads the history at path, reads back every key-field with an acknowledged write and
// judges it. Values never appear in the result; keys and timestamps do.
func (c Checker) Check(ctx context.Context, path string) (benchresult.Writes, error) {
	out := benchresult.Writes{Consistency: c.Consistency}
	want := map[keyField]*expectation{}
	err := Each(path, func(e Entry) {
		kf := keyField{e.Key, e.Field}
		x := want[kf]
		if x == nil {
			x = &expectation{}
			want[kf] = x
		}
		if !e.Acked {
			x.unacked = append(x.unacked, stamped{e.Stamp, e.Tag})
			return
		}
		out.Acknowledged++
		switch {
		case !x.acked || e.Stamp > x.stamp:
			x.acked, x.stamp, x.tags = true, e.Stamp, append(x.tags[:0], e.Tag)
		case e.Stamp == x.stamp:
			x.tags = append(x.tags, e.Tag)
		}
	})
	if err != nil {
		return out, err
	}
	fields := map[int64][]int32{}
	for kf, x := range want {
		if !x.acked {
			delete(want, kf) // nothing was promised
			continue
		}
		x.unacked = slices.DeleteFunc(x.unacked, func(s stamped) bool { return s.stamp < x.stamp })
		fields[kf.key] = append(fields[kf.key], kf.field)
	}
	out.Checked = int64(len(want))
	keys := slices.Sorted(maps.Keys(fields))
	verdicts := c.readAll(ctx, keys, fields, want)

	// A value that is not the expected one but carries a valid seal: an older write of this
	// history (stale), or one from before it (lost).
	olders := map[keyField]uint64{}
	for _, v := range verdicts {
		if v.outcome == unknownValue {
			olders[v.kf] = v.tag
		}
	}
	found := map[keyField]int64{}
	if len(olders) > 0 {
		if err := Each(path, func(e Entry) {
			kf := keyField{e.Key, e.Field}
			if tag, ok := olders[kf]; ok && tag == e.Tag && e.Stamp < want[kf].stamp {
				found[kf] = e.Stamp
			}
		}); err != nil {
			return out, err
		}
	}
	for i := range verdicts {
		v := &verdicts[i]
		x := want[v.kf]
		if v.outcome == unknownValue {
			if at, ok := found[v.kf]; ok {
				v.outcome, v.why = stale, fmt.Sprintf("holds the value written at %s, older than the write acknowledged at %s", when(at), when(x.stamp))
			} else {
				v.outcome, v.why = lost, fmt.Sprintf("the write acknowledged at %s is not there, and neither is any later one: it holds a value from before this history", when(x.stamp))
			}
		}
		switch v.outcome {
		case verified:
			out.Verified++
		case lost:
			out.Lost++
		case stale:
			out.Stale++
		case corrupted:
			out.Corrupted++
		case unreadable:
			out.Unreadable++
		}
		if v.outcome != verified && out.FirstProblem == "" {
			out.FirstProblem = fmt.Sprintf("%s %s: %s", c.Name(v.kf.key), ycsb.FieldName(int(v.kf.field)), v.why)
		}
	}
	return out, ctx.Err()
}

// readAll reads every key once, in parallel, and returns a verdict per key-field in key and
// field order, so the first problem reported does not depend on scheduling.
func (c Checker) readAll(ctx context.Context, keys []int64, fields map[int64][]int32, want map[keyField]*expectation) []verdict {
	perKey := make([][]verdict, len(keys))
	next := make(chan int)
	var wg sync.WaitGroup
	for range cmp.Or(c.Workers, 8) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				perKey[i] = c.judge(ctx, keys[i], fields[keys[i]], want)
			}
		}()
	}
	for i := range keys {
		next <- i
	}
	close(next)
	wg.Wait()
	var all []verdict
	for _, vs := range perKey {
		all = append(all, vs...)
	}
	return all
}

func (c Checker) judge(ctx context.Context, key int64, fields []int32, want map[keyField]*expectation) []verdict {
	slices.Sort(fields)
	out := make([]verdict, len(fields))
	row, err := c.read(ctx, key)
	for i, f := range fields {
		kf := keyField{key, f}
		v := verdict{kf: kf}
		switch x := want[kf]; {
		case err != nil:
			v.outcome, v.why = unreadable, fmt.Sprintf("unreadable at %s: %v", c.Consistency, err)
		case row == nil:
			v.outcome, v.why = lost, fmt.Sprintf("the write acknowledged at %s is not there: no record has the key", when(x.stamp))
		case int(f) >= len(row) || row[f] == nil:
			v.outcome, v.why = lost, fmt.Sprintf("the write acknowledged at %s is not there: the field is empty", when(x.stamp))
		default:
			tag, ok := Unseal(c.Name(key), int(f), row[f])
			switch {
			case !ok:
				v.outcome, v.why = corrupted, "the value's seal does not match its key, field and content"
			case slices.Contains(x.tags, tag) || slices.ContainsFunc(x.unacked, func(s stamped) bool { return s.tag == tag }):
				v.outcome = verified
			default:
				v.outcome, v.tag = unknownValue, tag
			}
		}
		out[i] = v
	}
	return out
}

// read retries a failed read: a node that restarted a moment ago is not a lost write.
func (c Checker) read(ctx context.Context, key int64) ([][]byte, error) {
	var err error
	for attempt := range cmp.Or(c.Attempts, 3) {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(attempt) * 500 * time.Millisecond):
			}
		}
		var row [][]byte
		if row, err = c.Read(ctx, key); err == nil {
			return row, nil
		}
	}
	return nil, err
}

func when(stamp int64) string {
	return time.UnixMicro(stamp).UTC().Format("2006-01-02T15:04:05.000000Z")
}
