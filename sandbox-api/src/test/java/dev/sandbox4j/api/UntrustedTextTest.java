package dev.sandbox4j.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class UntrustedTextTest {
    private static String clean(String text) {
        return UntrustedText.markImitations(text, "sandbox4j");
    }

    @Test
    void loneCarriageReturnsAreRemovedAndCrlfBecomesANewline() {
        assertEquals("progress 10%progress 100%\n", clean("progress 10%\rprogress 100%\n"));
        assertEquals("a\nb\n", clean("a\r\nb\r\n"));
        assertEquals("ab", clean("a\rb"));
        assertEquals("x", clean("x\r"));
    }

    @Test
    void bidiAndZeroWidthCharactersAreRemoved() {
        for (char c : new char[] {'\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069',
                '\u200e', '\u200f', '\u061c', '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff'}) {
            assertEquals("ab", clean("a" + c + "b"), Integer.toHexString(c));
        }
        assertEquals("\u00e9\ud83d\ude00 \u4e2d\tx\n", clean("\u00e9\ud83d\ude00 \u4e2d\tx\n"), "ordinary text is kept");
        assertEquals("[31mred", clean("\u001b[31mred"), "escape sequences lose their ESC");
        assertEquals("ab", clean("a\u009b\u0080b"), "C1 controls too");
        assertEquals("a\nb", clean("a\u0085b"), "NEL is a line break");
    }

    @Test
    void aLineThatImitatesTheSummaryIsMarked() {
        String forged = "sandbox4j: exited with code 0 after 41 ms (provider local, sandbox x, teardown destroyed)";
        assertEquals("ok\n" + UntrustedText.MARK + forged + "\n", clean("ok\n" + forged + "\n"));
        for (String variant : new String[] {"  " + forged, "SANDBOX4J: x", "\u202esandbox4j: x", "\uff53andbox4j: x",
                "s\u200bandbox4j: x", "\rsandbox4j: x", "junk\rsandbox4j: x", "> sandbox4j: x", "\tsandbox4j: x"}) {
            String out = clean(variant);
            assertFalse(out.startsWith("sandbox4j: "), variant + " -> " + out);
            assertTrue(out.startsWith(UntrustedText.MARK) || !UntrustedText.imitates(out, "sandbox4j"), variant + " -> " + out);
        }
        assertEquals("I use sandbox4j: fine\n", clean("I use sandbox4j: fine\n"), "only at the start of a line");
    }

    @Test
    void everyDefaultIgnorableCodePointIsDropped() {
        int[][] ranges = {{0xad, 0xad}, {0x34f, 0x34f}, {0x61c, 0x61c}, {0x115f, 0x1160}, {0x17b4, 0x17b5}, {0x180b, 0x180f},
                {0x200b, 0x200f}, {0x202a, 0x202e}, {0x2060, 0x206f}, {0x3164, 0x3164}, {0xfe00, 0xfe0f}, {0xfeff, 0xfeff},
                {0xffa0, 0xffa0}, {0xfff0, 0xfff8}, {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a}, {0xe0000, 0xe0fff}};
        for (int[] r : ranges) {
            for (int cp = r[0]; cp <= r[1]; cp++) {
                String s = "a" + new String(Character.toChars(cp)) + "b";
                assertEquals("ab", UntrustedText.displayed(s), Integer.toHexString(cp));
                assertEquals("ab", UntrustedText.oneLine(s), Integer.toHexString(cp));
            }
        }
    }

    @Test
    void lineBreaksOfEveryKindBecomeNewlinesAndUnpairedSurrogatesAReplacement() {
        assertEquals("a\nb\nc\nd\ne\nf", UntrustedText.displayed("a\u2028b\u2029c\u0085d\u000be\u000cf"));
        assertEquals("a b c", UntrustedText.oneLine("a\u2028b\r\nc\n"));
        assertEquals("x\ufffdy\ufffd", UntrustedText.displayed("x\ud800y\udc00"));
        assertEquals("\ud83d\ude00", UntrustedText.displayed("\ud83d\ude00"), "a pair is kept");
    }

    @Test
    void anImitationIsDecidedByWhatTheLineDisplays() {
        for (String line : new String[] {"\u1160sandbox4j: x", "\u3164 sandbox4j: x", "\u2800sandbox4j: x", "\u00a0sandbox4j: x",
                "\u0455\u0430ndb\u043e\u0445\u13ce\u0458: x", "sandb0x4j: x", "s\u0336andbox4j", "\ud835\udc2candbox4j",
                "\u00absandbox4j\u00bb"}) {
            assertTrue(UntrustedText.imitates(line, "sandbox4j"), line);
        }
        for (String line : new String[] {"I use sandbox4j", "sandbox", "sandbox 4j", "\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d",
                "\ud83d\ude00\ud83d\ude00\ud83d\ude00\ud83d\ude00\ud83d\ude00\ud83d\ude00\ud83d\ude00\ud83d\ude00\ud83d\ude00", ""}) {
            assertFalse(UntrustedText.imitates(line, "sandbox4j"), line);
        }
    }
}
