package dev.sandbox4j.daytona.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.spi.OutputSink;
import dev.sandbox4j.http.HttpTransport;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ExecResponseReaderTest {

    private static ExecResponseReader.Parsed read(String json, StringBuilder out) throws IOException {
        return ExecResponseReader.read(new ByteArrayInputStream(json.getBytes(StandardCharsets.UTF_8)), t -> {
            out.append(t);
            return true;
        });
    }

    @Test
    void readsExitCodeAndResultInEitherOrder() throws IOException {
        StringBuilder out = new StringBuilder();
        ExecResponseReader.Parsed p = read("{\"exitCode\":3,\"result\":\"a\\nb\"}", out);
        assertEquals(3, p.exitCode);
        assertEquals("a\nb", out.toString());
        out.setLength(0);
        p = read(" {\n \"result\" : \"x\" ,\"artifacts\":{\"charts\":[{\"type\":\"line\",\"elements\":[[1,2.5e3],null,true]}]},"
                + "\"exitCode\" : -1 }", out);
        assertEquals(-1, p.exitCode);
        assertEquals("x", out.toString());
        assertFalse(p.capped);
    }

    @Test
    void decodesEveryEscapeAndNonAscii() throws IOException {
        // what Go's encoding/json writes: \u003c for <, \ufffd for invalid UTF-8, raw non-ASCII otherwise
        String text = "q\"b\\s/\b\f\n\r\t <&> é 漢 😀 \u0000 \ufffd";
        String json = HttpTransport.JSON.writeValueAsString(java.util.Map.of("result", text, "exitCode", 0))
                .replace("<", "\\u003c").replace("😀", "\\ud83d\\ude00");
        StringBuilder out = new StringBuilder();
        assertEquals(0, read(json, out).exitCode);
        assertEquals(text, out.toString());
    }

    @Test
    void neverSplitsASurrogatePairAcrossChunks() throws IOException {
        String text = "a".repeat(8191) + "😀" + "b".repeat(9000);
        List<String> chunks = new ArrayList<>();
        ExecResponseReader.read(new ByteArrayInputStream(("{\"result\":\"" + text + "\",\"exitCode\":0}")
                .getBytes(StandardCharsets.UTF_8)), t -> chunks.add(t.toString()));
        assertEquals(text, String.join("", chunks));
        for (String c : chunks) {
            assertFalse(Character.isHighSurrogate(c.charAt(c.length() - 1)), "chunk ends in half a pair");
        }
    }

    @Test
    void oldDaemonsCodeFieldAndAMissingExitCode() throws IOException {
        assertEquals(5, read("{\"code\":5,\"result\":\"\"}", new StringBuilder()).exitCode);
        assertNull(read("{\"result\":\"only\"}", new StringBuilder()).exitCode);
        assertNull(read("{}", new StringBuilder()).exitCode);
    }

    @Test
    void stopsReadingAtTheHardCapWithBoundedMemory() throws IOException {
        long size = 1L << 31; // 2 GiB of output, never materialised
        CountingStream body = new CountingStream(size);
        OutputSink sink = new OutputSink(Execution.builder("x").outputLimit(50).hardCapBytes(4 * 1024 * 1024).build());
        ExecResponseReader.Parsed p = ExecResponseReader.read(body, sink::stdout);
        assertTrue(p.capped);
        assertNull(p.exitCode);
        assertEquals("x".repeat(50), sink.stdoutLimiter().text());
        assertEquals(4 * 1024 * 1024, sink.stdoutLimiter().totalBytes());
        assertTrue(body.served < 5 * 1024 * 1024, "read " + body.served + " bytes");
    }

    @Test
    void malformedOrTruncatedBodiesAreIoErrors() {
        for (String bad : List.of("", "[]", "{\"result\":\"abc", "{\"result\":\"\\x\"}", "{\"exitCode\":1.5}",
                "{\"exitCode\":99999999999}", "{\"result\":\"a\" \"exitCode\":0}", "{\"a\":nope-nope-nope-nope-nope-nope-nope}",
                "{\"result\":\"\\u12G4\"}", "{\"a\":" + "[".repeat(100) + "]".repeat(100) + "}")) {
            assertThrows(IOException.class, () -> read(bad, new StringBuilder()), bad);
        }
    }

    /** {"result":"xxxx... (size x's, never closed)" generated on the fly; counts bytes served. */
    private static final class CountingStream extends InputStream {
        private final byte[] head = "{\"result\":\"".getBytes(StandardCharsets.UTF_8);
        private final long size;
        long served;

        CountingStream(long size) {
            this.size = size;
        }

        @Override
        public int read() {
            byte[] b = new byte[1];
            return read(b, 0, 1) < 0 ? -1 : b[0];
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (served >= size) {
                return -1;
            }
            int n = (int) Math.min(len, size - served);
            for (int i = 0; i < n; i++) {
                long at = served + i;
                b[off + i] = at < head.length ? head[(int) at] : (byte) 'x';
            }
            served += n;
            return n;
        }
    }
}
