package cqlbench

import (
	"encoding/base64"
	"fmt"
	"strconv"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"secured.dev/operator/pkg/fieldcrypt"
)

// ClientSide encrypts and signs fields in the client, as an application using fieldcrypt
// would: the first Fields fields of every record (field0 on), each bound to its keyspace, table,
// key and column. The usertable's columns are varchar, so envelopes are stored in base64.
type ClientSide struct {
	Codec  *fieldcrypt.Codec
	Fields int
}

// cellCrypt is one client's buffers for sealing and opening, reused between operations.
type cellCrypt struct {
	cs     ClientSide
	prefix string // "<keyspace>.<table>/"
	ctx    []byte
	env    []byte
	plain  []byte
	text   [][]byte // per field: the base64 envelope bound for the statement
}

func newCellCrypt(cs ClientSide, table string, fields int) *cellCrypt {
	return &cellCrypt{cs: cs, prefix: table + "/", text: make([][]byte, fields)}
}

// appendContext appends a cell's binding: keyspace.table/key/fieldN.
func appendContext[K string | []byte](dst []byte, prefix string, key K, field int) []byte {
	return strconv.AppendInt(append(append(append(dst, prefix...), key...), "/field"...), int64(field), 10)
}

// seal returns what the statement binds for field of key: value itself when the field is not
// encrypted, its envelope in base64 otherwise (valid until the next seal of that field).
func (c *cellCrypt) seal(key string, field int, value []byte) ([]byte, error) {
	if field >= c.cs.Fields {
		return value, nil
	}
	c.ctx = appendContext(c.ctx[:0], c.prefix, key, field)
	var err error
	if c.env, err = c.cs.Codec.Seal(c.env[:0], value, c.ctx); err != nil {
		return nil, err
	}
	n := base64.RawStdEncoding.EncodedLen(len(c.env))
	if cap(c.text[field]) < n {
		c.text[field] = make([]byte, n)
	}
	t := c.text[field][:n]
	base64.RawStdEncoding.Encode(t, c.env)
	return t, nil
}

// open checks and decrypts what a read returned for field of key (nil when the column was
// empty). The value is valid until the next open.
func (c *cellCrypt) open(key []byte, field int, data []byte) ([]byte, error) {
	if field >= c.cs.Fields || data == nil {
		return data, nil
	}
	n := base64.RawStdEncoding.DecodedLen(len(data))
	if cap(c.env) < n {
		c.env = make([]byte, n)
	}
	n, err := base64.RawStdEncoding.Decode(c.env[:n], data)
	if err != nil {
		return nil, fmt.Errorf("%w: field%d of %q is not base64: %v", fieldcrypt.ErrOpen, field, key, err)
	}
	c.ctx = appendContext(c.ctx[:0], c.prefix, key, field)
	if c.plain, err = c.cs.Codec.Open(c.plain[:0], c.env[:n], c.ctx); err != nil {
		return nil, fmt.Errorf("field%d of %q: %w", field, key, err)
	}
	return c.plain, nil
}

// sealedColumn takes a column of a read off the wire and opens it when the field is
// encrypted: a value that does not open fails the read. Column 0 is the key, which the
// fields after it are bound to.
type sealedColumn struct {
	c     *cellCrypt
	key   *[]byte
	field int // -1 for the key column
}

func (r *sealedColumn) UnmarshalCQL(_ gocql.TypeInfo, data []byte) error {
	if r.field < 0 {
		*r.key = append((*r.key)[:0], data...)
		return nil
	}
	_, err := r.c.open(*r.key, r.field, data)
	return err
}
