package probe

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"

	"secured.dev/operator/internal/crypto"
)

// We write ClientHellos ourselves rather than through crypto/tls: Go's client cannot offer
// exactly one TLS 1.3 suite, and it knows none of the DHE, CCM, ARIA or Camellia suites a
// datastore might accept. Reading the ServerHello is enough to know what the server chose.

const (
	recordHandshake = 22
	recordAlert     = 21

	typeClientHello        = 1
	typeServerHello        = 2
	typeCertificate        = 11
	typeCertificateRequest = 13
	typeServerHelloDone    = 14

	alertHandshakeFailure    = 40
	alertBadCertificate      = 42
	alertCertificateRequired = 116

	extServerName          = 0
	extSupportedGroups     = 10
	extECPointFormats      = 11
	extSignatureAlgorithms = 13
	extExtendedMasterSec   = 23
	extSupportedVersions   = 43
	extKeyShare            = 51
	extRenegotiationInfo   = 0xff01

	groupX25519    = 0x001d
	groupSecp256r1 = 0x0017
	groupSecp384r1 = 0x0018
	groupFFDHE2048 = 0x0100
)

var signatureAlgorithms = []uint16{
	0x0403, 0x0503, 0x0603, // ecdsa_secp256r1_sha256, secp384r1_sha384, secp521r1_sha512
	0x0804, 0x0805, 0x0806, // rsa_pss_rsae_sha256/384/512
	0x0809, 0x080a, 0x080b, // rsa_pss_pss_sha256/384/512
	0x0807,                 // ed25519
	0x0401, 0x0501, 0x0601, // rsa_pkcs1_sha256/384/512
	0x0201, 0x0203, // rsa_pkcs1_sha1, ecdsa_sha1: for servers limited to old suites
}

// helloRetryRandom marks a HelloRetryRequest (RFC 8446 §4.1.3).
var helloRetryRandom = [32]byte{
	0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
	0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
}

// clientHello builds a ClientHello record offering the given suites at exactly one protocol
// version.
func clientHello(serverName string, version uint16, suites []uint16) ([]byte, error) {
	var body []byte
	legacy := version
	if version == crypto.VersionTLS13 {
		legacy = crypto.VersionTLS12
	}
	body = binary.BigEndian.AppendUint16(body, legacy)
	random := make([]byte, 32)
	if _, err := rand.Read(random); err != nil {
		return nil, err
	}
	body = append(body, random...)
	session := make([]byte, 32) // a non-empty session id keeps middlebox-compatible servers happy
	if _, err := rand.Read(session); err != nil {
		return nil, err
	}
	body = append(body, byte(len(session)))
	body = append(body, session...)
	body = binary.BigEndian.AppendUint16(body, uint16(2*len(suites)))
	for _, s := range suites {
		body = binary.BigEndian.AppendUint16(body, s)
	}
	body = append(body, 1, 0) // compression: null only

	var ext []byte
	if serverName != "" && net.ParseIP(serverName) == nil {
		name := []byte(serverName)
		var sni []byte
		sni = binary.BigEndian.AppendUint16(sni, uint16(len(name)+3))
		sni = append(sni, 0) // host_name
		sni = binary.BigEndian.AppendUint16(sni, uint16(len(name)))
		sni = append(sni, name...)
		ext = appendExtension(ext, extServerName, sni)
	}
	groups := []uint16{groupX25519, groupSecp256r1, groupSecp384r1, groupFFDHE2048}
	ext = appendExtension(ext, extSupportedGroups, uint16List(groups, 2))
	ext = appendExtension(ext, extECPointFormats, []byte{1, 0}) // uncompressed
	ext = appendExtension(ext, extSignatureAlgorithms, uint16List(signatureAlgorithms, 2))
	if version == crypto.VersionTLS13 {
		ext = appendExtension(ext, extSupportedVersions, append([]byte{2}, byte(version>>8), byte(version)))
		key, err := ecdh.X25519().GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		pub := key.PublicKey().Bytes()
		var share []byte
		share = binary.BigEndian.AppendUint16(share, uint16(4+len(pub)))
		share = binary.BigEndian.AppendUint16(share, groupX25519)
		share = binary.BigEndian.AppendUint16(share, uint16(len(pub)))
		share = append(share, pub...)
		ext = appendExtension(ext, extKeyShare, share)
	} else {
		ext = appendExtension(ext, extRenegotiationInfo, []byte{0})
		ext = appendExtension(ext, extExtendedMasterSec, nil)
	}
	body = binary.BigEndian.AppendUint16(body, uint16(len(ext)))
	body = append(body, ext...)

	hs := []byte{typeClientHello, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}
	hs = append(hs, body...)
	record := []byte{recordHandshake, 0x03, 0x01} // record version 1.0 for the first flight, as browsers do
	record = binary.BigEndian.AppendUint16(record, uint16(len(hs)))
	return append(record, hs...), nil
}

