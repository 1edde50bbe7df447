package writecheck

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// Entry is one attempted write of one field.
type Entry struct {
	// Key is the record's key number (the workload names it).
	Key   int64
	Field int32
	// Stamp is the write's timestamp in microseconds, fixed by the client for every attempt,
	// so the datastore's last-write-wins order is the history's.
	Stamp int64
	Tag   uint64
	// Acked: the datastore acknowledged the write. An unacknowledged one (failed, timed out,
	// interrupted) may or may not have landed.
	Acked bool
}

// entrySize is an Entry on disk: key, stamp, tag (8 bytes each), field, acknowledged (4 each).
const entrySize = 32

func (e Entry) put(b []byte) {
	binary.LittleEndian.PutUint64(b[0:], uint64(e.Key))
	binary.LittleEndian.PutUint64(b[8:], uint64(e.Stamp))
	binary.LittleEndian.PutUint64(b[16:], e.Tag)
	binary.LittleEndian.PutUint32(b[24:], uint32(e.Field))
	var acked uint32
	if e.Acked {
		acked = 1
	}
	binary.LittleEndian.PutUint32(b[28:], acked)
}

func entryOf(b []byte) Entry {
	return Entry{
		Key:   int64(binary.LittleEndian.Uint64(b[0:])),
		Stamp: int64(binary.LittleEndian.Uint64(b[8:])),
		Tag:   binary.LittleEndian.Uint64(b[16:]),
		Field: int32(binary.LittleEndian.Uint32(b[24:])),
		Acked: binary.LittleEndian.Uint32(b[28:]) == 1,
	}
}

// History appends entries to a file from many goroutines. The file is the memory: a run of any
// length keeps only a buffer in the process.
type History struct {
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	buf [entrySize]byte
	err error
}

// Create opens path for appending (a later phase adds to an earlier one's history).
func Create(path string) (*History, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("write history: %w", err)
	}
	return &History{f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

// Record appends one entry. The first failure stops recording; Close returns it.
func (h *History) Record(e Entry) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.f == nil || h.err != nil {
		return
	}
	e.put(h.buf[:])
	if _, err := h.w.Write(h.buf[:]); err != nil {
		h.err = fmt.Errorf("write history: %w", err)
	}
}

// Close flushes the history; Record does nothing after it.
func (h *History) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.f == nil {
		return nil
	}
	err := h.err
	if flushed := errors.Join(h.w.Flush(), h.f.Close()); flushed != nil {
		err = errors.Join(err, fmt.Errorf("write history: %w", flushed))
	}
	h.f = nil
	return err
}

// Each calls fn with every entry of the file, in the order they were recorded.
func Each(path string, fn func(Entry)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var b [entrySize]byte
	for {
		switch _, err := io.ReadFull(r, b[:]); {
		case err == io.EOF:
			return nil
		case err != nil:
			return fmt.Errorf("write history %s: %w (a truncated entry: the writer did not close it)", path, err)
		}
		fn(entryOf(b[:]))
	}
}
