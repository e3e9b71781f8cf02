package dev.sandbox4j.docker.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The Engine API's multiplexed stream: streams kept apart, memory bounded whatever a header claims. */
class ExecStreamTest {
    static byte[] frame(int stream, byte[] payload) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int n = payload.length;
        b.write(stream);
        b.write(0);
        b.write(0);
        b.write(0);
        b.write(n >>> 24);
        b.write(n >>> 16);
        b.write(n >>> 8);
        b.write(n);
        b.write(payload, 0, n);
        return b.toByteArray();
    }

    @Test
    void framesGoToTheirStreams() throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        all.writeBytes(frame(1, "out1 ".getBytes(StandardCharsets.UTF_8)));
        all.writeBytes(frame(2, "err".getBytes(StandardCharsets.UTF_8)));
        all.writeBytes(frame(1, "out2".getBytes(StandardCharsets.UTF_8)));
        all.writeBytes(frame(3, "engine".getBytes(StandardCharsets.UTF_8)));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        ExecStream.End end = ExecStream.pump(new ByteArrayInputStream(all.toByteArray()), (s, b, off, len) -> {
            (s == 1 ? out : err).write(b, off, len);
            return true;
        });
        assertEquals(ExecStream.End.EOF, end);
        assertEquals("out1 out2", out.toString(StandardCharsets.UTF_8));
        assertEquals("errengine", err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aHugeClaimedLengthIsReadInChunksAndStopsAtTheCap() throws IOException {
        // a header claiming 4 GiB followed by an endless stream: the target sees chunks and stops the read
        byte[] header = {1, 0, 0, 0, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff};
        InputStream endless = new InputStream() {
            int pos;

            @Override
            public int read() {
                return pos < 8 ? header[pos++] & 0xff : 'x';
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (pos < 8) {
                    int n = Math.min(len, 8 - pos);
                    System.arraycopy(header, pos, b, off, n);
                    pos += n;
                    return n;
                }
                java.util.Arrays.fill(b, off, off + len, (byte) 'x');
                return len;
            }
        };
        long[] seen = {0, 0};
        ExecStream.End end = ExecStream.pump(endless, (s, b, off, len) -> {
            seen[0] += len;
            seen[1] = Math.max(seen[1], len);
            return seen[0] < (1 << 20);
        });
        assertEquals(ExecStream.End.CAPPED, end);
        assertTrue(seen[1] <= 64 * 1024, "chunks are bounded: " + seen[1]);
    }

    @Test
    void aStreamCutInsideAFrameIsAnError() {
        byte[] f = frame(1, "abcdef".getBytes(StandardCharsets.UTF_8));
        byte[] cut = java.util.Arrays.copyOf(f, f.length - 2);
        assertThrows(IOException.class, () -> ExecStream.pump(new ByteArrayInputStream(cut), (s, b, off, len) -> true));
        assertThrows(IOException.class, () -> ExecStream.pump(new ByteArrayInputStream(new byte[] {1, 0, 0}), (s, b, off, len) -> true));
    }
}
