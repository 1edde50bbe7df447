// Package probe finds out what a TLS endpoint really accepts: which protocol versions, which
// cipher suites of the catalogue (each offered alone in its own ClientHello), whether it demands
// a client certificate, which certificate it presents, and whether it also answers plaintext.
// A configuration file is a claim; this is the wire.
package probe

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"time"

	"secured.dev/operator/internal/crypto"
)

// Plaintext says how to test whether an endpoint also accepts unencrypted clients.
type Plaintext int

const (
	// PlaintextSkip: do not test.
	PlaintextSkip Plaintext = iota
	// PlaintextCQL: send a CQL OPTIONS frame; a SUPPORTED answer means plaintext is accepted.
	PlaintextCQL
	// PlaintextGreeting: send a protocol's plaintext greeting (Options.Greeting) and wait. A
	// TLS-only server rejects the bytes at once, because they are no TLS record, and closes or
	// sends an alert; a server that also accepts plaintext waits for the rest of the greeting
	// or answers in its own protocol.
	PlaintextGreeting
)

// CassandraClient probes a Cassandra CQL port: plaintext tested with a CQL OPTIONS frame.
var CassandraClient = Options{Plaintext: PlaintextCQL}

// CassandraInternode probes a Cassandra storage port: plaintext tested with the internode
// handshake's opening bytes.
var CassandraInternode = Options{Plaintext: PlaintextGreeting, Greeting: CassandraInternodeGreeting}

// CassandraInternodeGreeting opens Cassandra's internode handshake: the messaging magic and
// flags announcing messaging version 12 (4.0), after which a plaintext listener expects more.
var CassandraInternodeGreeting = []byte{0xCA, 0x55, 0x2D, 0xFA, 0x00, 0x00, 0x0C, 0x00}

// HBaseRPC probes an HBase Master or RegionServer RPC port: plaintext tested with the RPC
// preamble ("HBas", version 0, SIMPLE authentication), after which a plaintext server waits
// for the connection header and a TLS-only one closes.
var HBaseRPC = Options{Plaintext: PlaintextGreeting, Greeting: []byte{'H', 'B', 'a', 's', 0x00, 0x50}}

// ZooKeeperClient probes a ZooKeeper client port: plaintext tested with the "ruok" command,
// which a plaintext listener answers with "imok" and a TLS-only one refuses as no TLS record.
// The newline makes it as long as a TLS record header: with four bytes, a TLS listener waits
// for the fifth, and its silence looked like a plaintext server's.
var ZooKeeperClient = Options{Plaintext: PlaintextGreeting, Greeting: []byte("ruok\n")}

// Options tune a scan.
type Options struct {
	// ServerName is sent as SNI and used for nothing else (certificates are reported, not verified).
	ServerName string
	// Timeout bounds each connection. Defaults to 2s.
	Timeout time.Duration
	// Plaintext selects the plaintext test.
	Plaintext Plaintext
	// Versions to try; defaults to TLS 1.0 through 1.3.
	Versions []uint16
	// Greeting for PlaintextGreeting.
	Greeting []byte
}

// Certificate summarises the leaf certificate an endpoint presented.
type Certificate struct {
	Subject, Issuer string
	DNSNames        []string
	NotAfter        time.Time
	Serial          string // tells a renewed certificate from its predecessor
}

// Result is what a scan observed.
type Result struct {
	Address string
	// Versions accepted, ascending.
	Versions []uint16
	// Suites accepted, by IANA code point, per version.
	Suites map[uint16][]uint16
	// ClientAuthRequired says whether the server refuses a client without a certificate; nil
	// when neither a full handshake nor a TLS 1.2 first flight could tell.
	ClientAuthRequired *bool
	// Certificate presented, leaf first (Chain) and summarised (Certificate), when a
	// handshake got that far.
	Certificate *Certificate
	Chain       []*x509.Certificate
	// PlaintextAccepted is nil when not tested.
	PlaintextAccepted *bool
	// Unanswered lists the protocol versions whose ClientHellos got no answer in time, even when
	// offered again: a silent endpoint refused nothing (a JVM starved of CPU is silent too), so
	// which suites it accepts at those versions is unknown, and Versions and Suites may lack some.
	Unanswered []uint16
	Duration   time.Duration
}

