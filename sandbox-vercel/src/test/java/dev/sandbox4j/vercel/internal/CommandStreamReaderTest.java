package dev.sandbox4j.vercel.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.http.HttpTransport;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CommandStreamReaderTest {
    private final ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    private final ByteArrayOutputStream stderr = new ByteArrayOutputStream();
    private final List<Integer> chunkSizes = new ArrayList<>();

    private CommandStreamReader reader(InputStream in, long capBytes) {
        return new CommandStreamReader(in, (stream, b, off, len) -> {
            chunkSizes.add(len);
            ByteArrayOutputStream target = stream.equals("stdout") ? stdout : stderr;
            target.write(b, off, len);
            return stdout.size() + stderr.size() < capBytes;
        }, 1 << 16);
    }

    private CommandStreamReader reader(String ndjson) {
        return reader(new ByteArrayInputStream(ndjson.getBytes(StandardCharsets.UTF_8)), Long.MAX_VALUE);
    }

    private static String recordedStream() throws IOException {
        JsonNode rec = HttpTransport.JSON.readTree(
                CommandStreamReaderTest.class.getResourceAsStream("/recordings/vercel-a-deny-all-write-run-stop.json"));
        StringBuilder sb = new StringBuilder();
        for (JsonNode line : rec.get(2).path("response").path("ndjsonLines")) {
            sb.append(HttpTransport.JSON.writeValueAsString(line)).append('\n');
        }
        return sb.toString();
    }

    @Test
    void readsTheRecordedStream() throws IOException {
        CommandStreamReader r = reader(recordedStream());
        CommandStreamReader.Line first = r.next();
        assertEquals("cmd_000003", first.get("command").path("id").asText());
        assertTrue(first.get("command").path("exitCode").isNull());
        assertEquals("stdout", r.next().stream());
        assertEquals("stderr", r.next().stream());
        assertEquals("stdout", r.next().stream());
        CommandStreamReader.Line last = r.next();
        assertEquals(0, last.get("command").path("exitCode").asInt());
        assertEquals(42, last.get("command").path("durationMs").asInt());
        assertNull(r.next());
        assertEquals("hello from stdout\ndone\n", stdout.toString(StandardCharsets.UTF_8));
        assertEquals("warning on stderr\n", stderr.toString(StandardCharsets.UTF_8));
    }

    @Test
    void decodesEveryEscapeAndKeepsRawUtf8() throws IOException {
        String line = "{\"stream\":\"stdout\",\"data\":\"a\\n\\t\\\"q\\\"\\\\ \\/ \\b\\f\\r \\u00e9 \\ud83d\\ude00 é 😀"
                + " lone:\\ud83dx end:\\ude00\"}\n";
        // one byte per read: every escape and multi-byte character crosses a buffer boundary
        InputStream slow = new ByteArrayInputStream(line.getBytes(StandardCharsets.UTF_8)) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                return super.read(b, off, Math.min(len, 1));
            }
        };
        CommandStreamReader r = reader(slow, Long.MAX_VALUE);
        r.next();
        assertEquals("a\n\t\"q\"\\ / \b\f\r é 😀 é 😀 lone:\uFFFDx end:\uFFFD", stdout.toString(StandardCharsets.UTF_8));
        assertNull(r.next());
    }

    @Test
    void aHugeLineIsStreamedInChunksAndCutAtTheCap() throws IOException {
        long declared = 1L << 30; // a gigabyte-long line, produced lazily
        CountingLine in = new CountingLine("{\"stream\":\"stdout\",\"data\":\"", declared);
        CommandStreamReader r = reader(in, 256 * 1024);
        CommandStreamReader.Line line = r.next();
        assertTrue(line.stopped());
        assertTrue(stdout.size() >= 256 * 1024 && stdout.size() < 300 * 1024, "kept " + stdout.size());
        assertTrue(in.served < 300 * 1024, "read " + in.served + " bytes of a " + declared + "-byte line");
        assertTrue(chunkSizes.stream().allMatch(n -> n <= 16384), "chunks " + chunkSizes.stream().distinct().toList());
    }

    @Test
    void aLongLineWithoutCapNeverHoldsMoreThanAChunk() throws IOException {
        int size = 8 << 20;
        CountingLine in = new CountingLine("{\"stream\":\"stderr\",\"data\":\"", size, "\"}\n");
        long[] total = new long[1];
        CommandStreamReader r = new CommandStreamReader(in, (stream, b, off, len) -> {
            assertTrue(len <= 16384, "chunk of " + len);
            total[0] += len;
            return true;
        }, 1 << 16);
        CommandStreamReader.Line line = r.next();
        assertFalse(line.stopped());
        assertEquals(size, total[0]);
        assertEquals(size, line.dataBytes());
        assertNull(r.next());
    }

    @Test
    void dataBeforeItsStreamKeyIsHeldThenDelivered() throws IOException {
        CommandStreamReader r = reader("{\"data\":\"early\",\"stream\":\"stderr\"}\n");
        r.next();
        assertEquals("early", stderr.toString(StandardCharsets.UTF_8));
    }

    @Test
    void errorLinesAndUnknownFieldsAreKept() throws IOException {
        CommandStreamReader r = reader("{\"stream\":\"error\",\"data\":{\"code\":\"sandbox_stream_closed\","
                + "\"message\":\"closed\"},\"extra\":[1,{\"a\":\"}\"}],\"n\":-1.5e3,\"t\":true}\n");
        CommandStreamReader.Line line = r.next();
        assertEquals("error", line.stream());
        assertEquals("sandbox_stream_closed", line.get("data").path("code").asText());
        assertEquals("}", line.get("extra").get(1).path("a").asText());
        assertEquals(-1500.0, line.get("n").asDouble());
        assertTrue(line.get("t").asBoolean());
    }

    @Test
    void oversizedRecordsAndGarbageAreFormatErrors() {
        String big = "{\"command\":{\"args\":[\"" + "x".repeat(70_000) + "\"]}}\n";
        assertThrows(CommandStreamReader.StreamFormatException.class, () -> reader(big).next());
        assertThrows(CommandStreamReader.StreamFormatException.class, () -> reader("<html>\n").next());
        assertThrows(CommandStreamReader.StreamFormatException.class, () -> reader("{\"a\" 1}\n").next());
        assertThrows(CommandStreamReader.StreamFormatException.class, () -> reader("{\"data\":\"\\q\"}\n").next());
    }

    @Test
    void theStreamEndingInsideARecordIsAnEof() {
        assertThrows(EOFException.class, () -> reader("{\"stream\":\"stdout\",\"data\":\"par").next());
        assertThrows(EOFException.class, () -> reader("{\"command\":{\"id\":\"c\"").next());
    }

    /** A line of {@code prefix}, then {@code n} times 'A', then {@code suffix}, generated as it is read. */
    private static final class CountingLine extends InputStream {
        private final byte[] prefix;
        private final byte[] suffix;
        private final long n;
        long served;

        CountingLine(String prefix, long n) {
            this(prefix, n, "");
        }

        CountingLine(String prefix, long n, String suffix) {
            this.prefix = prefix.getBytes(StandardCharsets.UTF_8);
            this.suffix = suffix.getBytes(StandardCharsets.UTF_8);
            this.n = n;
        }

        @Override
        public int read() {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            long total = prefix.length + n + suffix.length;
            if (served >= total) {
                return -1;
            }
            int k = (int) Math.min(len, total - served);
            for (int i = 0; i < k; i++) {
                long p = served + i;
                b[off + i] = p < prefix.length ? prefix[(int) p]
                        : p < prefix.length + n ? (byte) 'A' : suffix[(int) (p - prefix.length - n)];
            }
            served += k;
            return k;
        }
    }
}
