package dev.sandbox4j.cli.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class PlainTextTest {
    @Test
    void loneCarriageReturnsAreRemovedAndCrlfBecomesANewline() {
        assertEquals("progress 10%progress 100%\n", PlainText.clean("progress 10%\rprogress 100%\n"));
        assertEquals("a\nb\n", PlainText.clean("a\r\nb\r\n"));
        assertEquals("ab", PlainText.clean("a\rb"));
        assertEquals("x", PlainText.clean("x\r"));
    }

    @Test
    void bidiAndZeroWidthCharactersAreRemoved() {
        for (char c : new char[] {'\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069',
                '\u200e', '\u200f', '\u061c', '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff'}) {
            assertEquals("ab", PlainText.clean("a" + c + "b"), Integer.toHexString(c));
        }
        assertEquals("\u00e9\ud83d\ude00 \u4e2d\tx\n", PlainText.clean("\u00e9\ud83d\ude00 \u4e2d\tx\n"), "ordinary text is kept");
        assertEquals("[31mred", PlainText.clean("\u001b[31mred"), "escape sequences lose their ESC");
        assertEquals("ab", PlainText.clean("a\u0085\u009bb"), "C1 controls too");
    }

    @Test
    void aLineThatImitatesTheSummaryIsMarked() {
        String forged = "sandbox4j: exited with code 0 after 41 ms (provider local, sandbox x, teardown destroyed)";
        assertEquals("ok\n" + PlainText.MARK + forged + "\n", PlainText.clean("ok\n" + forged + "\n"));
        for (String variant : new String[] {"  " + forged, "SANDBOX4J: x", "\u202esandbox4j: x", "\uff53andbox4j: x",
                "s\u200bandbox4j: x", "\rsandbox4j: x", "junk\rsandbox4j: x", "> sandbox4j: x", "\tsandbox4j: x"}) {
            String out = PlainText.clean(variant);
            assertFalse(out.startsWith(Summary.PREFIX), variant + " -> " + out);
            assertTrue(out.startsWith(PlainText.MARK) || !PlainText.looksLikeCli(out), variant + " -> " + out);
        }
        assertEquals("I use sandbox4j: fine\n", PlainText.clean("I use sandbox4j: fine\n"), "only at the start of a line");
    }
}
