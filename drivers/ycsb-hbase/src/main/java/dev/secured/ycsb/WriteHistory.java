package dev.secured.ycsb;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The write history of secured.dev/operator/internal/writecheck in Java: the same 32-byte
 * entries (key number, timestamp in microseconds, tag, field, acknowledged; little-endian) and
 * the same seal (the value's last 16 bytes are the hex FNV-1a of key, field and content), so a
 * history this driver records reads like the k6 driver's. The file is the memory: a run of any
 * length keeps only a buffer in the process. Thread-safe.
 */
final class WriteHistory implements AutoCloseable {
  static final int TAG_LEN = 16, ENTRY_SIZE = 32, MIN_VALUE_LEN = 2 * TAG_LEN;
  private static final byte[] HEX = "0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

  /** One attempted write of one field. */
  record Entry(long key, int field, long stamp, long tag, boolean acked) {}

  private final OutputStream out;
  private final ByteBuffer buf = ByteBuffer.allocate(ENTRY_SIZE).order(ByteOrder.LITTLE_ENDIAN);
  private IOException failure;

  private WriteHistory(OutputStream out) {
    this.out = out;
  }

  /** Opens path for appending: a later phase adds to an earlier one's history. */
  static WriteHistory append(Path path) throws IOException {
    return new WriteHistory(new BufferedOutputStream(
        Files.newOutputStream(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND), 64 << 10));
  }

  /** Appends one entry. The first failure stops recording; close throws it. */
  synchronized void record(Entry e) {
    if (failure != null) {
      return;
    }
    buf.clear();
    buf.putLong(e.key()).putLong(e.stamp()).putLong(e.tag()).putInt(e.field()).putInt(e.acked() ? 1 : 0);
    try {
      out.write(buf.array());
    } catch (IOException ex) {
      failure = ex;
    }
  }

  @Override
  public synchronized void close() throws IOException {
    try {
      out.close();
    } catch (IOException ex) {
      if (failure == null) {
        failure = ex;
      }
    }
    if (failure != null) {
      throw new IOException("write history: " + failure.getMessage(), failure);
    }
  }

  /** Calls fn with every entry of the file, in the order they were recorded. */
  static void each(Path path, java.util.function.Consumer<Entry> fn) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(ENTRY_SIZE).order(ByteOrder.LITTLE_ENDIAN);
    try (InputStream in = new BufferedInputStream(Files.newInputStream(path), 64 << 10)) {
      while (true) {
        int n = in.readNBytes(b.array(), 0, ENTRY_SIZE);
        if (n == 0) {
          return;
        }
        if (n < ENTRY_SIZE) {
          throw new EOFException("write history " + path + ": a truncated entry (the writer did not close it)");
        }
        b.rewind();
        long key = b.getLong(), stamp = b.getLong(), tag = b.getLong();
        int field = b.getInt();
        fn.accept(new Entry(key, field, stamp, tag, b.getInt() == 1));
      }
    }
  }

  /** Writes the tag of key, field and v's content into v's last TAG_LEN bytes and returns it. */
  static long seal(String key, int field, byte[] v) {
    int n = v.length - TAG_LEN;
    long t = tag(key, field, v, n);
    for (int i = 0; i < TAG_LEN; i++) {
      v[n + i] = HEX[(int) ((t >>> (60 - 4 * i)) & 0xf)];
    }
    return t;
  }

  /** The tag a sealed value carries; null when the value is too short or its seal does not match. */
  static Long unseal(String key, int field, byte[] v) {
    int n = v.length - TAG_LEN;
    if (n < 0) {
      return null;
    }
    long t = 0;
    for (int i = n; i < v.length; i++) {
      int c = v[i];
      if (c >= '0' && c <= '9') {
        t = t << 4 | (c - '0');
      } else if (c >= 'a' && c <= 'f') {
        t = t << 4 | (c - 'a' + 10);
      } else {
        return null;
      }
    }
    return t == tag(key, field, v, n) ? t : null;
  }

  /** FNV-1a over the key, a separator, the field's two low bytes and the content (Java's long wraps as Go's uint64 does). */
  private static long tag(String key, int field, byte[] content, int length) {
    long h = 0xcbf29ce484222325L;
    final long prime = 0x100000001b3L;
    for (int i = 0; i < key.length(); i++) {
      h = (h ^ (key.charAt(i) & 0xff)) * prime;
    }
    for (int b : new int[] {0xff, field & 0xff, (field >> 8) & 0xff}) {
      h = (h ^ b) * prime;
    }
    for (int i = 0; i < length; i++) {
      h = (h ^ (content[i] & 0xff)) * prime;
    }
    return h;
  }
}
