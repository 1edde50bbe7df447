// Package cqlbench is the YCSB CQL binding of the benchmark: YCSB's usertable schema and its
// read, scan, insert and update statements, prepared once and run through gocql, over
// plaintext or a TLS session pinned to one protocol and suite. It speaks the same table as
// YCSB's cassandra-cql binding, so data loaded by one is read by the other.
package cqlbench

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"secured.dev/operator/internal/crypto"
	"secured.dev/operator/internal/pintls"
	"secured.dev/operator/internal/rawsock"
	"secured.dev/operator/internal/ycsb"
)

// DefaultPort is Cassandra's native transport port.
const DefaultPort = 9042

// Options say where and how to connect.
type Options struct {
	// Hosts are host or host:port (DefaultPort when omitted).
	Hosts []string
	// Keyspace holding the records' table; "ycsb" when empty.
	Keyspace string
	// Table of the records; YCSB's "usertable" when empty. Workloads of different record
	// shapes against one cluster need tables of their own.
	Table string
	// Consistency of reads and writes; YCSB's default, ONE, when zero.
	Consistency gocql.Consistency
	// TLS pins the session; nil is plaintext.
	TLS *TLS
	// Timeout of one request; 10 s when zero.
	Timeout time.Duration
	// ConnectionsPerHost; 2 when zero (each multiplexes many requests).
	ConnectionsPerHost int
	// FieldCount of the records (YCSB fieldcount).
	FieldCount int
	// PlaintextFallback: with TLS, a node that answers the ClientHello with something other
	// than TLS (its client encryption is Disabled) is connected to in plaintext. For a client
	// that must keep working while a live cluster moves from Disabled through Optional to
	// Required; never for a measurement, which must run over exactly the pinned session.
	PlaintextFallback bool
	// Login of a cluster with PasswordAuthenticator; nil connects without one.
	Login *Login
	// ClientSide encrypts and signs fields in the client; nil stores them as they are.
	ClientSide *ClientSide
	// Retries of a failed statement: on the next node at once, and, when every node failed,
	// on all of them again after a pause that doubles from 100 ms to 2 s, up to Retries times
	// each. 0 fails at once, as a benchmark wants (it counts the failure). Every YCSB statement
	// is a read or an upsert, so a retry is safe.
	Retries int
}

// CertificateLogin answers the challenge of Cassandra's MutualTlsAuthenticator, which asks
// for a response and ignores it: the client certificate is the login.
type CertificateLogin struct{}

func (CertificateLogin) Challenge([]byte) ([]byte, gocql.Authenticator, error) {
	return []byte{}, nil, nil
}
func (CertificateLogin) Success([]byte) error { return nil }

// presentsCertificate says whether the session logs in with its client certificate.
func presentsCertificate(o Options) bool {
	return o.TLS != nil && (len(o.TLS.Config.Certificates) > 0 || o.TLS.Config.GetClientCertificate != nil)
}

// Login is a CQL role's name and password.
type Login struct{ Username, Password string }

// ReadLogin reads a login from a directory holding a Secret's username and password keys (the
// Secret mounted as a volume), so that a password never passes through arguments or scripts.
func ReadLogin(dir string) (*Login, error) {
	var l [2]string
	for i, key := range []string{"username", "password"} {
		b, err := os.ReadFile(filepath.Join(dir, key))
		if err != nil {
			return nil, fmt.Errorf("reading the login: %w (mount the datastore's login Secret there)", err)
		}
		if l[i] = strings.TrimRight(string(b), "\r\n"); l[i] == "" {
			return nil, fmt.Errorf("reading the login: %s/%s is empty", dir, key)
		}
	}
	return &Login{Username: l[0], Password: l[1]}, nil
}

// TLS is the pinned session and its trust.
type TLS struct {
	Pin pintls.Pin
	// Config carries RootCAs and ServerName; its versions and suites are replaced by the pin.
	Config *tls.Config
}

// identifier: a CQL name that needs no quotes, as YCSB's keyspace and table are.
var identifier = regexp.MustCompile(`^[a-z][a-z0-9_]{0,47}$`)

// ErrNotFound is a read of a key with no record: YCSB counts it as a failed read.
var ErrNotFound = errors.New("no record with this key")

// Store runs YCSB operations against one Cassandra cluster.
type Store struct {
	session    *gocql.Session
	wire       *wire // nil when the operations go through gocql
	dialer     *dialer
	ks         string
	table      string // keyspace.table
	fields     int
	retries    int
	clientSide *ClientSide

	read, scan, insert, record string
	update                     []string
}

