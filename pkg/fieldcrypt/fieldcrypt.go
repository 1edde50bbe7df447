package fieldcrypt

import (
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strings"

	"golang.org/x/crypto/chacha20poly1305"
)

// Version is the envelope format this package writes and reads.
const Version = 1

const (
	headerLen = 4
	nonceLen  = 12
	tagLen    = 16
)

// Cipher is the AEAD that encrypts values.
type Cipher byte

const (
	// CipherNone leaves values in clear: with a signature, integrity and authorship only.
	CipherNone Cipher = 0
	// CipherAESGCM is AES-GCM, with a 16-byte (AES-128) or 32-byte (AES-256) key.
	CipherAESGCM Cipher = 1
	// CipherChaCha20Poly1305 is ChaCha20-Poly1305 (RFC 8439), with a 32-byte key: faster than
	// AES-GCM where the CPU has no AES instructions.
	CipherChaCha20Poly1305 Cipher = 2
)

// cipherNames and signatureNames are the algorithms' names, by id: String writes them, Parse*
// reads them.
var (
	cipherNames    = []string{"None", "AES-GCM", "ChaCha20-Poly1305"}
	signatureNames = []string{"None", "Ed25519", "ECDSA-P256", "RSA-2048"}
)

func (c Cipher) String() string { return nameOf(cipherNames, c, "cipher") }

// Signature is the algorithm that signs envelopes.
type Signature byte

const (
	// SignatureNone: the AEAD's tag alone protects integrity, for holders of the key.
	SignatureNone Signature = 0
	// SignatureEd25519 is pure Ed25519 (RFC 8032): 64-byte signatures.
	SignatureEd25519 Signature = 1
	// SignatureECDSAP256 is ECDSA on P-256 over SHA-256: r and s, 32 bytes each.
	SignatureECDSAP256 Signature = 2
	// SignatureRSA2048 is RSASSA-PKCS1-v1_5 with SHA-256 and a 2048-bit key: 256 bytes.
	SignatureRSA2048 Signature = 3
)

func (s Signature) String() string { return nameOf(signatureNames, s, "signature") }

func nameOf[T ~byte](names []string, id T, what string) string {
	if int(id) < len(names) {
		return names[id]
	}
	return fmt.Sprintf("%s %d", what, byte(id))
}

// Size is the length of the signature in an envelope.
func (s Signature) Size() int {
	switch s {
	case SignatureEd25519, SignatureECDSAP256:
		return 64
	case SignatureRSA2048:
		return 256
	}
	return 0
}

// Key is one encryption key and the id envelopes name it by.
type Key struct {
	ID     uint8
	Secret []byte
}

// Config is what a Codec needs. At least one of Cipher and a signature is set.
type Config struct {
	Cipher Cipher
	// Keys for Cipher: the last one seals, every one opens (what it sealed), so a new key can
	// be added in front of the old ones and the data re-sealed at leisure.
	Keys []Key
	// Signature algorithm; Signer or Verifier must match it.
	Signature Signature
	// Signer signs sealed envelopes: an ed25519.PrivateKey, a *ecdsa.PrivateKey on P-256 or a
	// 2048-bit *rsa.PrivateKey. A reader may have only the Verifier.
	Signer crypto.Signer
	// Verifier checks envelopes: the Signer's public key when nil.
	Verifier crypto.PublicKey
	// Rand supplies nonces and ECDSA's randomness; crypto/rand when nil. Fixed only in tests.
	Rand io.Reader
}

// Codec seals and opens envelopes. It is safe for concurrent use.
type Codec struct {
	cipher  Cipher
	sig     Signature
	sealID  uint8
	aeads   map[uint8]cipher.AEAD
	signer  crypto.Signer
	pub     crypto.PublicKey
	rand    io.Reader
	sigSize int
	keyLen  int // of the sealing key
}

// ErrOpen is returned, wrapped, for every envelope that does not open: damaged, sealed for
// another context, signed by another key, or sealed with another cipher, signature or key than
// this codec's. Readers count it as a failed read.
var ErrOpen = errors.New("fieldcrypt: envelope does not open")

