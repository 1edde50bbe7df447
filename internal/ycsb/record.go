package ycsb

import (
	"math/rand/v2"
	"strconv"
)

// FieldName is YCSB's column name for field i ("field" + i).
func FieldName(i int) string { return "field" + strconv.Itoa(i) }

// FillValue writes a field value as YCSB's RandomByteIterator does: printable ASCII from six
// masks over each random 32-bit word. The masks keep YCSB's value entropy, which is what a
// compressing or encrypting store sees.
func FillValue(r *rand.Rand, buf []byte) {
	for i := 0; i < len(buf); i += 6 {
		w := r.Uint32()
		for j, shift := range [6]struct{ by, mask uint32 }{{0, 31}, {5, 63}, {10, 95}, {15, 31}, {20, 63}, {25, 95}} {
			if i+j == len(buf) {
				break
			}
			buf[i+j] = byte((w>>shift.by)&shift.mask) + ' '
		}
	}
}

// Field draws the field an update writes (YCSB's fieldchooser, uniform over the fields).
func (c *Chooser) Field(r *rand.Rand) int { return int(r.Int64N(int64(c.w.FieldCount))) }

// ScanLength draws how many records a scan reads: uniform in [1, maxscanlength], YCSB's
// default scanlengthdistribution.
func (c *Chooser) ScanLength(r *rand.Rand) int { return 1 + int(r.Int64N(c.w.MaxScanLength)) }

// InsertKey takes the key number of a run-phase insert; Inserted must follow once it is
// stored, so reads may choose it.
func (c *Chooser) InsertKey() int64 { return c.inserts.Next() }

// Inserted acknowledges a run-phase insert.
func (c *Chooser) Inserted(keynum int64) { c.inserts.Acknowledge(keynum) }