// SuiteNames lists every accepted suite's IANA name, across versions, without duplicates.
func (r Result) SuiteNames() []string {
	var out []string
	for _, v := range r.Versions {
		for _, id := range r.Suites[v] {
			s, ok := crypto.LookupID(id)
			name := s.Name
			if !ok {
				name = "0x" + hex16(id)
			}
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// VersionNames lists accepted versions in JSSE spelling.
func (r Result) VersionNames() []string { return versionNames(r.Versions) }

// UnansweredNames lists the versions whose ClientHellos got no answer, in JSSE spelling.
func (r Result) UnansweredNames() []string { return versionNames(r.Unanswered) }

func versionNames(versions []uint16) []string {
	out := make([]string, len(versions))
	for i, v := range versions {
		out[i] = crypto.ProtocolName(v)
	}
	return out
}

func hex16(v uint16) string {
	const digits = "0123456789ABCDEF"
	return string([]byte{digits[v>>12], digits[v>>8&15], digits[v>>4&15], digits[v&15]})
}

// ErrUnreachable wraps failures to connect at all.
var ErrUnreachable = errors.New("endpoint unreachable")

// Scan probes address (host:port).
func Scan(ctx context.Context, address string, opts Options) (Result, error) {
	start := time.Now()
	if opts.Timeout == 0 {
		opts.Timeout = 2 * time.Second
	}
	if opts.Versions == nil {
		opts.Versions = []uint16{crypto.VersionTLS10, crypto.VersionTLS11, crypto.VersionTLS12, crypto.VersionTLS13}
	}
	res := Result{Address: address, Suites: map[uint16][]uint16{}}
	p := &prober{address: address, opts: opts}

	// Reachability first, so that an unreachable endpoint fails once, clearly.
	conn, err := p.dial(ctx)
	if err != nil {
		return res, errors.Join(ErrUnreachable, err)
	}
	_ = conn.Close()

	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, v := range opts.Versions {
		var offer []uint16
		for _, s := range crypto.All() {
			if s.SupportsVersion(v) {
				offer = append(offer, s.ID)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			accepted, answered := p.acceptedSuites(ctx, v, offer)
			mu.Lock()
			defer mu.Unlock()
			if len(accepted) > 0 {
				res.Suites[v] = accepted
			}
			if !answered {
				res.Unanswered = append(res.Unanswered, v)
			}
		}()
	}
	if plaintext := map[Plaintext]func(context.Context) (bool, error){
		PlaintextCQL: p.cqlPlaintext, PlaintextGreeting: p.greetingPlaintext,
	}[opts.Plaintext]; plaintext != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if ok, err := plaintext(ctx); err == nil {
				res.PlaintextAccepted = &ok
			}
		}()
	}
	wg.Wait()
	slices.Sort(res.Unanswered)
	for _, v := range opts.Versions {
		if len(res.Suites[v]) > 0 {
			slices.Sort(res.Suites[v])
			res.Versions = append(res.Versions, v)
		}
	}
	if len(res.Versions) > 0 {
		res.Chain, res.ClientAuthRequired = p.fullHandshake(ctx, res.Versions[len(res.Versions)-1])
	}
	if tls12 := res.Suites[crypto.VersionTLS12]; res.ClientAuthRequired == nil && len(tls12) > 0 {
		// crypto/tls could not finish a handshake (a DHE suite, say): the first flight tells.
		chain, required := p.clientAuthTLS12(ctx, tls12[0])
		res.ClientAuthRequired = required
		if len(res.Chain) == 0 {
			res.Chain = chain
		}
	}
	if len(res.Chain) > 0 {
		res.Certificate = summarize(res.Chain[0])
	}
	res.Duration = time.Since(start)
	return res, nil
}

type prober struct {
	address string
	opts    Options
}

func (p *prober) dial(ctx context.Context) (net.Conn, error) {
	d := net.Dialer{Timeout: p.opts.Timeout}
	conn, err := d.DialContext(ctx, "tcp", p.address)
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(p.opts.Timeout))
	return conn, nil
}

// acceptedSuites finds every suite of offer the server accepts at version. A server that
// accepts any offered suite chooses one of them, so offering all that are left and taking out
// the chosen one until the server refuses finds the same set as offering each suite alone, in
// one handshake per accepted suite and one more, not one per suite: about 390 handshakes per
// endpoint before, each a refusal in the server's log. answered is false when a ClientHello got
// no answer twice in a row: the set is then incomplete, and silence must not pass for refusal.
func (p *prober) acceptedSuites(ctx context.Context, version uint16, offer []uint16) (accepted []uint16, answered bool) {
	offer = slices.Clone(offer)
	for len(offer) > 0 {
		chosen, r := p.choose(ctx, version, offer)
		if r == silent {
			chosen, r = p.choose(ctx, version, offer)
		}
		i := slices.Index(offer, chosen)
		switch {
		case r == silent:
			return accepted, false
		case r == refused || i < 0: // refused, or chose what was not offered: nothing more to believe
			return accepted, true
		}
		accepted = append(accepted, chosen)
		offer = slices.Delete(offer, i, i+1)
	}
	return accepted, true
}

// reply is how a server answered a ClientHello.
type reply int

const (
	chose reply = iota
	refused
	// silent: no connection or no answer before the deadline; tells nothing.
	silent
)

// choose offers suites at exactly one version and returns the suite the server chose.
func (p *prober) choose(ctx context.Context, version uint16, suites []uint16) (uint16, reply) {
	hello, err := clientHello(p.opts.ServerName, version, suites)
	if err != nil {
		return 0, refused
	}
	conn, err := p.dial(ctx)
	if err != nil {
		return 0, silent
	}
	defer conn.Close()
	if _, err := conn.Write(hello); err != nil {
		return 0, refused // closed while we wrote
	}
	sh, err := readServerHello(conn)
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return 0, silent
	case err != nil || sh.Version != version:
		return 0, refused
	}
	return sh.CipherSuite, chose
}

