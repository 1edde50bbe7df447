package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"time"

	"secured.dev/operator/internal/crypto"
)

// fullHandshake completes a handshake with crypto/tls (no client certificate) to read the
// certificate chain and learn whether the server insists on a client certificate.
func (p *prober) fullHandshake(ctx context.Context, version uint16) ([]*x509.Certificate, *bool) {
	if version < tls.VersionTLS12 {
		version = tls.VersionTLS12
	}
	conn, err := p.dial(ctx)
	if err != nil {
		return nil, nil
	}
	defer conn.Close()
	var requested bool
	var chain []*x509.Certificate
	cfg := &tls.Config{
		ServerName:         p.opts.ServerName,
		InsecureSkipVerify: true, //nolint:gosec // we report the certificate; we do not trust it
		MinVersion:         version,
		MaxVersion:         version,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			requested = true
			return &tls.Certificate{}, nil
		},
		// Called with the server's chain before our (empty) certificate is judged, so the
		// chain is known even when the server then refuses the handshake.
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			chain = parseChain(raw)
			return nil
		},
	}
	tc := tls.Client(conn, cfg)
	err = tc.HandshakeContext(ctx)
	if err == nil && requested {
		// In TLS 1.3 the server judges our (empty) certificate after the client finished: its
		// verdict arrives as an alert on the first read, and silence until the deadline is
		// acceptance. A server that asked for no certificate cannot insist on one: no wait.
		// The deadline is the probe's own (half its timeout): a loaded node may judge the
		// certificate later than a fraction of a second, and its late alert is no acceptance.
		_ = tc.SetReadDeadline(time.Now().Add(p.opts.Timeout / 2))
		_, err = tc.Read(make([]byte, 1))
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			err = nil
		}
	}
	switch {
	case err == nil:
		return chain, ptr(false)
	case requested && strings.Contains(err.Error(), "remote error: tls:"):
		// The server asked for a certificate and refused the handshake without one (crypto/tls
		// reports received alerts only as text).
		return chain, ptr(true)
	}
	return chain, nil
}

// parseChain parses DER certificates until the first that does not parse.
func parseChain(raw [][]byte) []*x509.Certificate {
	var out []*x509.Certificate
	for _, der := range raw {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			break
		}
		out = append(out, c)
	}
	return out
}

func summarize(c *x509.Certificate) *Certificate {
	return &Certificate{Subject: c.Subject.String(), Issuer: c.Issuer.String(), DNSNames: c.DNSNames, NotAfter: c.NotAfter, Serial: c.SerialNumber.String()}
}

// clientAuthTLS12 learns whether a TLS 1.2 server insists on a client certificate without
// finishing the handshake, for the suites crypto/tls does not implement (DHE, which the JDK
// profiles use). The server's first flight says whether it asks for a certificate at all; if it
// does, we answer with an empty Certificate message and nothing else. A server that requires a
// certificate refuses that message at once with an alert; one that merely requests a
// certificate accepts it and waits, silent, for our key exchange. Silence is no verdict until
// it is heard twice: a loaded node that requires a certificate may take longer to refuse than a
// first wait of half the probe's timeout, and would pass for one that merely requests it
// (verification would then report client authentication as not enforced). The second attempt
// waits the whole timeout.
func (p *prober) clientAuthTLS12(ctx context.Context, suite uint16) ([]*x509.Certificate, *bool) {
	chain, required, silent := p.emptyCertificateTLS12(ctx, suite, p.opts.Timeout/2)
	if !silent {
		return chain, required
	}
	again, required, _ := p.emptyCertificateTLS12(ctx, suite, p.opts.Timeout)
	if len(again) > 0 {
		chain = again
	}
	return chain, required
}

// emptyCertificateTLS12 is one attempt of clientAuthTLS12, waiting up to wait for the server's
// answer to the empty Certificate message; silent: it gave none.
func (p *prober) emptyCertificateTLS12(ctx context.Context, suite uint16, wait time.Duration) (chain []*x509.Certificate, required *bool, silent bool) {
	hello, err := clientHello(p.opts.ServerName, crypto.VersionTLS12, []uint16{suite})
	if err != nil {
		return nil, nil, false
	}
	conn, err := p.dial(ctx)
	if err != nil {
		return nil, nil, false
	}
	defer conn.Close()
	if _, err := conn.Write(hello); err != nil {
		return nil, nil, false
	}
	h := &handshakeReader{r: conn}
	var cert []*x509.Certificate
	requested := false
	for done := false; !done; {
		typ, body, err := h.next()
		if err != nil {
			return cert, nil, false
		}
		switch typ {
		case typeCertificate:
			cert = chainOf(body)
		case typeCertificateRequest:
			requested = true
		case typeServerHelloDone:
			done = true
		}
	}
	if !requested {
		return cert, ptr(false), false // a server that does not ask for a certificate cannot insist on one
	}
	// handshake Certificate with an empty certificate_list, in one TLS 1.2 record
	empty := []byte{recordHandshake, 3, 3, 0, 7, typeCertificate, 0, 0, 3, 0, 0, 0}
	if _, err := conn.Write(empty); err != nil {
		return cert, nil, false
	}
	_ = conn.SetReadDeadline(time.Now().Add(wait))
	_, _, err = h.next()
	var alert *AlertError
	var ne net.Error
	switch {
	case errors.As(err, &alert) && refusesMissingCertificate(alert.Description):
		return cert, ptr(true), false
	case errors.As(err, &ne) && ne.Timeout():
		return cert, ptr(false), true
	}
	return cert, nil, false
}

// refusesMissingCertificate: the alerts a server sends when a client offers no certificate and
// one is required (JDK and crypto/tls: bad_certificate; OpenSSL before TLS 1.3:
// handshake_failure; TLS 1.3: certificate_required).
func refusesMissingCertificate(description byte) bool {
	return description == alertBadCertificate || description == alertHandshakeFailure || description == alertCertificateRequired
}

// chainOf parses the certificate_list of a TLS 1.2 Certificate message.
func chainOf(body []byte) []*x509.Certificate {
	if len(body) < 3 {
		return nil
	}
	list := body[3:]
	var raw [][]byte
	for len(list) >= 3 {
		n := int(list[0])<<16 | int(list[1])<<8 | int(list[2])
		if len(list) < 3+n {
			break
		}
		raw, list = append(raw, list[3:3+n]), list[3+n:]
	}
	return parseChain(raw)
}

func ptr[T any](v T) *T { return &v }
