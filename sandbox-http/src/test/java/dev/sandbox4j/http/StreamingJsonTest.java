package dev.sandbox4j.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class StreamingJsonTest {

    private static StreamingJson json(String s) {
        return StreamingJson.builder(new ByteArrayInputStream(s.getBytes(StandardCharsets.UTF_8))).build();
    }

    /** One byte per read: every escape and multi-byte character crosses a buffer boundary. */
    private static InputStream oneByteAtATime(byte[] bytes) {
        return new ByteArrayInputStream(bytes) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                return super.read(b, off, Math.min(len, 1));
            }
        };
    }

    private static String bytesOf(StreamingJson j) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertTrue(j.streamBytes((b, off, len) -> {
            out.write(b, off, len);
            return true;
        }));
        return out.toString(StandardCharsets.UTF_8);
    }

    private static String textOf(StreamingJson j) throws IOException {
        StringBuilder out = new StringBuilder();
        assertTrue(j.streamText(t -> {
            out.append(t);
            return true;
        }));
        return out.toString();
    }

    /** The string value of the first field of a one-field object, as bytes and as text. */
    private static void assertDecodes(String expected, byte[] object) throws IOException {
        for (boolean text : new boolean[] {false, true}) {
            StreamingJson j = StreamingJson.builder(oneByteAtATime(object)).build();
            assertTrue(j.nextObject());
            j.nextField();
            assertEquals(expected, text ? textOf(j) : bytesOf(j), text ? "as text" : "as bytes");
            assertNull(j.nextField());
            assertFalse(j.nextObject());
        }
    }

    /**
     * Objects larger than the first read buffer, read with every read filling it, so the buffer grows
     * between reads (1 KiB, 4 KiB, 16 KiB) in the middle of a string, an escape and a captured tree.
     */
    @Test
    void readsAcrossTheBufferGrowingWhileReadsFillIt() throws IOException {
        StringBuilder big = new StringBuilder();
        StringBuilder doc = new StringBuilder();
        for (int i = 0; big.length() < 100_000; i++) {
            big.append("line ").append(i).append(i % 7 == 0 ? "\\n\\u00e9\\\"" : "-");
        }
        doc.append("{\"a\":\"").append(big).append("\",\"t\":[");
        for (int i = 0; i < 3000; i++) {
            doc.append(i == 0 ? "" : ",").append(i);
        }
        doc.append("],\"z\":\"end\"}");
        String expected = (String) HttpTransport.JSON.readValue("\"" + big + "\"", String.class);
        StreamingJson j = json(doc.toString());
        assertTrue(j.nextObject());
        assertEquals("a", j.nextField());
        assertEquals(expected, bytesOf(j));
        assertEquals("t", j.nextField());
        assertEquals(2999, j.capture().get(2999).asInt());
        assertEquals("z", j.nextField());
        assertEquals("end", bytesOf(j));
        assertNull(j.nextField());
        assertFalse(j.nextObject());
    }

    @Test
    void readsObjectsOneAfterAnotherFieldByField() throws IOException {
        StreamingJson j = json("{\"s\":\"x\",\"tree\":{\"c\":[1,2.5e3,\"}\"],\"d\":null} , \"skipped\":[{\"a\":[]},false],"
                + "\"n\":-7}\n{}\n  {\"k\" : \"v\"}  \n");
        assertTrue(j.nextObject());
        assertEquals("s", j.nextField());
        assertEquals('"', j.peekValue());
        assertEquals("x", bytesOf(j));
        assertEquals("tree", j.nextField());
        assertEquals('{', j.peekValue());
        JsonNode tree = j.capture();
        assertEquals(2500.0, tree.get("c").get(1).asDouble());
        assertEquals("}", tree.get("c").get(2).asText());
        assertTrue(tree.get("d").isNull());
        assertEquals("skipped", j.nextField());
        j.skip();
        assertEquals("n", j.nextField());
        assertEquals(-7, j.capture().intValue());
        assertNull(j.nextField());
        assertTrue(j.nextObject());
        assertNull(j.nextField());
        assertTrue(j.nextObject());
        assertEquals("k", j.nextField());
        assertEquals("v", textOf(j));
        assertNull(j.nextField());
        assertFalse(j.nextObject());
    }

    @Test
    void decodesEveryEscapeAndKeepsRawUtf8AcrossReads() throws IOException {
        String object = "{\"d\":\"a\\n\\t\\\"q\\\"\\\\ \\/ \\b\\f\\r \\u00e9 \\u6F22 \\ud83d\\ude00 é 漢 😀 \\u0000\"}";
        assertDecodes("a\n\t\"q\"\\ / \b\f\r é 漢 😀 é 漢 😀 \u0000", object.getBytes(StandardCharsets.UTF_8));
        StreamingJson j = json("{\"a\\u0062\\n\":1}");
        j.nextObject();
        assertEquals("ab\n", j.nextField());
    }

    @Test
    void aLoneSurrogateEscapeBecomesUFFFD() throws IOException {
        String object = "{\"d\":\"hi:\\ud83dx hh:\\ud83d\\ud83d\\ude00 lo:\\ude00 hn:\\ud83d\\n end:\\ud83d\"}";
        assertDecodes("hi:\uFFFDx hh:\uFFFD😀 lo:\uFFFD hn:\uFFFD\n end:\uFFFD", object.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void textReplacesMalformedUtf8AsAStreamDecoderDoes() throws IOException {
        ByteArrayOutputStream object = new ByteArrayOutputStream();
        object.writeBytes("{\"d\":\"a".getBytes(StandardCharsets.UTF_8));
        object.writeBytes(new byte[] {(byte) 0xFF, 'b', (byte) 0xC3, '\\', 'n', (byte) 0xE2, (byte) 0x82});
        object.writeBytes("\"}".getBytes(StandardCharsets.UTF_8));
        StreamingJson j = StreamingJson.builder(oneByteAtATime(object.toByteArray())).build();
        j.nextObject();
        j.nextField();
        assertEquals("a\uFFFDb\uFFFD\n\uFFFD", textOf(j));
        // as bytes, the string goes through as the server sent it
        j = StreamingJson.builder(new ByteArrayInputStream(object.toByteArray())).build();
        j.nextObject();
        j.nextField();
        ByteArrayOutputStream raw = new ByteArrayOutputStream();
        j.streamBytes((b, off, len) -> {
            raw.write(b, off, len);
            return true;
        });
        assertArrayEquals(new byte[] {'a', (byte) 0xFF, 'b', (byte) 0xC3, '\n', (byte) 0xE2, (byte) 0x82}, raw.toByteArray());
    }

    @Test
    void textNeverSplitsACharacterBetweenPieces() throws IOException {
        for (int shift = 0; shift < 4; shift++) {
            String text = "a".repeat(8190 + shift) + "😀漢".repeat(5000) + "\\ud83d\\ude00" + "b".repeat(9000);
            StreamingJson j = json("{\"d\":\"" + text + "\"}");
            j.nextObject();
            j.nextField();
            List<String> pieces = new ArrayList<>();
            assertTrue(j.streamText(t -> pieces.add(t.toString())));
            assertEquals(text.replace("\\ud83d\\ude00", "😀"), String.join("", pieces));
            for (String p : pieces) {
                assertTrue(p.length() <= 8192, "a piece of " + p.length());
                assertFalse(Character.isHighSurrogate(p.charAt(p.length() - 1)), "a piece ends in half a pair");
                assertFalse(Character.isLowSurrogate(p.charAt(0)), "a piece starts in half a pair");
            }
        }
    }

    @Test
    void aSinkReturningFalseStopsAtOnceAndTheReaderIsDone() throws IOException {
        Generated in = new Generated("{\"d\":\"", 'x', 1L << 30, "\"}");
        StreamingJson j = StreamingJson.builder(in).build();
        j.nextObject();
        j.nextField();
        int[] calls = new int[1];
        assertFalse(j.streamBytes((b, off, len) -> ++calls[0] < 3));
        assertEquals(3, calls[0]);
        assertTrue(in.served <= 3 * 16384 + 16384, "read " + in.served + " bytes");
        assertThrows(IllegalStateException.class, j::nextField);
        assertThrows(IllegalStateException.class, j::nextObject);

        j = json("{\"d\":\"" + "y".repeat(100_000) + "\",\"e\":1}");
        j.nextObject();
        j.nextField();
        assertFalse(j.streamText(t -> false));
        assertThrows(IllegalStateException.class, j::nextField);
    }

    @Test
    void aValueMustBeTakenOnceAndAStreamNeedsAString() throws IOException {
        StreamingJson j = json("{\"a\":1,\"b\":2}");
        j.nextObject();
        j.nextField();
        assertThrows(IllegalStateException.class, j::nextField);
        StreamingJson k = json("{\"a\":1}");
        k.nextObject();
        k.nextField();
        assertThrows(StreamingJson.FormatException.class, () -> k.streamBytes((b, off, len) -> true));
        assertThrows(IllegalStateException.class, () -> json("{}").nextField());
        assertThrows(IllegalArgumentException.class, () -> StreamingJson.builder(InputStream.nullInputStream()).maxDepth(0));
    }

    @Test
    void unterminatedInputIsATruncation() {
        for (String bad : List.of("{", "{\"ke", "{\"k\"", "{\"k\":", "{\"k\":\"va", "{\"k\":\"a\\", "{\"k\":\"\\u12",
                "{\"k\":{\"a\":[1,", "{\"k\":[\"a", "{\"k\":1", "{\"k\":1,", "{\"k\":no", "{\"k\":[tr")) {
            for (int how = 0; how < 4; how++) {
                if (how < 2 && bad.matches("\\{\"k\":[^\"].*")) {
                    continue; // a stream wants a string: other values are refused before being read
                }
                int h = how;
                IOException e = assertThrows(IOException.class, () -> take(json(bad), h), bad + " taken as " + how);
                assertTrue(e instanceof StreamingJson.TruncatedException && e instanceof EOFException,
                        bad + " taken as " + how + ": " + e);
            }
        }
    }

    @Test
    void malformedInputIsAFormatError() {
        for (String bad : List.of("[]", "\"x\"", "<html>", "{\"a\" 1}", "{\"a\":1 \"b\":2}", "{,}", "{\"a\":1,}",
                "{\"a\":\"\\q\"}", "{\"a\":\"\\u12G4\"}", "{\"\\x\":1}", "{\"a\":{\"b\" 1}}", "{\"a\":[1 2]}",
                "{\"a\":{1:2}}", "{\"a\":[1,]}", "{\"a\":[\"\\q\"]}", "{\"a\":[\"\\u00zz\"]}", "{\"a\":#}",
                "{\"a\":{\"b\":1]}", "{\"a\":[1}")) {
            for (int how = 0; how < 4; how++) {
                int h = how;
                if (h < 2 && !bad.startsWith("{\"a\":\"")) {
                    continue; // a stream wants a string: other values are refused before being read
                }
                assertThrows(StreamingJson.FormatException.class, () -> take(json(bad), h), bad + " taken as " + how);
            }
        }
        // what only the tree parser sees: a literal or number that is not one
        for (String bad : List.of("{\"a\":nope}", "{\"a\":1-2}", "{\"a\":[tru]}", "{\"a\":01}")) {
            assertThrows(StreamingJson.FormatException.class, () -> take(json(bad), 2), bad);
        }
    }

    @Test
    void nestingIsBoundedWhenSkippingAndCapturing() throws IOException {
        for (int how = 2; how < 4; how++) {
            StreamingJson ok = StreamingJson.builder(bytes("{\"a\":" + "[".repeat(64) + "]".repeat(64) + "}"))
                    .build();
            ok.nextObject();
            ok.nextField();
            if (how == 2) {
                assertEquals(1, ok.capture().size());
            } else {
                ok.skip();
            }
            assertNull(ok.nextField());
            int h = how;
            assertThrows(StreamingJson.FormatException.class,
                    () -> take(json("{\"a\":" + "[".repeat(65) + "]".repeat(65) + "}"), h));
            // a million brackets: refused at the limit, no recursion to overflow the stack
            assertThrows(StreamingJson.FormatException.class,
                    () -> take(json("{\"a\":" + "[{\"b\":".repeat(1_000_000)), h));
        }
        StreamingJson deep = StreamingJson.builder(bytes("{\"a\":" + "[".repeat(1000) + "]".repeat(1000) + "}"))
                .maxDepth(1000).build();
        deep.nextObject();
        deep.nextField();
        assertEquals(1, deep.capture().size());
    }

    @Test
    void namesValuesAndLiteralsAreBounded() throws IOException {
        StreamingJson j = json("{\"" + "k".repeat(256) + "\":1}");
        j.nextObject();
        assertEquals(256, j.nextField().length());
        assertThrows(StreamingJson.FormatException.class, () -> take(json("{\"" + "k".repeat(257) + "\":1}"), 3));
        assertThrows(StreamingJson.FormatException.class, () -> take(json("{\"" + "é".repeat(129) + "\":1}"), 3));
        // a gigabyte-long name is refused after its first bytes
        Generated huge = new Generated("{\"", 'k', 1L << 30, "\":1}");
        assertThrows(StreamingJson.FormatException.class, () -> take(StreamingJson.builder(huge).build(), 3));
        assertTrue(huge.served <= 2 * 16384, "read " + huge.served);

        StreamingJson small = StreamingJson.builder(bytes("{\"a\":[\"" + "x".repeat(96) + "\"],\"b\":12345678}"))
                .maxFieldBytes(100).build();
        small.nextObject();
        small.nextField();
        assertEquals(96, small.capture().get(0).asText().length()); // [" 96 "] = 100 bytes
        small.nextField();
        small.skip();
        assertThrows(StreamingJson.FormatException.class, () -> take(StreamingJson.builder(
                bytes("{\"a\":[\"" + "x".repeat(97) + "\"]}")).maxFieldBytes(100).build(), 2));
        // skipping keeps nothing: a long string passes, a long number or literal does not
        StreamingJson skipper = StreamingJson.builder(bytes("{\"a\":[\"" + "x".repeat(10_000) + "\"],\"b\":"
                + "1".repeat(8) + "}")).maxFieldBytes(8).build();
        skipper.nextObject();
        skipper.nextField();
        skipper.skip();
        skipper.nextField();
        skipper.skip();
        assertNull(skipper.nextField());
        assertThrows(StreamingJson.FormatException.class, () -> take(StreamingJson.builder(
                bytes("{\"b\":" + "1".repeat(9) + "}")).maxFieldBytes(8).build(), 3));
        assertThrows(StreamingJson.FormatException.class, () -> take(StreamingJson.builder(
                bytes("{\"b\":" + "nope-".repeat(10) + "}")).maxFieldBytes(32).build(), 3));
    }

    @Test
    void aHundredMibStringIsStreamedOrSkippedInBoundedHeap() throws IOException {
        com.sun.management.ThreadMXBean threads = ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t
                ? t : null;
        assumeTrue(threads != null && threads.isThreadAllocatedMemorySupported(),
                "this JVM cannot count a thread's allocations");
        long size = 100L << 20;
        for (int how = 0; how < 3; how++) {
            Generated in = new Generated("{\"d\":\"", 'A', size, "\",\"e\":true}\n");
            StreamingJson j = StreamingJson.builder(in).build();
            long[] total = new long[1];
            long before = threads.getCurrentThreadAllocatedBytes();
            j.nextObject();
            j.nextField();
            if (how == 0) {
                assertTrue(j.streamBytes((b, off, len) -> {
                    total[0] += len;
                    return true;
                }));
            } else if (how == 1) {
                assertTrue(j.streamText(t -> {
                    total[0] += t.length();
                    return true;
                }));
            } else {
                j.skip();
                total[0] = size;
            }
            assertEquals("e", j.nextField());
            j.skip();
            assertNull(j.nextField());
            long allocated = threads.getCurrentThreadAllocatedBytes() - before;
            assertEquals(size, total[0]);
            assertEquals(in.length(), in.served);
            assertTrue(allocated < 1 << 20, "allocated " + allocated + " bytes for a " + size + "-byte string (" + how + ")");
        }
    }

    /** Takes the input's first field: 0 streams bytes, 1 streams text, 2 captures, 3 skips; then the rest. */
    private static void take(StreamingJson j, int how) throws IOException {
        while (j.nextObject()) {
            for (String k = j.nextField(); k != null; k = j.nextField()) {
                switch (how) {
                    case 0 -> j.streamBytes((b, off, len) -> true);
                    case 1 -> j.streamText(t -> true);
                    case 2 -> j.capture();
                    default -> j.skip();
                }
            }
        }
    }

    private static InputStream bytes(String s) {
        return new ByteArrayInputStream(s.getBytes(StandardCharsets.UTF_8));
    }

    /** {@code prefix}, then {@code n} times {@code fill}, then {@code suffix}, made as it is read. */
    private static final class Generated extends InputStream {
        private final byte[] prefix;
        private final byte fill;
        private final long n;
        private final byte[] suffix;
        long served;

        Generated(String prefix, char fill, long n, String suffix) {
            this.prefix = prefix.getBytes(StandardCharsets.UTF_8);
            this.fill = (byte) fill;
            this.n = n;
            this.suffix = suffix.getBytes(StandardCharsets.UTF_8);
        }

        long length() {
            return prefix.length + n + suffix.length;
        }

        @Override
        public int read() {
            throw new UnsupportedOperationException("read in blocks");
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (served >= length()) {
                return -1;
            }
            int k = (int) Math.min(len, length() - served);
            for (int i = 0; i < k; i++) {
                long p = served + i;
                b[off + i] = p < prefix.length ? prefix[(int) p]
                        : p < prefix.length + n ? fill : suffix[(int) (p - prefix.length - n)];
            }
            served += k;
            return k;
        }
    }
}