// cqlPlaintext sends a CQL v4 OPTIONS frame; a server that accepts plaintext answers SUPPORTED.
func (p *prober) cqlPlaintext(ctx context.Context) (bool, error) {
	conn, err := p.dial(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	// version 4 request, no flags, stream 0, opcode OPTIONS (0x05), empty body
	if _, err := conn.Write([]byte{0x04, 0x00, 0x00, 0x00, 0x05, 0, 0, 0, 0}); err != nil {
		return false, err
	}
	var hdr [9]byte
	n, err := io.ReadFull(conn, hdr[:])
	var ne net.Error
	switch {
	case n < 5 && errors.As(err, &ne) && ne.Timeout():
		// Silence is no refusal: a port too busy to answer in time may well accept plaintext.
		return false, ErrUnresponsive
	case n < 5:
		// A TLS-only port closes or answers with a TLS alert: plaintext refused.
		return false, nil
	}
	return hdr[0]&0x80 != 0 && hdr[4] == 0x06, nil // response bit set, opcode SUPPORTED
}

// ErrUnresponsive: the endpoint did not answer the plaintext test in time (for a greeting: it
// answered neither the greeting nor malformed bytes), so its silence tells nothing (a process
// starting or starved of CPU).
var ErrUnresponsive = errors.New("the endpoint did not answer the plaintext test in time")

// malformed is no TLS record (content type 0) and no protocol's greeting: every listener, TLS
// or plaintext, rejects it at once.
var malformed = make([]byte, 8)

// greetingPlaintext: see PlaintextGreeting. Silence until the deadline counts as accepted only
// when, at the same time, the endpoint rejected malformed bytes: a listener that answers nothing
// at all is too busy to tell, and calling that "plaintext accepted" would raise a false alarm.
func (p *prober) greetingPlaintext(ctx context.Context) (bool, error) {
	type answer struct {
		// silent: nothing came back before the deadline; answered: bytes that are no TLS alert.
		silent, answered bool
		err              error
	}
	send := func(b []byte, out chan<- answer) {
		conn, err := p.dial(ctx)
		if err != nil {
			out <- answer{err: err}
			return
		}
		defer conn.Close()
		if _, err := conn.Write(b); err != nil {
			out <- answer{} // closed while we wrote: rejected
			return
		}
		_ = conn.SetReadDeadline(time.Now().Add(p.opts.Timeout / 2))
		var first [1]byte
		_, err = conn.Read(first[:])
		var ne net.Error
		out <- answer{silent: errors.As(err, &ne) && ne.Timeout(), answered: err == nil && first[0] != recordAlert}
	}
	greeting, control := make(chan answer, 1), make(chan answer, 1)
	go send(p.opts.Greeting, greeting)
	go send(malformed, control)
	g, c := <-greeting, <-control
	switch {
	case g.err != nil:
		return false, g.err
	case !g.silent:
		// Closed, reset or an alert (a TLS-only listener), or an answer in the protocol.
		return g.answered, nil
	case c.err == nil && !c.silent:
		return true, nil
	}
	return false, ErrUnresponsive
}