// New checks the configuration and returns its codec.
func New(c Config) (*Codec, error) {
	if c.Cipher == CipherNone && c.Signature == SignatureNone {
		return nil, errors.New("fieldcrypt: neither a cipher nor a signature: set one, or both")
	}
	k := &Codec{cipher: c.Cipher, sig: c.Signature, rand: c.Rand, signer: c.Signer, pub: c.Verifier, sigSize: c.Signature.Size()}
	if k.rand == nil {
		k.rand = rand.Reader
	}
	switch c.Cipher {
	case CipherNone:
		if len(c.Keys) > 0 {
			return nil, errors.New("fieldcrypt: encryption keys without a cipher: choose AES-GCM or ChaCha20-Poly1305, or drop the keys")
		}
	case CipherAESGCM, CipherChaCha20Poly1305:
		if len(c.Keys) == 0 {
			return nil, fmt.Errorf("fieldcrypt: %s needs at least one key", c.Cipher)
		}
		k.aeads = make(map[uint8]cipher.AEAD, len(c.Keys))
		for _, key := range c.Keys {
			if _, dup := k.aeads[key.ID]; dup {
				return nil, fmt.Errorf("fieldcrypt: key id %d given twice", key.ID)
			}
			a, err := newAEAD(c.Cipher, key.Secret)
			if err != nil {
				return nil, fmt.Errorf("fieldcrypt: key %d: %w", key.ID, err)
			}
			k.aeads[key.ID] = a
		}
		k.sealID, k.keyLen = c.Keys[len(c.Keys)-1].ID, len(c.Keys[len(c.Keys)-1].Secret)
	default:
		return nil, fmt.Errorf("fieldcrypt: unknown cipher %d", c.Cipher)
	}
	if c.Signature == SignatureNone {
		if c.Signer != nil || c.Verifier != nil {
			return nil, errors.New("fieldcrypt: a signing key without a signature algorithm: choose Ed25519, ECDSA-P256 or RSA-2048, or drop the key")
		}
		return k, nil
	}
	if k.pub == nil && k.signer != nil {
		k.pub = k.signer.Public()
	}
	if k.pub == nil {
		return nil, fmt.Errorf("fieldcrypt: %s needs a signing or a verifying key", c.Signature)
	}
	if err := checkKeyType(c.Signature, k.pub); err != nil {
		return nil, err
	}
	return k, nil
}