// Open connects. A TLS session the server negotiates with another protocol or suite than the
// pin is refused here, with the server's choice in the error.
func Open(o Options) (*Store, error) {
	if len(o.Hosts) == 0 {
		return nil, errors.New("no Cassandra hosts: give at least one host or host:port")
	}
	if o.FieldCount < 1 {
		return nil, fmt.Errorf("fieldCount %d: a record has at least one field", o.FieldCount)
	}
	hosts := make([]string, len(o.Hosts))
	for i, h := range o.Hosts {
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(h, strconv.Itoa(DefaultPort))
		}
		hosts[i] = h
	}
	c := gocql.NewCluster(hosts...)
	c.ProtoVersion = 4
	c.Consistency = gocql.One
	if o.Consistency != 0 {
		c.Consistency = o.Consistency
	}
	c.Timeout, c.ConnectTimeout = 10*time.Second, 10*time.Second
	if o.Timeout > 0 {
		c.Timeout, c.ConnectTimeout = o.Timeout, o.Timeout
	}
	if o.ConnectionsPerHost > 0 {
		c.NumConns = o.ConnectionsPerHost
	}
	// No write coalescing, on any connection. gocql coalesces only connections it does not
	// wrap in TLS, so plaintext and TLS sessions wrote through different paths, and a TLS
	// overhead measured between them carried that difference too. The coalescer (a flusher
	// goroutine, a 200 µs timer and a hand-off per request) also cost more than it saved: at
	// maximum throughput our client did 32,000 operations per CPU-second in plaintext and
	// 53,000 over TLS, which does not coalesce (make bench-client).
	c.WriteCoalesceWaitTime = 0
	switch {
	case o.Login != nil:
		c.Authenticator = gocql.PasswordAuthenticator{Username: o.Login.Username, Password: o.Login.Password}
	case presentsCertificate(o):
		c.Authenticator = CertificateLogin{}
	}
	if o.Retries > 0 {
		c.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: o.Retries}
		c.DefaultIdempotence = true
		// gocql learns that a node is back from an event on its one control connection, and
		// otherwise tries nodes it holds down once a minute. A rolling restart can take the
		// control connection's node while another comes back, and then the session has no
		// node to send to for up to a minute, although two of three are up. Drivers meant for
		// rolling restarts (the Java driver's exponential policy) retry from the first second.
		c.ReconnectInterval = time.Second
	}
	s := &Store{ks: o.Keyspace, fields: o.FieldCount, retries: o.Retries, clientSide: o.ClientSide}
	if cs := o.ClientSide; cs != nil && (cs.Codec == nil || cs.Fields < 1 || cs.Fields > o.FieldCount) {
		return nil, fmt.Errorf("client-side encryption of %d fields: give a codec and from 1 to fieldCount (%d) fields", cs.Fields, o.FieldCount)
	}
	s.ks = cmp.Or(s.ks, "ycsb")
	table := cmp.Or(o.Table, "usertable")
	// Both reach CQL statements as text: identifiers that need no quoting, or nothing.
	for _, id := range []struct{ what, name string }{{"keyspace", s.ks}, {"table", table}} {
		if !identifier.MatchString(id.name) {
			return nil, fmt.Errorf("%s %q: give a CQL name of a lower-case letter, then lower-case letters, digits or '_' (at most 48 characters)", id.what, id.name)
		}
	}
	s.table = s.ks + "." + table
	s.dialer = &dialer{plain: net.Dialer{Timeout: c.ConnectTimeout, KeepAlive: c.SocketKeepalive}, fallback: o.PlaintextFallback}
	if o.TLS != nil {
		cfg := o.TLS.Config
		if cfg == nil {
			cfg = &tls.Config{}
		}
		s.dialer.pinned = &pintls.HostDialer{Pin: o.TLS.Pin, TLS: cfg, Dialer: net.Dialer{Timeout: c.ConnectTimeout}, Transport: rawsock.Conn}
	}
	c.HostDialer = s.dialer
	var err error
	if s.session, err = c.CreateSession(); err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", strings.Join(hosts, ","), err)
	}
	s.prepareStatements()
	if wanted(o) {
		if err := s.openWire(c.Consistency, c.Timeout, c.NumConns, o); err != nil {
			s.session.Close()
			return nil, fmt.Errorf("connecting to %s: %w", strings.Join(hosts, ","), err)
		}
	}
	return s, nil
}

