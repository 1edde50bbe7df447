package dev.secured.ycsb;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.interfaces.RSAKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;
import java.util.Base64;
import java.util.TreeMap;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The envelope of secured.dev/operator/pkg/fieldcrypt, format version 1, in Java: the same bytes
 * the Go package seals and opens (its doc.go defines the format; its testdata/vectors.json is
 * checked against this class too). Values are encrypted with AES-GCM or ChaCha20-Poly1305 and
 * optionally signed (Ed25519, ECDSA P-256, RSA-2048), bound to a context (table, row, column)
 * so that a value copied to another cell does not open. Thread-safe.
 */
public final class FieldCrypt {
  public static final int VERSION = 1;
  public static final String[] CIPHERS = {"None", "AES-GCM", "ChaCha20-Poly1305"};
  public static final String[] SIGNATURES = {"None", "Ed25519", "ECDSA-P256", "RSA-2048"};
  private static final int HEADER = 4, NONCE = 12, TAG = 16;

  private final int cipher, signature;
  private final TreeMap<Integer, SecretKeySpec> keys;
  private final int sealId;
  private final PrivateKey signer;
  private final PublicKey verifier;
  private final SecureRandom random = new SecureRandom();

  public FieldCrypt(int cipher, TreeMap<Integer, byte[]> keys, int signature, PrivateKey signer, PublicKey verifier) {
    if (cipher == 0 && signature == 0) {
      throw new IllegalArgumentException("fieldcrypt: neither a cipher nor a signature");
    }
    if ((cipher == 0) != keys.isEmpty()) {
      throw new IllegalArgumentException("fieldcrypt: " + CIPHERS[cipher] + " with " + keys.size() + " keys");
    }
    if ((signature == 0) != (verifier == null)) {
      throw new IllegalArgumentException("fieldcrypt: " + SIGNATURES[signature] + " needs a key, and only it");
    }
    this.cipher = cipher;
    this.signature = signature;
    this.keys = new TreeMap<>();
    keys.forEach((id, k) -> {
      if (cipher == 2 ? k.length != 32 : k.length != 16 && k.length != 32) {
        throw new IllegalArgumentException("fieldcrypt: key " + id + " has " + k.length + " bytes");
      }
      this.keys.put(id, new SecretKeySpec(k, cipher == 2 ? "ChaCha20" : "AES"));
    });
    this.sealId = keys.isEmpty() ? 0 : keys.lastKey();
    this.signer = signer;
    this.verifier = verifier;
    if (signature == 3 && ((RSAKey) verifier).getModulus().bitLength() != 2048) {
      throw new IllegalArgumentException("fieldcrypt: RSA-2048 needs a 2048-bit key");
    }
  }

