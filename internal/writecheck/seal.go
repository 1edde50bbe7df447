// Package writecheck is the benchmark clients' history checker, Jepsen's idea at YCSB's scale:
// every write a client attempts goes to a history file as it completes (the record's key
// number, the field, the write's timestamp, a tag of its value, whether the datastore
// acknowledged it), and after the run every key-field whose latest write was acknowledged is
// read back and judged: verified, lost, stale or corrupted.
//
// Values are sealed: their last TagLen bytes are a hash of the key, the field and the rest of
// the value, in hex, so a read can tell a value some write produced from damaged bytes without
// keeping values, and the tag identifies the write in the history.
package writecheck

import "fmt"

// TagLen is the seal's length at the end of a value: 16 hex digits.
const TagLen = 16

// MinValueLen is the shortest value that can be sealed and still carry random content.
const MinValueLen = 2 * TagLen

const hexDigits = "0123456789abcdef"

// Seal writes the tag of key, field and v's content into v's last TagLen bytes and returns it.
// v holds at least MinValueLen bytes (CheckLength says so at configuration time).
func Seal(key string, field int, v []byte) uint64 {
	n := len(v) - TagLen
	t := tag(key, field, v[:n])
	for i := range TagLen {
		v[n+i] = hexDigits[(t>>(60-4*i))&0xf]
	}
	return t
}

// Unseal returns the tag a sealed value carries; false when the value is too short, its seal
// is not hex, or the seal does not match the key, the field and the content.
func Unseal(key string, field int, v []byte) (uint64, bool) {
	n := len(v) - TagLen
	if n < 0 {
		return 0, false
	}
	var t uint64
	for _, c := range v[n:] {
		switch {
		case c >= '0' && c <= '9':
			t = t<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			t = t<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return t, t == tag(key, field, v[:n])
}

// CheckLength refuses a field length too short to seal.
func CheckLength(fieldLength int) error {
	if fieldLength < MinValueLen {
		return fmt.Errorf("fieldLength %d: recording writes seals every value in its last %d bytes; give at least %d", fieldLength, TagLen, MinValueLen)
	}
	return nil
}

// tag is FNV-1a over the key, a separator, the field and the content: no allocation on the
// client's hot path.
func tag(key string, field int, content []byte) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := range len(key) {
		h = (h ^ uint64(key[i])) * prime
	}
	for _, b := range [3]byte{0xff, byte(field), byte(field >> 8)} {
		h = (h ^ uint64(b)) * prime
	}
	for _, b := range content {
		h = (h ^ uint64(b)) * prime
	}
	return h
}
