package dev.sandbox4j.spi;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Keeps the first {@code limit} characters of one output stream and counts the rest.
 *
 * <p>Memory stays bounded whatever the sandbox prints, and grows with what it prints: the characters
 * kept (at most {@code limit}), a decoding buffer the size of the largest chunk seen (at most 8192
 * characters, none before the first byte), and at most three bytes of a character split across chunks.
 * An exec that prints {@code 42} allocates a few hundred bytes here, not a preallocated buffer. Bytes are decoded as UTF-8 as they arrive
 * (malformed input becomes U+FFFD), and the cut never splits a character, surrogate pairs included.
 * Once {@code hardCapBytes} bytes have arrived, {@link #accept} returns {@code false}: the caller
 * stops reading and kills the command. Not thread-safe: one limiter per stream and reader.
 *
 * @since 0.1.0
 */
public final class OutputLimiter {
    private static final int MAX_CHARS = 8192;
    private static final int MIN_CHARS = 64;
    private final int limit;
    private final long hardCapBytes;
    private final CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPLACE)
            .onUnmappableCharacter(CodingErrorAction.REPLACE);
    private final StringBuilder kept = new StringBuilder();
    // the bytes of a character split across accept calls (at most 3), decoded with the next bytes
    private byte[] carry;
    private int carryLen;
    // decoded characters on their way to kept; made on the first byte, grown to the chunk size, at most MAX_CHARS
    private CharBuffer chars;
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
        } else if (take > 0) {
            feed(b, off, take);
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

    /** Decodes {@code len} bytes of {@code b} after what is carried; what does not fit the limit is dropped. */
    private void feed(byte[] b, int off, int len) {
        int pos = off;
        int end = off + len;
        if (carryLen > 0) {
            // finish the carried character with the first bytes of b (a character has at most 4 bytes)
            int add = Math.min(carry.length - carryLen, len);
            System.arraycopy(b, pos, carry, carryLen, add);
            ByteBuffer in = ByteBuffer.wrap(carry, 0, carryLen + add);
            decode(in, false, add);
            if (full) {
                truncated = true;
                carryLen = 0;
                return;
            }
            int consumed = in.position();
            if (consumed >= carryLen) {
                pos += consumed - carryLen; // the rest of b's bytes are decoded from b itself
                carryLen = 0;
            } else if (pos + add == end) {
                keepCarry(in); // still one unfinished character, of carried bytes and all of b's
                return;
            } else {
                // cannot happen for UTF-8 (a carried prefix and 4 bytes always resolve its first
                // character); joined, so that nothing is lost if it did
                byte[] joined = new byte[carryLen - consumed + end - pos];
                int kept = carryLen - consumed;
                System.arraycopy(carry, consumed, joined, 0, kept);
                System.arraycopy(b, pos, joined, kept, end - pos);
                carryLen = 0;
                feed(joined, 0, joined.length);
                return;
            }
        }
        if (pos < end) {
            ByteBuffer in = ByteBuffer.wrap(b, pos, end - pos);
            decode(in, false, end - pos);
            if (full) {
                if (in.hasRemaining()) {
                    truncated = true;
                }
            } else {
                keepCarry(in); // an unfinished character at the end: at most 3 bytes
            }
        }
    }

    private void keepCarry(ByteBuffer in) {
        int n = in.remaining();
        if (n == 0) {
            carryLen = 0;
            return;
        }
        if (carry == null) {
            carry = new byte[4];
        }
        in.get(carry, 0, n);
        carryLen = n;
    }

    /** Decodes {@code in} into kept until it underflows or kept is full; {@code size} sizes the buffer. */
    private void decode(ByteBuffer in, boolean endOfInput, int size) {
        CharBuffer out = chars(size);
        while (true) {
            out.clear();
            var result = decoder.decode(in, out, endOfInput);
            out.flip();
            append(out);
            if (full || !result.isOverflow()) {
                break;
            }
        }
    }

    private CharBuffer chars(int size) {
        int want = Math.min(MAX_CHARS, Math.max(MIN_CHARS, size));
        if (chars == null || chars.capacity() < want) {
            chars = CharBuffer.allocate(want);
        }
        return chars;
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
            ByteBuffer in = ByteBuffer.wrap(carry == null ? new byte[0] : carry, 0, carryLen);
            carryLen = 0;
            decode(in, true, MIN_CHARS);
            if (!full) {
                CharBuffer out = chars(MIN_CHARS);
                out.clear();
                decoder.flush(out);
                out.flip();
                append(out);
            }
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
