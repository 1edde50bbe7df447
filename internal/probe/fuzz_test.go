package probe

import (
	"bytes"
	"testing"
)

// FuzzReadServerHello feeds arbitrary server bytes to the reader: the prober reads from servers
// we do not trust, so no input may panic or make it read without bound. The checked-in corpus
// (testdata/fuzz/FuzzReadServerHello) holds real first flights of Go's and OpenSSL's servers.
func FuzzReadServerHello(f *testing.F) {
	f.Add([]byte{21, 3, 3, 0, 2, 2, 40}) // handshake_failure alert
	f.Add([]byte{22, 3, 3, 0, 4, 2, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		sh, err := readServerHello(bytes.NewReader(data))
		if err == nil && sh.Version == 0 && sh.CipherSuite == 0 && !sh.RetryRequest && len(data) < 5+4+38 {
			t.Fatalf("accepted a ServerHello shorter than its fixed fields: % x", data)
		}
	})
}
