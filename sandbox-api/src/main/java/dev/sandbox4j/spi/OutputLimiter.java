package dev.sandbox4j.spi;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Keeps the first {@code limit} characters of one output stream and counts the rest.
 *
 * <p>Memory stays bounded whatever the sandbox prints: at most {@code limit} characters plus a small
 * decoding buffer, however long the output or its lines. Bytes are decoded as UTF-8 as they arrive
 * (malformed input becomes U+FFFD), and the cut never splits a character, surrogate pairs included.
 * Once {@code hardCapBytes} bytes have arrived, {@link #accept} returns {@code false}: the caller
 * stops reading and kills the command. Not thread-safe: one limiter per stream and reader.
 *
 * @since 0.1.0
 */
public final class OutputLimiter {
    private final int limit;
    private final long hardCapBytes;
    private final CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPLACE)
            .onUnmappableCharacter(CodingErrorAction.REPLACE);
    private final StringBuilder kept = new StringBuilder();
    private final ByteBuffer pending = ByteBuffer.allocate(8192);
    private final CharBuffer chars = CharBuffer.allocate(8192);
    private long totalBytes;
    private boolean full;
    private boolean truncated;
    private boolean capped;
    private boolean finished;

    /**
     * A limiter for one stream.
     *
     * @param limit the characters kept, zero or more
     * @param hardCapBytes the bytes after which {@link #accept} returns false, positive
     * @throws IllegalArgumentException when {@code limit} is negative or {@code hardCapBytes} is not positive
     */
    public OutputLimiter(int limit, long hardCapBytes) {
        if (limit < 0 || hardCapBytes <= 0) {
            throw new IllegalArgumentException("limit must be >= 0 and hardCapBytes > 0");
        }
        this.limit = limit;
        this.hardCapBytes = hardCapBytes;
    }

    /**
     * Takes the next bytes of the stream.
     *
     * @param b the buffer
     * @param off where the new bytes start in {@code b}
     * @param len how many bytes are new
     * @return false once the hard cap is reached: stop reading and kill the command
     */
    public boolean accept(byte[] b, int off, int len) {
        if (capped) {
            return false;
        }
        long room = hardCapBytes - totalBytes;
        int take = (int) Math.min(len, room);
        totalBytes += take;
        if (full) {
            if (take > 0) {
                truncated = true;
            }
        } else {
            int pos = off;
            int end = off + take;
            while (pos < end && !full) {
                int n = Math.min(pending.remaining(), end - pos);
                pending.put(b, pos, n);
                pos += n;
                decode(false);
            }
            if (pos < end) {
                truncated = true;
            }
        }
        if (take < len) {
            truncated = true;
        }
        capped = totalBytes >= hardCapBytes;
        return !capped;
    }

    /**
     * Takes the next bytes of the stream: all of {@code b}.
     *
     * @param b the bytes
     * @return false once the hard cap is reached: stop reading and kill the command
     */
    public boolean accept(byte[] b) {
        return accept(b, 0, b.length);
    }

    /**
     * Takes already decoded text (some providers send strings, not bytes); counted as UTF-8 bytes.
     *
     * @param text the text
     * @return false once the hard cap is reached: stop reading and kill the command
     */
    public boolean accept(CharSequence text) {
        byte[] bytes = text.toString().getBytes(StandardCharsets.UTF_8);
        return accept(bytes, 0, bytes.length);
    }

    private void decode(boolean endOfInput) {
        pending.flip();
        while (true) {
            chars.clear();
            var result = decoder.decode(pending, chars, endOfInput);
            chars.flip();
            append(chars);
            if (full || !result.isOverflow()) {
                break;
            }
        }
        if (full && pending.hasRemaining()) {
            truncated = true;
        }
        pending.compact();
        if (full) {
            pending.clear();
        }
    }

    private void append(CharBuffer cb) {
        int room = limit - kept.length();
        if (cb.remaining() <= room) {
            kept.append(cb);
            return;
        }
        int n = room;
        if (n > 0 && Character.isHighSurrogate(cb.get(cb.position() + n - 1))) {
            n--; // never keep half of a surrogate pair
        }
        kept.append(cb, cb.position(), cb.position() + n);
        full = true;
        truncated = true;
    }

    /** Flushes a trailing partial character (as U+FFFD) at end of stream. Idempotent. */
    public void finish() {
        if (finished) {
            return;
        }
        finished = true;
        if (!full) {
            decode(true);
            pending.flip();
            chars.clear();
            decoder.flush(chars);
            chars.flip();
            append(chars);
        }
    }

    /** {@return the kept text, at most {@code limit} characters; calls {@link #finish()}} */
    public String text() {
        finish();
        return kept.toString();
    }

    /** {@return how many characters are kept so far (without finishing the stream)} */
    public int keptLength() {
        return kept.length();
    }

    /**
     * {@return the kept characters from {@code start} to {@code end}, for streaming what arrived since}
     *
     * @param start the first index, from 0
     * @param end the index after the last, at most {@link #keptLength()}
     */
    public String kept(int start, int end) {
        return kept.substring(start, end);
    }

    /** {@return true when anything was dropped: characters past the limit or bytes past the hard cap} */
    public boolean truncated() {
        return truncated;
    }

    /** {@return the bytes received, up to the hard cap} */
    public long totalBytes() {
        return totalBytes;
    }

    /** {@return true when the hard cap was reached} */
    public boolean capped() {
        return capped;
    }

    /**
     * {@return {@code s} without control characters except newline, carriage return and tab (C0, DEL and C1)}
     *
     * @param s the text
     */
    public static String stripControlCharacters(String s) {
        StringBuilder sb = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean control = (c < 0x20 && c != '\n' && c != '\r' && c != '\t') || (c >= 0x7f && c <= 0x9f);
            if (control) {
                if (sb == null) {
                    sb = new StringBuilder(s.length()).append(s, 0, i);
                }
            } else if (sb != null) {
                sb.append(c);
            }
        }
        return sb == null ? s : sb.toString();
    }
}
