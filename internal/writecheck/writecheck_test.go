package writecheck

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"secured.dev/operator/internal/benchresult"
	"secured.dev/operator/internal/ycsb"
)

func name(k int64) string { return "user" + strconv.FormatInt(k, 10) }

func sealed(r *rand.Rand, key int64, field int) ([]byte, uint64) {
	v := make([]byte, 100)
	ycsb.FillValue(r, v)
	return v, Seal(name(key), field, v)
}

// A seal survives the trip and breaks when the content, the key, the field or the seal
// itself changes.
func TestASealBindsKeyFieldAndContent(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	v, tag := sealed(r, 7, 3)
	if got, ok := Unseal(name(7), 3, v); !ok || got != tag {
		t.Fatalf("Unseal = %x %v; want %x true", got, ok, tag)
	}
	for what, check := range map[string]func() bool{
		"another key":   func() bool { _, ok := Unseal(name(8), 3, v); return ok },
		"another field": func() bool { _, ok := Unseal(name(7), 4, v); return ok },
		"a flipped content byte": func() bool {
			w := append([]byte(nil), v...)
			w[10] ^= 1
			_, ok := Unseal(name(7), 3, w)
			return ok
		},
		"a seal that is not hex": func() bool {
			w := append([]byte(nil), v...)
			w[len(w)-1] = 'z'
			_, ok := Unseal(name(7), 3, w)
			return ok
		},
		"a truncated value": func() bool { _, ok := Unseal(name(7), 3, v[:10]); return ok },
	} {
		if check() {
			t.Errorf("%s: the seal still matches", what)
		}
	}
	if err := CheckLength(MinValueLen - 1); err == nil || !strings.Contains(err.Error(), "fieldLength") {
		t.Errorf("CheckLength(%d) = %v; want an error naming fieldLength", MinValueLen-1, err)
	}
	if err := CheckLength(100); err != nil {
		t.Error(err)
	}
}

// store is a datastore in memory: only the reading side of the checker is faked, and the
// history goes through a real file.
type store map[int64][][]byte

func (s store) read(_ context.Context, key int64) ([][]byte, error) {
	if key == 666 {
		return nil, errors.New("timed out")
	}
	return s[key], nil
}

// Each kind of damage is named for what it is, and nothing else is.
func TestTheCheckerNamesEveryKindOfDamage(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	path := filepath.Join(t.TempDir(), "history")
	h, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	db := store{}
	put := func(key int64, field int, v []byte) {
		if db[key] == nil {
			db[key] = make([][]byte, 2)
		}
		db[key][field] = v
	}
	write := func(key int64, field int, stamp int64, acked bool) []byte {
		v, tag := sealed(r, key, field)
		h.Record(Entry{Key: key, Field: int32(field), Stamp: stamp, Tag: tag, Acked: acked})
		return v
	}

	// key 1: the latest acknowledged value on field 0, an older one on field 1 (stale)
	write(1, 0, 10, true)
	put(1, 0, write(1, 0, 20, true))
	put(1, 1, write(1, 1, 10, true))
	write(1, 1, 20, true)
	// key 2: an unacknowledged later write that landed; a field whose acknowledged write is gone
	write(2, 0, 10, true)
	put(2, 0, write(2, 0, 30, false))
	write(2, 1, 10, true)
	put(2, 1, nil)
	// key 3: no record at all (two acknowledged fields lost)
	write(3, 0, 10, true)
	write(3, 1, 10, true)
	// key 4: a damaged value, and a sealed value this history never wrote (from before it)
	v := write(4, 0, 10, true)
	v[5] ^= 0x20
	put(4, 0, v)
	write(4, 1, 10, true)
	before, _ := sealed(r, 4, 1)
	put(4, 1, before)
	// key 5: only unacknowledged writes: nothing was promised
	write(5, 0, 10, false)
	// key 666: the read fails
	write(666, 0, 10, true)
	// key 7: an older acknowledged value came back after an unacknowledged one: stale
	put(7, 0, write(7, 0, 10, true))
	write(7, 0, 15, false)
	write(7, 0, 20, true)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	h.Record(Entry{Key: 9, Acked: true}) // after Close: nothing

	got, err := Checker{Read: db.read, Name: name, Consistency: "ALL", Attempts: 1}.Check(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	want := benchresult.Writes{Acknowledged: 13, Checked: 10, Verified: 2, Lost: 4, Stale: 2, Corrupted: 1, Unreadable: 1, Consistency: "ALL"}
	first := got.FirstProblem
	got.FirstProblem = ""
	if got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if !strings.HasPrefix(first, "user1 field1: holds the value written at 1970-01-01T00:00:00.000010Z, older than the write acknowledged at 1970-01-01T00:00:00.000020Z") {
		t.Errorf("first problem %q; want key 1's stale field, with both timestamps", first)
	}
	if got.Intact() || !(benchresult.Writes{Checked: 2, Verified: 2}).Intact() || (benchresult.Writes{}).Intact() {
		t.Error("Intact: only a check that found everything, and checked something, is intact")
	}
}

// A history that ends in the middle of an entry was not closed: the checker says so instead
// of judging half a history.
func TestATruncatedHistoryIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	h, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	h.Record(Entry{Key: 1, Stamp: 1, Acked: true})
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := Create(path) // appends
	if err != nil {
		t.Fatal(err)
	}
	f.w.WriteString("half")
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Checker{Read: store{}.read, Name: name}.Check(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("Check = %v; want a truncated history refused", err)
	}
}