func (s *Store) prepareStatements() {
	table := s.table
	cols, marks := []string{"y_id"}, []string{"?"}
	for i := range s.fields {
		cols, marks = append(cols, ycsb.FieldName(i)), append(marks, "?")
	}
	// YCSB's binding reads with *, which returns the fields in the order of their names
	// (field10 before field2); opening envelopes needs each column's field, so client-side
	// encryption names them.
	all := "*"
	if s.clientSide != nil {
		all = strings.Join(cols, ", ")
	}
	s.read = "SELECT " + all + " FROM " + table + " WHERE y_id = ? LIMIT 1"
	s.record = "SELECT " + strings.Join(cols[1:], ", ") + " FROM " + table + " WHERE y_id = ?"
	s.scan = "SELECT " + all + " FROM " + table + " WHERE token(y_id) >= token(?) LIMIT ?"
	s.insert = "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.Join(marks, ", ") + ")"
	s.update = make([]string, s.fields)
	for i := range s.fields {
		s.update[i] = "UPDATE " + table + " SET " + ycsb.FieldName(i) + " = ? WHERE y_id = ?"
	}
}

// schemaPatience: a schema change waits for the node to write its schema tables and for every
// node to agree, which on a fresh JVM sharing its cores with other warming nodes can outlast a
// request's timeout; the statements are IF NOT EXISTS, so CreateSchema tries them again (pausing
// as retrying does) for this long, a minute less than bench/k6/ycsb.js gives setup().
const schemaPatience = 2 * time.Minute