func appendExtension(b []byte, typ uint16, data []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, typ)
	b = binary.BigEndian.AppendUint16(b, uint16(len(data)))
	return append(b, data...)
}

func uint16List(vs []uint16, lenBytes int) []byte {
	var b []byte
	n := 2 * len(vs)
	if lenBytes == 2 {
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	} else {
		b = append(b, byte(n))
	}
	for _, v := range vs {
		b = binary.BigEndian.AppendUint16(b, v)
	}
	return b
}

// ServerHello is what a server answered to one ClientHello.
type ServerHello struct {
	Version      uint16 // negotiated version (from supported_versions for TLS 1.3)
	CipherSuite  uint16
	RetryRequest bool // a HelloRetryRequest: the suite is accepted, the key share was not
}

// AlertError is a TLS alert the server sent instead of a ServerHello.
type AlertError struct{ Level, Description byte }

func (a *AlertError) Error() string {
	return fmt.Sprintf("TLS alert %d (level %d)", a.Description, a.Level)
}

// errNotTLS means the peer answered with bytes that are not a TLS record.
var errNotTLS = errors.New("the peer does not speak TLS")

// maxHandshake bounds what we read from a server we do not trust.
const maxHandshake = 1 << 16

// readServerHello reads the server's first handshake message and parses it as a ServerHello,
// or returns the alert the server sent.
func readServerHello(r io.Reader) (ServerHello, error) {
	typ, body, err := (&handshakeReader{r: r}).next()
	if err != nil {
		return ServerHello{}, err
	}
	if typ != typeServerHello {
		return ServerHello{}, fmt.Errorf("expected ServerHello, got handshake type %d", typ)
	}
	return ParseServerHello(body)
}

// handshakeReader reads the plaintext handshake messages of a server's first flight, however
// they are split into records.
type handshakeReader struct {
	r   io.Reader
	buf []byte
}

// next returns the next whole handshake message, or the alert the server sent instead.
func (h *handshakeReader) next() (typ byte, body []byte, err error) {
	for {
		if len(h.buf) >= 4 {
			n := int(h.buf[1])<<16 | int(h.buf[2])<<8 | int(h.buf[3])
			if n > maxHandshake {
				return 0, nil, errors.New("handshake message too large")
			}
			if len(h.buf) >= 4+n {
				typ, body = h.buf[0], h.buf[4:4+n]
				h.buf = h.buf[4+n:]
				return typ, body, nil
			}
		}
		var hdr [5]byte
		if _, err := io.ReadFull(h.r, hdr[:]); err != nil {
			return 0, nil, err
		}
		rtyp, length := hdr[0], int(binary.BigEndian.Uint16(hdr[3:]))
		if hdr[1] != 3 || length > 1<<14+2048 {
			return 0, nil, errNotTLS
		}
		payload := make([]byte, length)
		if _, err := io.ReadFull(h.r, payload); err != nil {
			return 0, nil, err
		}
		switch rtyp {
		case recordAlert:
			if len(payload) < 2 {
				return 0, nil, errNotTLS
			}
			return 0, nil, &AlertError{Level: payload[0], Description: payload[1]}
		case recordHandshake:
			h.buf = append(h.buf, payload...)
		default:
			return 0, nil, errNotTLS
		}
	}
}

// ParseServerHello parses the body of a ServerHello handshake message.
func ParseServerHello(b []byte) (ServerHello, error) {
	var sh ServerHello
	short := errors.New("ServerHello truncated")
	if len(b) < 2+32+1 {
		return sh, short
	}
	sh.Version = binary.BigEndian.Uint16(b)
	sh.RetryRequest = [32]byte(b[2:34]) == helloRetryRandom
	b = b[34:]
	sidLen := int(b[0])
	if sidLen > 32 || len(b) < 1+sidLen+3 {
		return sh, short
	}
	b = b[1+sidLen:]
	sh.CipherSuite = binary.BigEndian.Uint16(b)
	b = b[3:] // suite and compression method
	if len(b) == 0 {
		return sh, nil // no extensions: TLS 1.2 or older
	}
	if len(b) < 2 {
		return sh, short
	}
	extLen := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	if len(b) < extLen {
		return sh, short
	}
	b = b[:extLen]
	for len(b) >= 4 {
		typ, n := binary.BigEndian.Uint16(b), int(binary.BigEndian.Uint16(b[2:]))
		if len(b) < 4+n {
			return sh, short
		}
		if typ == extSupportedVersions {
			if n != 2 {
				return sh, errors.New("bad supported_versions in ServerHello")
			}
			sh.Version = binary.BigEndian.Uint16(b[4:])
		}
		b = b[4+n:]
	}
	if len(b) != 0 {
		return sh, short
	}
	return sh, nil
}
