package tunnelkeys

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// Listener serves a Server over TLS on every replica of the operator: a key is read from the
// API, so any replica can hand it, whichever leads.
type Listener struct {
	Addr   string
	Server *Server
	Cert   tls.Certificate
}

// LoadCertificate reads tls.crt and tls.key from dir: the key server's certificate, and the
// PEM the sidecars pin.
func LoadCertificate(dir string) (tls.Certificate, []byte, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, "tls.crt"))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, "tls.key"))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	// One read of the certificate: the pair served and the PEM pinned are the same bytes.
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("%s: %w", dir, err)
	}
	return cert, certPEM, nil
}

// NeedLeaderElection is false: every replica serves.
func (l *Listener) NeedLeaderElection() bool { return false }

// Start serves until ctx ends.
func (l *Listener) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", l.Addr)
	if err != nil {
		return fmt.Errorf("tunnel key server: %w", err)
	}
	srv := &http.Server{
		Handler:           l.Server,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{l.Cert}},
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeTLS(ln, "", "") }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdown); err != nil {
			return err
		}
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
