package dev.sandbox4j.e2b.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import okio.Buffer;
import okio.BufferedSource;
import okio.Okio;
import okio.Source;
import okio.Timeout;
import org.junit.jupiter.api.Test;

class ConnectFramesTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    static JsonNode recording(String name) throws IOException {
        try (InputStream in = ConnectFramesTest.class.getResourceAsStream("/recordings/" + name)) {
            return JSON.readTree(in);
        }
    }

    @Test
    void envelopeMatchesTheRecordedStartRequestByteForByte() throws Exception {
        JsonNode start = recording("e2b-a-command.json").get(2);
        assertEquals("/process.Process/Start", start.path("path").asText());
        byte[] recorded = Base64.getDecoder().decode(start.path("body").path("rawBase64").asText());
        byte[] payload = java.util.Arrays.copyOfRange(recorded, 5, recorded.length);
        assertArrayEquals(recorded, ConnectFrames.envelope(payload));
        assertEquals("0000000057", hex(ConnectFrames.envelope(payload), 5));
        // and Jackson writes the recorded message with the same bytes
        JsonNode message = start.path("body").path("envelopes").get(0).path("json");
        assertArrayEquals(recorded, ConnectFrames.envelope(JSON.writeValueAsBytes(message)));
    }

    @Test
    void readsTheRecordedResponseFrames() throws Exception {
        JsonNode frames = recording("e2b-a-command.json").get(2).path("response").path("frames");
        Buffer b = new Buffer();
        for (JsonNode f : frames) {
            byte[] p = JSON.writeValueAsBytes(f.path("json"));
            byte[] env = ConnectFrames.envelope(p);
            env[0] = (byte) f.path("flags").asInt();
            b.write(env);
        }
        ConnectFrames.Reader r = new ConnectFrames.Reader(b, 1 << 20);
        int n = 0;
        ConnectFrames.Frame last = null;
        for (ConnectFrames.Frame f; (f = r.next()) != null; n++) {
            last = f;
        }
        assertEquals(6, n);
        assertTrue(last.isEndStream());
        assertEquals("{}", new String(last.payload(), StandardCharsets.UTF_8));
    }

    @Test
    void hostileLengthPrefixesAreRefusedWithoutReadingOrAllocating() {
        for (long len : new long[] {0xFFFFFFFFL, 1L << 30, (1 << 20) + 1}) {
            // a source that would hand out a gigabyte of zeros if asked: the reader must not ask
            CountingSource body = new CountingSource(new byte[] {0, (byte) (len >>> 24), (byte) (len >>> 16),
                    (byte) (len >>> 8), (byte) len});
            ConnectFrames.Reader r = new ConnectFrames.Reader(Okio.buffer(body), 1 << 20);
            StreamRefusedException e = assertThrows(StreamRefusedException.class, r::next);
            assertTrue(e.getMessage().contains("exceeds the limit"), e.getMessage());
            assertTrue(body.served < 64 * 1024, "read " + body.served + " bytes of a hostile frame");
        }
    }

    @Test
    void compressedAndUnknownFlagsAndTruncationAreRefused() {
        assertThrows(StreamRefusedException.class,
                () -> new ConnectFrames.Reader(new Buffer().write(new byte[] {1, 0, 0, 0, 2, '{', '}'}), 1024).next());
        assertThrows(StreamRefusedException.class,
                () -> new ConnectFrames.Reader(new Buffer().write(new byte[] {(byte) 0x80, 0, 0, 0, 0}), 1024).next());
        assertThrows(EOFException.class,
                () -> new ConnectFrames.Reader(new Buffer().write(new byte[] {0, 0, 0, 0, 9, '{'}), 1024).next());
        assertThrows(EOFException.class,
                () -> new ConnectFrames.Reader(new Buffer().write(new byte[] {0, 0}), 1024).next());
    }

    @Test
    void cleanEndBetweenFramesIsNull() throws Exception {
        BufferedSource s = new Buffer().write(ConnectFrames.envelope("{}".getBytes(StandardCharsets.UTF_8)));
        ConnectFrames.Reader r = new ConnectFrames.Reader(s, 1024);
        assertEquals(0, r.next().flags());
        assertNull(r.next());
    }

    @Test
    void base64AcceptsBothAlphabetsAndMissingPadding() throws Exception {
        assertArrayEquals(new byte[] {(byte) 0xfb, (byte) 0xff}, ProcessStream.decode("+/8="));
        assertArrayEquals(new byte[] {(byte) 0xfb, (byte) 0xff}, ProcessStream.decode("-_8"));
        assertThrows(StreamRefusedException.class, () -> ProcessStream.decode("not base64!"));
    }

    private static String hex(byte[] b, int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            sb.append(String.format("%02x", b[i]));
        }
        return sb.toString();
    }

    /** The header bytes, then zeros forever, counting what was served. */
    private static final class CountingSource implements Source {
        private final byte[] head;
        long served;

        CountingSource(byte[] head) {
            this.head = head;
        }

        @Override
        public long read(Buffer sink, long byteCount) {
            long n = Math.min(byteCount, 8192);
            for (long i = 0; i < n; i++) {
                sink.writeByte(served + i < head.length ? head[(int) (served + i)] : 0);
            }
            served += n;
            return n;
        }

        @Override
        public Timeout timeout() {
            return Timeout.NONE;
        }

        @Override
        public void close() {
        }
    }
}
