#!/usr/bin/env python3
"""Writes vectors.json: envelopes of pkg/fieldcrypt's format version 1, made from its
documentation (doc.go) with an implementation that shares nothing with the Go package
(Python's `cryptography`), so the Go tests check the format and not only themselves.

Run it only to add vectors: the keys are drawn anew each time, so every vector changes.
    python3 pkg/fieldcrypt/testdata/vectors.py > pkg/fieldcrypt/testdata/vectors.json
"""
import base64
import json
import os

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

CIPHERS = {"None": 0, "AES-GCM": 1, "ChaCha20-Poly1305": 2}
SIGNATURES = {"None": 0, "Ed25519": 1, "ECDSA-P256": 2, "RSA-2048": 3}

signers = {
    "Ed25519": ed25519.Ed25519PrivateKey.generate(),
    "ECDSA-P256": ec.generate_private_key(ec.SECP256R1()),
    "RSA-2048": rsa.generate_private_key(public_exponent=65537, key_size=2048),
}


def pem(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def sign(alg, message):
    key = signers[alg]
    if alg == "Ed25519":
        return key.sign(message)
    if alg == "ECDSA-P256":
        r, s = decode_dss_signature(key.sign(message, ec.ECDSA(hashes.SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")
    return key.sign(message, padding.PKCS1v15(), hashes.SHA256())


def envelope(cipher, key, key_id, nonce, signature, value, context):
    header = bytes([1, CIPHERS[cipher], SIGNATURES[signature], key_id if cipher != "None" else 0])
    if cipher == "None":
        body = header + value
    else:
        aead = AESGCM(key) if cipher == "AES-GCM" else ChaCha20Poly1305(key)
        body = header + nonce + aead.encrypt(nonce, value, header + context)
    if signature != "None":
        body += sign(signature, body + context)
    return body


CASES = [
    # name, cipher, key bytes, key id, signature, value, context
    ("aes128-gcm", "AES-GCM", 16, 1, "None", b"a YCSB value of some length", b"ycsb.usertable/user1/field0"),
    ("aes256-gcm", "AES-GCM", 32, 7, "None", b"x" * 100, b"ycsb.usertable/user2/field3"),
    ("aes256-gcm-empty-value", "AES-GCM", 32, 1, "None", b"", b"ycsb.usertable/user3/field1"),
    ("aes256-gcm-empty-context", "AES-GCM", 32, 1, "None", b"no context", b""),
    ("chacha20-poly1305", "ChaCha20-Poly1305", 32, 1, "None", bytes(range(256)), b"t/k/c"),
    ("aes256-gcm-ed25519", "AES-GCM", 32, 1, "Ed25519", b"signed and sealed", b"ycsb.usertable/user4/field0"),
    ("aes128-gcm-ecdsa-p256", "AES-GCM", 16, 2, "ECDSA-P256", b"signed with ECDSA", b"ycsb.usertable/user5/field0"),
    ("chacha20-poly1305-rsa2048", "ChaCha20-Poly1305", 32, 3, "RSA-2048", b"signed with RSA", b"ycsb.usertable/user6/field9"),
    ("ed25519-only", "None", 0, 0, "Ed25519", b"in clear, signed", b"ycsb.usertable/user7/field0"),
    ("rsa2048-only", "None", 0, 0, "RSA-2048", b"in clear, signed by RSA", b"ycsb.usertable/user8/field0"),
]

vectors = []
for name, cipher, key_len, key_id, signature, value, context in CASES:
    key = os.urandom(key_len)
    nonce = os.urandom(12) if cipher != "None" else b""
    env = envelope(cipher, key, key_id, nonce, signature, value, context)
    v = {
        "name": name,
        "cipher": cipher,
        "keyId": key_id,
        "key": key.hex(),
        "nonce": nonce.hex(),
        "signature": signature,
        "value": value.hex(),
        "context": context.hex(),
        "envelope": env.hex(),
        "text": base64.b64encode(env).decode().rstrip("="),
        "deterministic": signature != "ECDSA-P256",
    }
    if signature != "None":
        v["signingKey"] = pem(signers[signature])
    vectors.append(v)

print(json.dumps({"format": 1, "generator": "pkg/fieldcrypt/testdata/vectors.py (Python cryptography)",
                  "vectors": vectors}, indent=1))
