// Package fieldcrypt encrypts and signs a datastore's cells in the application, before they
// leave it, so that the datastore, its disks, its backups and its operators see only
// ciphertext: the client-side protection that PACE (seed 004) measured on Accumulo, for any
// store of byte values, Cassandra through gocql first among them.
//
// A Codec seals a value into an envelope and opens an envelope back into the value. Each
// envelope is bound to a context the caller names (for a cell: table, row key and column), so
// a value copied into another cell does not open there. Confidentiality and integrity come
// from an AEAD (AES-GCM or ChaCha20-Poly1305); a signature (Ed25519, ECDSA P-256 or RSA-2048)
// additionally proves who wrote the cell, to readers that hold only the public key.
//
// # Envelope, version 1
//
//	offset  length  field
//	0       1       version: 1
//	1       1       cipher: 0 none (signature only), 1 AES-GCM, 2 ChaCha20-Poly1305
//	2       1       signature: 0 none, 1 Ed25519, 2 ECDSA P-256 with SHA-256, 3 RSA-2048 PKCS #1 v1.5 with SHA-256
//	3       1       key id: which encryption key sealed it (0 when cipher is 0)
//	4       12      nonce, random (only when cipher is not 0)
//	.       n       payload: the AEAD's ciphertext and 16-byte tag, or the value itself when cipher is 0
//	.       s       signature, fixed length: 64 (Ed25519), 64 (ECDSA, r and s as 32-byte big-endian), 256 (RSA-2048)
//
// The AEAD's additional data is the 4-byte header followed by the context. The signature
// covers everything before it followed by the context, so it is checked before anything is
// decrypted. The AES key length (16 or 32 bytes) chooses AES-128 or AES-256; ChaCha20-Poly1305
// takes 32 bytes. Text columns (Cassandra's varchar, as in YCSB's usertable) hold the envelope
// in unpadded standard base64 (SealText, OpenText).
//
// The cost per cell is 4 header bytes, plus 28 with a cipher (nonce and tag), plus the
// signature; base64 adds a third on top.
//
// testdata/vectors.json holds test vectors: fixed keys and nonces, values, contexts and the
// envelopes they give, for other implementations of the format to check against.
package fieldcrypt