func newAEAD(c Cipher, key []byte) (cipher.AEAD, error) {
	if c == CipherChaCha20Poly1305 {
		if len(key) != chacha20poly1305.KeySize {
			return nil, fmt.Errorf("ChaCha20-Poly1305 takes a 32-byte key, not %d bytes", len(key))
		}
		return chacha20poly1305.New(key)
	}
	if len(key) != 16 && len(key) != 32 {
		return nil, fmt.Errorf("AES-GCM takes a 16-byte (AES-128) or 32-byte (AES-256) key, not %d bytes", len(key))
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

func checkKeyType(s Signature, pub crypto.PublicKey) error {
	ok := false
	switch p := pub.(type) {
	case ed25519.PublicKey:
		ok = s == SignatureEd25519
	case *ecdsa.PublicKey:
		ok = s == SignatureECDSAP256 && p.Curve == elliptic.P256()
	case *rsa.PublicKey:
		ok = s == SignatureRSA2048 && p.N.BitLen() == 2048
	}
	if !ok {
		return fmt.Errorf("fieldcrypt: a %T key does not make %s signatures (Ed25519 takes an Ed25519 key, ECDSA-P256 a P-256 key, RSA-2048 a 2048-bit RSA key)", pub, s)
	}
	return nil
}

// SealKeyLen is the length in bytes of the key that seals (16 for AES-128, 32 for AES-256 and
// ChaCha20), 0 without a cipher.
func (k *Codec) SealKeyLen() int { return k.keyLen }

// Overhead is how many bytes an envelope adds to a value.
func (k *Codec) Overhead() int {
	n := headerLen + k.sigSize
	if k.cipher != CipherNone {
		n += nonceLen + tagLen
	}
	return n
}

// Seal appends the envelope of value, bound to context, to dst.
func (k *Codec) Seal(dst, value, context []byte) ([]byte, error) {
	if k.sig != SignatureNone && k.signer == nil {
		return nil, errors.New("fieldcrypt: this codec only verifies: give it the signing key to seal")
	}
	start := len(dst)
	dst = append(dst, Version, byte(k.cipher), byte(k.sig), k.sealID)
	if k.cipher == CipherNone {
		dst = append(dst, value...)
	} else {
		dst = append(dst, make([]byte, nonceLen)...)
		nonce := dst[len(dst)-nonceLen:]
		if _, err := io.ReadFull(k.rand, nonce); err != nil {
			return nil, fmt.Errorf("fieldcrypt: drawing a nonce: %w", err)
		}
		ad := adFor(dst[start:start+headerLen], context)
		dst = k.aeads[k.sealID].Seal(dst, nonce, value, ad)
	}
	if k.sig == SignatureNone {
		return dst, nil
	}
	sig, err := k.sign(dst[start:], context)
	if err != nil {
		return nil, err
	}
	return append(dst, sig...), nil
}

// Open appends the value an envelope holds to dst, after checking that this codec's cipher,
// key and signer sealed it for context. Every failure wraps ErrOpen.
func (k *Codec) Open(dst, envelope, context []byte) ([]byte, error) {
	min := k.Overhead()
	if len(envelope) < min {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the %d an envelope has", ErrOpen, len(envelope), min)
	}
	if envelope[0] != Version || Cipher(envelope[1]) != k.cipher || Signature(envelope[2]) != k.sig {
		// Never accept a weaker envelope than configured: a writer without the key must not be
		// able to store an unsigned or unencrypted value that readers take for a sealed one.
		return nil, fmt.Errorf("%w: version %d, %s, %s; this codec reads version %d, %s, %s",
			ErrOpen, envelope[0], Cipher(envelope[1]), Signature(envelope[2]), Version, k.cipher, k.sig)
	}
	body := envelope[:len(envelope)-k.sigSize]
	if k.sig != SignatureNone {
		if err := k.verify(body, envelope[len(body):], context); err != nil {
			return nil, err
		}
	}
	if k.cipher == CipherNone {
		return append(dst, body[headerLen:]...), nil
	}
	a, ok := k.aeads[envelope[3]]
	if !ok {
		return nil, fmt.Errorf("%w: sealed with key %d, which this codec does not have", ErrOpen, envelope[3])
	}
	nonce := body[headerLen : headerLen+nonceLen]
	out, err := a.Open(dst, nonce, body[headerLen+nonceLen:], adFor(body[:headerLen], context))
	if err != nil {
		return nil, fmt.Errorf("%w: the AEAD's tag does not match (damaged, or sealed for another cell)", ErrOpen)
	}
	return out, nil
}

// SealText is Seal for a text column: the envelope in unpadded standard base64.
func (k *Codec) SealText(value, context []byte) (string, error) {
	env, err := k.Seal(nil, value, context)
	if err != nil {
		return "", err
	}
	return base64.RawStdEncoding.EncodeToString(env), nil
}

// OpenText is Open of what SealText wrote.
func (k *Codec) OpenText(dst []byte, text string, context []byte) ([]byte, error) {
	env, err := base64.RawStdEncoding.DecodeString(text)
	if err != nil {
		return nil, fmt.Errorf("%w: not unpadded base64: %v", ErrOpen, err)
	}
	return k.Open(dst, env, context)
}

// adFor is the AEAD's additional data: the header, then the context.
func adFor(header, context []byte) []byte {
	ad := make([]byte, 0, len(header)+len(context))
	return append(append(ad, header...), context...)
}

// sign signs body followed by context.
func (k *Codec) sign(body, context []byte) ([]byte, error) {
	switch k.sig {
	case SignatureEd25519:
		return ed25519.Sign(k.signer.(ed25519.PrivateKey), adFor(body, context)), nil
	case SignatureECDSAP256:
		d := digest(body, context)
		r, s, err := ecdsa.Sign(k.rand, k.signer.(*ecdsa.PrivateKey), d[:])
		if err != nil {
			return nil, fmt.Errorf("fieldcrypt: signing: %w", err)
		}
		out := make([]byte, 64)
		r.FillBytes(out[:32])
		s.FillBytes(out[32:])
		return out, nil
	default: // RSA-2048, the only other kind New accepts
		d := digest(body, context)
		sig, err := rsa.SignPKCS1v15(nil, k.signer.(*rsa.PrivateKey), crypto.SHA256, d[:])
		if err != nil {
			return nil, fmt.Errorf("fieldcrypt: signing: %w", err)
		}
		return sig, nil
	}
}

func (k *Codec) verify(body, sig, context []byte) error {
	ok := false
	switch k.sig {
	case SignatureEd25519:
		ok = ed25519.Verify(k.pub.(ed25519.PublicKey), adFor(body, context), sig)
	case SignatureECDSAP256:
		d := digest(body, context)
		r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
		ok = ecdsa.Verify(k.pub.(*ecdsa.PublicKey), d[:], r, s)
	default:
		d := digest(body, context)
		ok = rsa.VerifyPKCS1v15(k.pub.(*rsa.PublicKey), crypto.SHA256, d[:], sig) == nil
	}
	if !ok {
		return fmt.Errorf("%w: the %s signature does not match (damaged, sealed for another cell, or not signed by this key)", ErrOpen, k.sig)
	}
	return nil
}

func digest(body, context []byte) [32]byte {
	h := sha256.New()
	h.Write(body)
	h.Write(context)
	var d [32]byte
	h.Sum(d[:0])
	return d
}

// ParseCipher reads a cipher's name as String writes it.
func ParseCipher(name string) (Cipher, error) { return parseName[Cipher](cipherNames, name, "cipher") }

// ParseSignature reads a signature algorithm's name as String writes it.
func ParseSignature(name string) (Signature, error) {
	return parseName[Signature](signatureNames, name, "signature")
}

func parseName[T ~byte](names []string, name, what string) (T, error) {
	if i := slices.Index(names, name); i >= 0 {
		return T(i), nil
	}
	return 0, fmt.Errorf("fieldcrypt: %s %q: use %s", what, name, strings.Join(names, ", "))
}
