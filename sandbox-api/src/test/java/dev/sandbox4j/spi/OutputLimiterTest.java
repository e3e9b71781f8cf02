package dev.sandbox4j.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class OutputLimiterTest {
    private static final String EMOJI = "\uD83D\uDE00"; // U+1F600, 4 bytes in UTF-8, a surrogate pair in Java

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void keepsEverythingUnderTheLimit() {
        OutputLimiter l = new OutputLimiter(100, 1_000);
        assertTrue(l.accept(utf8("hello\n")));
        assertTrue(l.accept(utf8("wörld €")));
        assertEquals("hello\nwörld €", l.text());
        assertFalse(l.truncated());
        assertFalse(l.capped());
        assertEquals(6 + utf8("wörld €").length, l.totalBytes());
    }

    @Test
    void exactlyTheLimitIsNotTruncatedAndOneMoreIs() {
        OutputLimiter exact = new OutputLimiter(3, 1_000);
        exact.accept(utf8("abc"));
        assertEquals("abc", exact.text());
        assertFalse(exact.truncated());

        OutputLimiter over = new OutputLimiter(3, 1_000);
        over.accept(utf8("abc"));
        over.accept(utf8("d"));
        assertEquals("abc", over.text());
        assertTrue(over.truncated());
        assertEquals(4, over.totalBytes());
    }

    @Test
    void aSurrogatePairAtTheCutIsDroppedWhole() {
        // limit 5: "abcd" fills 4, the emoji needs 2 chars, so it is dropped rather than halved
        OutputLimiter l = new OutputLimiter(5, 1_000);
        l.accept(utf8("abcd" + EMOJI + "e"));
        assertEquals("abcd", l.text());
        assertTrue(l.truncated());
        assertEquals(4 + 4 + 1, l.totalBytes());
        assertValidUtf16(l.text());
    }

    @Test
    void aSurrogatePairThatFitsIsKept() {
        OutputLimiter l = new OutputLimiter(6, 1_000);
        l.accept(utf8("abcd" + EMOJI + "e"));
        assertEquals("abcd" + EMOJI, l.text());
        assertTrue(l.truncated());
    }

    @ParameterizedTest(name = "limit {0}")
    @ValueSource(ints = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
    void noLimitEverSplitsACharacter(int limit) {
        // 1-, 2-, 3- and 4-byte characters in a row, repeated: every cut position is tried
        String text = ("a" + "é" + "€" + EMOJI).repeat(3);
        OutputLimiter l = new OutputLimiter(limit, 1_000);
        l.accept(utf8(text));
        String kept = l.text();
        assertValidUtf16(kept);
        assertTrue(text.startsWith(kept), kept);
        assertTrue(kept.length() <= limit);
        assertTrue(kept.length() >= limit - 1, "at most the half of a pair is left out");
        assertEquals(kept.length() < text.length(), l.truncated());
    }

    @Test
    void bytesOfOneCharacterSplitAcrossAcceptCallsAreJoined() {
        byte[] all = utf8("x" + EMOJI + "€é" + EMOJI);
        OutputLimiter l = new OutputLimiter(100, 1_000);
        for (byte b : all) {
            assertTrue(l.accept(new byte[] {b}));
        }
        assertEquals("x" + EMOJI + "€é" + EMOJI, l.text());
        assertFalse(l.truncated());
        assertEquals(all.length, l.totalBytes());
    }

    @Test
    void everySplitPointOfAFourByteCharacterDecodesTheSame() {
        byte[] all = utf8("ab" + EMOJI + "cd");
        for (int cut = 0; cut <= all.length; cut++) {
            OutputLimiter l = new OutputLimiter(100, 1_000);
            l.accept(all, 0, cut);
            l.accept(all, cut, all.length - cut);
            assertEquals("ab" + EMOJI + "cd", l.text(), "cut at " + cut);
        }
    }

    @Test
    void offsetAndLengthAreHonoured() {
        byte[] buf = utf8("XXhelloXX");
        OutputLimiter l = new OutputLimiter(100, 1_000);
        l.accept(buf, 2, 5);
        assertEquals("hello", l.text());
        assertEquals(5, l.totalBytes());
    }

    @Test
    void malformedInputBecomesReplacementCharacters() {
        OutputLimiter l = new OutputLimiter(100, 1_000);
        l.accept(new byte[] {'a', (byte) 0xFF, 'b', (byte) 0xC3, 'c', (byte) 0xED, (byte) 0xA0, (byte) 0x80, 'd'});
        String text = l.text();
        assertTrue(text.startsWith("a\uFFFDb\uFFFDc"), text);
        assertTrue(text.endsWith("d"), text);
        assertValidUtf16(text);
        assertFalse(text.chars().anyMatch(c -> Character.isSurrogate((char) c)), "an encoded surrogate never becomes a lone surrogate");
    }

    @Test
    void aPartialCharacterAtEndOfStreamBecomesOneReplacementCharacter() {
        byte[] emoji = utf8(EMOJI);
        OutputLimiter l = new OutputLimiter(100, 1_000);
        l.accept(utf8("ok"));
        l.accept(emoji, 0, 3);
        assertEquals("ok\uFFFD", l.text());
        assertEquals("ok\uFFFD", l.text(), "text() is repeatable");
        assertEquals(5, l.totalBytes());
    }

    @Test
    void hardCapReturnsFalseAndCountsStopAtTheCap() {
        OutputLimiter l = new OutputLimiter(4, 10);
        assertTrue(l.accept(utf8("12345678")));
        assertFalse(l.capped());
        assertFalse(l.accept(utf8("abcde")), "the cap is reached within this call");
        assertTrue(l.capped());
        assertEquals(10, l.totalBytes());
        assertFalse(l.accept(utf8("more")), "stays false");
        assertEquals(10, l.totalBytes());
        assertEquals("1234", l.text());
        assertTrue(l.truncated());
    }

    @Test
    void hardCapReachedExactlyReturnsFalse() {
        OutputLimiter l = new OutputLimiter(100, 4);
        assertFalse(l.accept(utf8("abcd")));
        assertTrue(l.capped());
        assertEquals("abcd", l.text());
        assertFalse(l.truncated(), "nothing was dropped, though reading must stop");
    }

    @Test
    void hardCapBelowTheLimitKeepsWhatArrivedAndMarksTruncation() {
        OutputLimiter l = new OutputLimiter(100, 6);
        assertFalse(l.accept(utf8("abcdefgh")));
        assertEquals("abcdef", l.text());
        assertTrue(l.truncated());
        assertEquals(6, l.totalBytes());
    }

    @Test
    void textIsCountedAsUtf8Bytes() {
        OutputLimiter l = new OutputLimiter(100, 1_000);
        l.accept("é" + EMOJI);
        assertEquals("é" + EMOJI, l.text());
        assertEquals(6, l.totalBytes());
    }

    @Test
    void zeroLimitKeepsNothingButCounts() {
        OutputLimiter l = new OutputLimiter(0, 1_000);
        assertTrue(l.accept(utf8("abc")));
        assertEquals("", l.text());
        assertTrue(l.truncated());
        assertEquals(3, l.totalBytes());
    }

    @Test
    void emptyStreamIsEmptyAndNotTruncated() {
        OutputLimiter l = new OutputLimiter(10, 10);
        assertTrue(l.accept(new byte[0]));
        assertEquals("", l.text());
        assertFalse(l.truncated());
        assertEquals(0, l.totalBytes());
    }

    @Test
    void rejectsNonsenseLimits() {
        assertThrows(IllegalArgumentException.class, () -> new OutputLimiter(-1, 10));
        assertThrows(IllegalArgumentException.class, () -> new OutputLimiter(10, 0));
    }

    @Test
    void aHundredMegabytesKeepOnlyTheLimit() {
        int limit = 1_000;
        long total = 100L * 1024 * 1024;
        OutputLimiter l = new OutputLimiter(limit, Long.MAX_VALUE);
        byte[] chunk = new byte[64 * 1024];
        Arrays.fill(chunk, (byte) 'x'); // one line with no newline: hostile framing
        for (long sent = 0; sent < total; sent += chunk.length) {
            assertTrue(l.accept(chunk));
        }
        assertEquals(total, l.totalBytes());
        assertEquals(limit, l.text().length());
        assertTrue(l.truncated());
    }

    @Test
    void aHundredMegabytesOfMultibyteTextKeepOnlyTheLimit() {
        int limit = 999; // odd, so a surrogate pair straddles the cut
        long total = 100L * 1024 * 1024;
        OutputLimiter l = new OutputLimiter(limit, Long.MAX_VALUE);
        byte[] chunk = utf8(EMOJI.repeat(16 * 1024)); // 64 KiB
        for (long sent = 0; sent < total; sent += chunk.length) {
            l.accept(chunk);
        }
        assertEquals(total, l.totalBytes());
        assertEquals(998, l.text().length());
        assertValidUtf16(l.text());
    }

    @Test
    void stripsControlCharactersButKeepsNewlinesTabsAndCarriageReturns() {
        String in = "a\u0000b\u001b[31mred\u001b[0m\u0007\u007f\u0085\u009bc\td\r\ne\u00a0é" + EMOJI;
        assertEquals("ab[31mred[0mc\td\r\ne\u00a0é" + EMOJI, OutputLimiter.stripControlCharacters(in));
        String clean = "plain text\n";
        assertTrue(clean == OutputLimiter.stripControlCharacters(clean), "no copy when nothing is stripped");
    }

    /**
     * Random bytes (valid text, malformed sequences, characters of every length) cut into random chunks
     * decode to what the JDK decodes the whole array to, for 20,000 inputs: the carried bytes of a split
     * character and the per-chunk buffers change nothing.
     */
    @Test
    void randomChunksDecodeAsTheWholeArray() {
        java.util.Random random = new java.util.Random(20261204L);
        String[] pieces = {"a", "é", "€", EMOJI, "\n", "z"};
        for (int round = 0; round < 20_000; round++) {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            int parts = random.nextInt(12);
            for (int i = 0; i < parts; i++) {
                if (random.nextInt(5) == 0) {
                    out.write(random.nextInt(256)); // any byte: malformed sequences too
                } else {
                    out.writeBytes(utf8(pieces[random.nextInt(pieces.length)]));
                }
            }
            byte[] all = out.toByteArray();
            OutputLimiter l = new OutputLimiter(1_000, 1 << 20);
            int pos = 0;
            while (pos < all.length) {
                int n = 1 + random.nextInt(Math.min(6, all.length - pos));
                l.accept(all, pos, n);
                pos += n;
            }
            assertEquals(new String(all, StandardCharsets.UTF_8), l.text(), "round " + round + ": " + Arrays.toString(all));
        }
    }

    /**
     * Allocation grows with the output (issue 35 item 5): a limiter that takes {@code 42\n} allocates well
     * under 2 KiB; the old one preallocated 8 KiB of bytes and 8192 characters (24 KiB) per stream.
     */
    @Test
    void aSmallOutputAllocatesLittle() {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        org.junit.jupiter.api.Assumptions.assumeTrue(mx instanceof com.sun.management.ThreadMXBean
                && ((com.sun.management.ThreadMXBean) mx).isThreadAllocatedMemorySupported(),
                "this JVM cannot count a thread's allocations");
        com.sun.management.ThreadMXBean t = (com.sun.management.ThreadMXBean) mx;
        byte[] small = utf8("42\n");
        for (int i = 0; i < 1_000; i++) { // warm: the first calls load and initialise classes
            new OutputLimiter(10_000, 1 << 20).accept(small);
        }
        long id = Thread.currentThread().getId();
        long before = t.getThreadAllocatedBytes(id);
        int rounds = 100;
        int kept = 0;
        for (int i = 0; i < rounds; i++) {
            OutputLimiter l = new OutputLimiter(10_000, 1 << 20);
            l.accept(small);
            kept += l.text().length();
        }
        long perLimiter = (t.getThreadAllocatedBytes(id) - before) / rounds;
        assertEquals(3 * rounds, kept);
        assertTrue(perLimiter < 2048, "bytes allocated per limiter for 3 bytes of output: " + perLimiter);
    }

    private static void assertValidUtf16(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c)) {
                assertTrue(i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1)), "lone high surrogate at " + i);
                i++;
            } else {
                assertFalse(Character.isLowSurrogate(c), "lone low surrogate at " + i);
            }
        }
    }
}