  /** Reads the files pkg/fieldcrypt's LoadDir reads: encryption-key-ID, signing-key.pem, verifying-key.pem. */
  public static FieldCrypt load(Path dir, String cipherName, String signatureName) throws IOException, GeneralSecurityException {
    int c = Arrays.asList(CIPHERS).indexOf(cipherName), s = Arrays.asList(SIGNATURES).indexOf(signatureName);
    if (c < 0 || s < 0) {
      throw new IllegalArgumentException("fieldcrypt: cipher " + cipherName + " (use " + String.join(", ", CIPHERS)
          + "), signature " + signatureName + " (use " + String.join(", ", SIGNATURES) + ")");
    }
    TreeMap<Integer, byte[]> keys = new TreeMap<>();
    PrivateKey signer = null;
    PublicKey verifier = null;
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
      for (Path f : files) {
        String name = f.getFileName().toString();
        if (name.startsWith("..") || Files.isDirectory(f)) {
          continue; // a mounted Secret's own bookkeeping
        }
        if (name.startsWith("encryption-key-")) {
          keys.put(Integer.parseInt(name.substring("encryption-key-".length())), Files.readAllBytes(f));
        } else if (name.equals("signing-key.pem")) {
          signer = KeyFactory.getInstance(algorithm(s)).generatePrivate(new PKCS8EncodedKeySpec(pem(Files.readAllBytes(f), "PRIVATE KEY")));
        } else if (name.equals("verifying-key.pem") && s != 0) {
          verifier = KeyFactory.getInstance(algorithm(s)).generatePublic(new X509EncodedKeySpec(pem(Files.readAllBytes(f), "PUBLIC KEY")));
        }
      }
    }
    if (c == 0) {
      keys.clear();
    }
    return new FieldCrypt(c, keys, s, s == 0 ? null : signer, verifier);
  }

  public static String algorithm(int signature) {
    return new String[] {"", "Ed25519", "EC", "RSA"}[signature];
  }

  public static byte[] pem(byte[] file, String type) {
    String s = new String(file, StandardCharsets.US_ASCII);
    int begin = s.indexOf("-----BEGIN " + type + "-----"), end = s.indexOf("-----END " + type + "-----");
    if (begin < 0 || end < begin) {
      throw new IllegalArgumentException("fieldcrypt: not a PEM " + type);
    }
    return Base64.getMimeDecoder().decode(s.substring(begin + type.length() + 16, end));
  }

  /** The envelope of value for context, with a fresh random nonce. */
  public byte[] seal(byte[] value, byte[] context) throws GeneralSecurityException {
    byte[] nonce = new byte[cipher == 0 ? 0 : NONCE];
    random.nextBytes(nonce);
    return seal(value, context, nonce);
  }

  /** The envelope with the given nonce: for test vectors only, never reuse a nonce. */
  public byte[] seal(byte[] value, byte[] context, byte[] nonce) throws GeneralSecurityException {
    if (signature != 0 && signer == null) {
      throw new GeneralSecurityException("fieldcrypt: this codec only verifies: give it the signing key to seal");
    }
    byte[] header = {VERSION, (byte) cipher, (byte) signature, (byte) sealId};
    byte[] body;
    if (cipher == 0) {
      body = concat(header, value);
    } else {
      Cipher c = aead(Cipher.ENCRYPT_MODE, keys.get(sealId), nonce);
      c.updateAAD(concat(header, context));
      body = concat(concat(header, nonce), c.doFinal(value));
    }
    return signature == 0 ? body : concat(body, sign(concat(body, context)));
  }

  /** The value an envelope holds, after checking it was sealed for context by this codec's keys. */
  public byte[] open(byte[] env, byte[] context) throws GeneralSecurityException {
    int sigLen = signature == 0 ? 0 : signature == 3 ? 256 : 64;
    int min = HEADER + sigLen + (cipher == 0 ? 0 : NONCE + TAG);
    if (env.length < min || env[0] != VERSION || env[1] != cipher || env[2] != signature) {
      throw new GeneralSecurityException("fieldcrypt: envelope does not open: not a version " + VERSION + " envelope of "
          + CIPHERS[cipher] + " and " + SIGNATURES[signature]);
    }
    byte[] body = Arrays.copyOf(env, env.length - sigLen);
    if (signature != 0 && !verify(concat(body, context), Arrays.copyOfRange(env, body.length, env.length))) {
      throw new GeneralSecurityException("fieldcrypt: envelope does not open: the " + SIGNATURES[signature] + " signature does not match");
    }
    if (cipher == 0) {
      return Arrays.copyOfRange(body, HEADER, body.length);
    }
    SecretKeySpec key = keys.get(env[3] & 0xff);
    if (key == null) {
      throw new GeneralSecurityException("fieldcrypt: envelope does not open: sealed with key " + (env[3] & 0xff) + ", which this codec does not have");
    }
    Cipher c = aead(Cipher.DECRYPT_MODE, key, Arrays.copyOfRange(body, HEADER, HEADER + NONCE));
    c.updateAAD(concat(Arrays.copyOf(body, HEADER), context));
    try {
      return c.doFinal(body, HEADER + NONCE, body.length - HEADER - NONCE);
    } catch (GeneralSecurityException e) {
      throw new GeneralSecurityException("fieldcrypt: envelope does not open: the AEAD's tag does not match", e);
    }
  }

  private Cipher aead(int mode, SecretKeySpec key, byte[] nonce) throws GeneralSecurityException {
    if (cipher == 2) {
      Cipher c = Cipher.getInstance("ChaCha20-Poly1305");
      c.init(mode, key, new IvParameterSpec(nonce));
      return c;
    }
    Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
    c.init(mode, key, new GCMParameterSpec(TAG * 8, nonce));
    return c;
  }

  private byte[] sign(byte[] message) throws GeneralSecurityException {
    Signature s = Signature.getInstance(signatureAlgorithm());
    s.initSign(signer);
    s.update(message);
    return s.sign();
  }

  private boolean verify(byte[] message, byte[] sig) throws GeneralSecurityException {
    Signature s = Signature.getInstance(signatureAlgorithm());
    s.initVerify(verifier);
    s.update(message);
    return s.verify(sig);
  }

  /** ECDSA in the P1363 form (r and s, 32 bytes each), as the envelope stores it. */
  private String signatureAlgorithm() {
    return new String[] {"", "Ed25519", "SHA256withECDSAinP1363Format", "SHA256withRSA"}[signature];
  }

  static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
