package dev.sandbox4j.api;

import java.text.Normalizer;
import java.util.Locale;

/**
 * The one sanitiser for untrusted text (the code's output, names it chose, model-supplied values)
 * shown to a person or a model: the CLI's plain mode, the agent tool's text (LangChain4j, Spring AI,
 * MCP) and the error messages that echo such values all go through it.
 *
 * <p>What is kept is what a reader sees. {@link #displayed} removes every character that is not
 * visibly rendered, so text cannot be hidden, reordered or made to start a line unseen:
 * <ul>
 *   <li>C0 and C1 control characters other than newline and tab (escape sequences could move the
 *       cursor or rewrite the terminal); CRLF becomes a newline and a lone carriage return is dropped,
 *       so it cannot return to the start of a line and overprint it;</li>
 *   <li>the other line breaks (U+2028, U+2029, NEL, vertical tab, form feed) become {@code \n}, so a
 *       line they start is seen, and checked, as a line;</li>
 *   <li>every format character (Unicode category Cf: the bidi controls U+202A to U+202E, U+2066 to
 *       U+2069, U+200E, U+200F, U+061C, zero-width U+200B to U+200D, U+2060, U+FEFF, soft hyphen, tags)
 *       and every other default-ignorable code point (Unicode's Default_Ignorable_Code_Point property,
 *       listed here so the result does not depend on the JDK's Unicode version: U+034F, the Hangul
 *       fillers U+115F, U+1160, U+3164, U+FFA0, U+17B4, U+17B5, U+180B to U+180F, U+2065, the
 *       variation selectors U+FE00 to U+FE0F, U+FFF0 to U+FFF8, U+1BCA0 to U+1BCA3, U+1D173 to
 *       U+1D17A, U+E0000 to U+E0FFF);</li>
 *   <li>an unpaired surrogate becomes U+FFFD.</li>
 * </ul>
 *
 * <p>{@link #imitates} decides whether a displayed line could pass for one starting with an ASCII
 * word (the CLI's {@code sandbox4j}): after NFKC (full-width and mathematical letters fold to ASCII),
 * lower case, without combining marks, and skipping leading spaces and punctuation, each character of
 * the word must be there or be replaced by a character that may look like it (any other non-ASCII
 * letter, digit or punctuation, such as Cyrillic {@code ѕ} or Greek {@code ο}, and {@code 0} for
 * {@code o}). Wide CJK characters and symbols such as emoji do not count as look-alikes, so ordinary
 * Chinese or Japanese output is left alone; a line of another script whose first word is as long as
 * the marker may be marked, which is harmless. {@link #markImitations} puts {@value #MARK} in front of
 * such lines.
 *
 * @since 0.1.0
 */
public final class UntrustedText {
    /** Put in front of a displayed line that could pass for one of the application's own. */
    public static final String MARK = "(output) ";

    private UntrustedText() {
    }

    /**
     * {@code text} as displayed: without the characters listed above, line breaks as {@code \n}.
     *
     * @param text untrusted text, or null
     * @return the displayed text; empty for null or empty input
     */
    public static String displayed(String text) {
        if (text == null || text.isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            i += Character.charCount(cp);
            if (cp == '\r') {
                continue; // CRLF keeps its newline; a lone carriage return is dropped
            }
            if (cp == '\n' || cp == 0x0b || cp == 0x0c || cp == 0x85 || cp == 0x2028 || cp == 0x2029) {
                sb.append('\n');
            } else if (cp == '\t') {
                sb.append('\t');
            } else if (Character.isSurrogate((char) cp) && cp <= 0xffff) {
                sb.append('\ufffd'); // codePointAt returns a lone surrogate only when it is unpaired
            } else if (!invisible(cp)) {
                sb.appendCodePoint(cp);
            }
        }
        return sb.toString();
    }

    /**
     * {@link #displayed} on one line: line breaks (a lone carriage return too) and tabs become spaces,
     * leading and trailing spaces go.
     *
     * @param text untrusted text, or null
     * @return one line without leading or trailing spaces; empty for null
     */
    public static String oneLine(String text) {
        String s = text == null ? "" : text.replace("\r\n", "\n").replace('\r', '\n');
        return displayed(s).replace('\n', ' ').replace('\t', ' ').strip();
    }

