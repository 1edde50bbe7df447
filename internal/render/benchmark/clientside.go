package benchmark

import (
	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/pkg/fieldcrypt"
)

// ClientSideAlgorithms maps the API's client-side settings to pkg/fieldcrypt's: the cipher,
// its key length in bytes (0 without a cipher) and the signature.
func ClientSideAlgorithms(cs v1alpha1.ClientSideEncryption) (fieldcrypt.Cipher, int, fieldcrypt.Signature) {
	c, n := fieldcrypt.CipherAESGCM, 32
	switch cs.Cipher {
	case v1alpha1.ClientAES128GCM:
		n = 16
	case v1alpha1.ClientChaCha20Poly1305:
		c = fieldcrypt.CipherChaCha20Poly1305
	case v1alpha1.ClientCipherNone:
		c, n = fieldcrypt.CipherNone, 0
	}
	s := fieldcrypt.SignatureNone
	switch cs.Signature {
	case v1alpha1.ClientEd25519:
		s = fieldcrypt.SignatureEd25519
	case v1alpha1.ClientECDSAP256:
		s = fieldcrypt.SignatureECDSAP256
	case v1alpha1.ClientRSA2048:
		s = fieldcrypt.SignatureRSA2048
	}
	return c, n, s
}