// CreateSchema creates the keyspace and the records' table if they do not exist, with the given
// replication factor (SimpleStrategy, as YCSB's documentation does). A keyspace that exists is
// left alone without asking: a benchmark role may use its keyspace but not create keyspaces,
// and Cassandra checks that right before it looks whether the keyspace exists.
func (s *Store) CreateSchema(ctx context.Context, replicationFactor int) error {
	fields := make([]string, s.fields)
	for i := range fields {
		fields[i] = ycsb.FieldName(i) + " varchar"
	}
	ctx, cancel := context.WithTimeout(ctx, schemaPatience)
	defer cancel()
	var stmts []string
	var found string
	noKeyspace := func(err error) bool { return errors.Is(err, gocql.ErrNotFound) || refused(err) }
	err := retrying(ctx, math.MaxInt, noKeyspace, func() error {
		return s.session.Query("SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?", s.ks).ScanContext(ctx, &found)
	})
	switch {
	case errors.Is(err, gocql.ErrNotFound):
		stmts = append(stmts, fmt.Sprintf("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': %d}", s.ks, replicationFactor))
	case err != nil:
		return fmt.Errorf("looking for keyspace %s: %w", s.ks, err)
	}
	stmts = append(stmts, fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (y_id varchar PRIMARY KEY, %s)", s.table, strings.Join(fields, ", ")))
	for _, stmt := range stmts {
		if err := retrying(ctx, math.MaxInt, refused, func() error { return s.session.Query(stmt).Consistency(gocql.All).ExecContext(ctx) }); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return nil
}

// Close closes the session.
func (s *Store) Close() {
	if s.wire != nil {
		s.wire.pool.Close()
	}
	s.session.Close()
}

// Negotiated is the session's protocol and suite ("plaintext", "none" without TLS, or with
// a fallback that has not opened a TLS connection yet).
func (s *Store) Negotiated() (protocol, suite string) {
	if s.dialer.pinned == nil {
		return "plaintext", "none"
	}
	p, ok := s.dialer.pinned.Negotiated()
	if !ok && s.dialer.fallback {
		return "plaintext", "none"
	}
	if !ok {
		p = s.dialer.pinned.Pin
	}
	cs, _ := crypto.LookupID(p.Suite)
	return crypto.ProtocolName(p.Version), cs.Name
}

// Coordinators are the nodes the measured operations go to, sorted; nil when gocql runs them.
func (s *Store) Coordinators() []string {
	if s.wire == nil {
		return nil
	}
	return slices.Sorted(slices.Values(s.wire.pool.Nodes()))
}

// Connections the session opened so far, by kind ("tls", "plaintext").
func (s *Store) Connections() map[string]int64 { return s.dialer.connections() }

// Client runs operations for one virtual user, reusing its buffers between them.
type Client struct {
	s    *Store
	args []any
	row  []any
	// One query per statement, bound anew for each operation: a gocql Query holds only the
	// statement, its options and the values, and one per operation was garbage.
	read, scan, insert *gocql.Query
	update             []*gocql.Query
	crypt              *cellCrypt // nil without client-side encryption
	key                []byte     // the key of the row being read, for crypt
	wire               wireClient
}

// Client returns a client; clients are not safe for concurrent use, the Store is.
func (s *Store) Client() *Client {
	c := &Client{s: s, args: make([]any, s.fields+1), row: make([]any, s.fields+1), update: make([]*gocql.Query, s.fields)}
	c.wire = wireClient{w: s.wire, onRow: countRow}
	if s.clientSide == nil {
		for i := range c.row {
			c.row[i] = &received{}
		}
		return c
	}
	c.crypt = newCellCrypt(*s.clientSide, s.table, s.fields)
	c.wire.onRow = c.openRow
	for i := range c.row {
		c.row[i] = &sealedColumn{c: c.crypt, key: &c.key, field: i - 1}
	}
	return c
}

// received takes a column off the wire without copying it: the benchmark reads every byte
// of every field (the frame is parsed and, over TLS, decrypted) but has no use for the value,
// and copying eleven columns per read cost the client a tenth of its CPU.
type received struct{ n int }

func (r *received) UnmarshalCQL(_ gocql.TypeInfo, data []byte) error {
	r.n = len(data)
	return nil
}

// Insert writes a whole record. A stamp (microseconds) fixes the write's timestamp for every
// attempt, so a history of writes knows the order the datastore keeps; 0 stamps it at sending.
func (c *Client) Insert(ctx context.Context, key string, values [][]byte, stamp int64) error {
	if c.s.wire != nil {
		return c.wireInsert(ctx, key, values, stamp)
	}
	c.args[0] = key
	for i, v := range values {
		if c.crypt == nil {
			c.args[i+1] = v
			continue
		}
		sealed, err := c.crypt.seal(key, i, v)
		if err != nil {
			return err
		}
		c.args[i+1] = sealed
	}
	return c.exec(ctx, c.query(&c.insert, c.s.insert, len(c.args)).WithTimestamp(stamp))
}

// Update writes one field, stamped as Insert is.
func (c *Client) Update(ctx context.Context, key string, field int, value []byte, stamp int64) error {
	if c.s.wire != nil {
		return c.wireUpdate(ctx, key, field, value, stamp)
	}
	c.args[0], c.args[1] = value, key
	if c.crypt != nil {
		sealed, err := c.crypt.seal(key, field, value)
		if err != nil {
			return err
		}
		c.args[0] = sealed
	}
	return c.exec(ctx, c.query(&c.update[field], c.s.update[field], 2).WithTimestamp(stamp))
}

// query is the client's query of stmt, bound to the first n of its arguments.
func (c *Client) query(q **gocql.Query, stmt string, n int) *gocql.Query {
	if *q == nil {
		*q = c.s.session.Query(stmt)
	}
	return (*q).Bind(c.args[:n]...)
}

func (c *Client) exec(ctx context.Context, q *gocql.Query) error {
	return retrying(ctx, c.s.retries, missing, func() error { return q.ExecContext(ctx) })
}

// Read reads every field of a record.
func (c *Client) Read(ctx context.Context, key string) error {
	var n int
	var err error
	if c.s.wire != nil {
		n, err = c.wireRead(ctx, key)
	} else {
		c.args[0] = key
		n, err = c.rows(ctx, c.query(&c.read, c.s.read, 1))
	}
	if err == nil && n == 0 {
		err = ErrNotFound
	}
	return err
}

// Record reads every field of a record at a consistency of its own (the history checker reads
// at the strongest): nil when no record has the key, a nil field when it holds nothing. With
// client-side encryption the fields are opened.
func (s *Store) Record(ctx context.Context, key string, consistency gocql.Consistency) ([][]byte, error) {
	fields := make([][]byte, s.fields)
	dest := make([]any, s.fields)
	for i := range fields {
		dest[i] = &fields[i]
	}
	err := s.session.Query(s.record, key).Consistency(consistency).ScanContext(ctx, dest...)
	if errors.Is(err, gocql.ErrNotFound) {
		return nil, nil
	}
	if err != nil || s.clientSide == nil {
		return fields, err
	}
	// A field that does not open is returned as stored: no write sealed those bytes, so the
	// checker counts it corrupted, as it does a value damaged without client-side encryption.
	crypt := newCellCrypt(*s.clientSide, s.table, s.fields)
	for i, f := range fields {
		if v, err := crypt.open([]byte(key), i, f); err == nil {
			fields[i] = bytes.Clone(v)
		}
	}
	return fields, nil
}

// Scan reads up to n records from key on, in token order, as YCSB's CQL binding does.
func (c *Client) Scan(ctx context.Context, key string, n int) error {
	if c.s.wire != nil {
		return c.wireScan(ctx, key, n)
	}
	c.args[0], c.args[1] = key, n
	_, err := c.rows(ctx, c.query(&c.scan, c.s.scan, 2))
	return err
}

func (c *Client) rows(ctx context.Context, q *gocql.Query) (int, error) {
	n := 0
	err := retrying(ctx, c.s.retries, missing, func() error {
		n = 0
		it := q.IterContext(ctx)
		for it.Scan(c.row...) {
			n++
		}
		return it.Close()
	})
	return n, err
}