    /**
     * {@link #displayed} text with {@value #MARK} in front of every line that {@linkplain #imitates
     * imitates} {@code word}.
     *
     * @param text untrusted text, or null
     * @param word the ASCII word an imitation would start with, e.g. {@code sandbox4j}
     * @return the displayed text, marked lines prefixed with {@value #MARK}
     */
    public static String markImitations(String text, String word) {
        String shown = displayed(text);
        StringBuilder sb = new StringBuilder(shown.length() + 16);
        int start = 0;
        while (start <= shown.length()) {
            int end = shown.indexOf('\n', start);
            String line = end < 0 ? shown.substring(start) : shown.substring(start, end + 1);
            if (imitates(line, word)) {
                sb.append(MARK);
            }
            sb.append(line);
            if (end < 0) {
                break;
            }
            start = end + 1;
        }
        return sb.toString();
    }

    /**
     * Whether {@code line}, as displayed, could be read as starting with {@code word} (ASCII letters and
     * digits, compared ignoring case).
     *
     * @param line one line of untrusted text
     * @param word ASCII letters and digits
     * @return true when a reader could take the line as starting with {@code word}
     */
    public static boolean imitates(String line, String word) {
        String n = Normalizer.normalize(displayed(line), Normalizer.Form.NFKC).toLowerCase(Locale.ROOT);
        String w = word.toLowerCase(Locale.ROOT);
        int i = 0;
        while (i < n.length()) {
            int cp = n.codePointAt(i);
            if (Character.isLetterOrDigit(cp)) {
                break;
            }
            i += Character.charCount(cp);
        }
        for (int k = 0; k < w.length(); k++) {
            int cp;
            do { // combining marks do not hide the letter they sit on
                if (i >= n.length()) {
                    return false;
                }
                cp = n.codePointAt(i);
                i += Character.charCount(cp);
            } while (isMark(cp));
            char want = w.charAt(k);
            if (cp != want && !(want == 'o' && cp == '0') && !lookAlike(cp)) {
                return false;
            }
        }
        return true;
    }

    /** A non-ASCII character that may be drawn like an ASCII letter or digit. */
    private static boolean lookAlike(int cp) {
        if (cp < 0x80 || Character.isWhitespace(cp) || Character.isSpaceChar(cp)) {
            return false;
        }
        int type = Character.getType(cp);
        if (type == Character.OTHER_SYMBOL || type == Character.CONTROL || type == Character.UNASSIGNED
                || type == Character.PRIVATE_USE || isMark(cp)) {
            return false;
        }
        Character.UnicodeScript script = Character.UnicodeScript.of(cp);
        return script != Character.UnicodeScript.HAN && script != Character.UnicodeScript.HIRAGANA
                && script != Character.UnicodeScript.KATAKANA && script != Character.UnicodeScript.HANGUL
                && script != Character.UnicodeScript.BOPOMOFO && script != Character.UnicodeScript.YI
                && !(cp >= 0x3000 && cp <= 0x303f) && !(cp >= 0xff00 && cp <= 0xffef); // CJK and full-width punctuation
    }

    private static boolean isMark(int cp) {
        int type = Character.getType(cp);
        return type == Character.NON_SPACING_MARK || type == Character.ENCLOSING_MARK || type == Character.COMBINING_SPACING_MARK;
    }

    /** Not visibly rendered: controls, format characters and the default-ignorable code points. */
    private static boolean invisible(int cp) {
        int type = Character.getType(cp);
        return type == Character.CONTROL || type == Character.FORMAT
                || cp == 0x00ad || cp == 0x034f || cp == 0x061c || cp == 0x115f || cp == 0x1160
                || cp == 0x17b4 || cp == 0x17b5 || (cp >= 0x180b && cp <= 0x180f)
                || (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x206f)
                || cp == 0x3164 || (cp >= 0xfe00 && cp <= 0xfe0f) || cp == 0xfeff || cp == 0xffa0
                || (cp >= 0xfff0 && cp <= 0xfff8) || (cp >= 0x1bca0 && cp <= 0x1bca3)
                || (cp >= 0x1d173 && cp <= 0x1d17a) || (cp >= 0xe0000 && cp <= 0xe0fff);
    }
}
