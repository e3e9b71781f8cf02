package dev.sandbox4j.cli.internal;

import java.text.Normalizer;
import java.util.Locale;

/**
 * Makes the code's (untrusted) output safe to print in plain mode, where the CLI's own summary line
 * follows it on the same terminal.
 *
 * <ul>
 *   <li>Control characters other than newline and tab are removed (escape sequences could move the
 *       cursor or rewrite the terminal); a carriage return survives only as part of CRLF, which becomes
 *       a newline, so a lone one cannot return to the start of a line and overprint it.</li>
 *   <li>Format characters (Unicode category Cf) are removed: the bidi controls (U+202A to U+202E,
 *       U+2066 to U+2069, U+200E, U+200F, U+061C), zero-width characters (U+200B to U+200D, U+2060,
 *       U+FEFF) and the like, which could reorder or hide text.</li>
 *   <li>No line of the code's output can pass for a CLI line: a line that, ignoring leading spaces,
 *       punctuation and letter case after NFKC normalization (so full-width letters count), starts with
 *       {@code sandbox4j} is shown with {@value #MARK} in front. The CLI's own lines start with
 *       {@code sandbox4j: } at the very start of the line, and its summary is always the last line of
 *       stderr.</li>
 * </ul>
 */
public final class PlainText {
    /** Put in front of a line of the code's output that looks like one of the CLI's own. */
    public static final String MARK = "(output) ";

    private PlainText() {
    }

    public static String clean(String untrusted) {
        if (untrusted == null || untrusted.isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder(untrusted.length());
        int lineStart = 0;
        for (int i = 0; i < untrusted.length(); ) {
            int cp = untrusted.codePointAt(i);
            i += Character.charCount(cp);
            if (cp == '\r') {
                if (i < untrusted.length() && untrusted.charAt(i) == '\n') {
                    continue; // CRLF: the newline follows
                }
                continue; // a lone carriage return is dropped
            }
            if (cp == '\n') {
                defuse(sb, lineStart);
                sb.append('\n');
                lineStart = sb.length();
                continue;
            }
            if (cp == '\t') {
                sb.append('\t');
                continue;
            }
            if (Character.getType(cp) == Character.CONTROL || Character.getType(cp) == Character.FORMAT
                    || Character.getType(cp) == Character.UNASSIGNED && cp >= 0xE0000 && cp <= 0xE0FFF) {
                continue;
            }
            sb.appendCodePoint(cp);
        }
        defuse(sb, lineStart);
        return sb.toString();
    }

    /** {@code text} without control characters (newline and tab kept) and format characters (Cf). */
    public static String removeInvisible(String text) {
        StringBuilder sb = new StringBuilder(text.length());
        text.codePoints().filter(cp -> cp == '\n' || cp == '\t'
                || Character.getType(cp) != Character.CONTROL && Character.getType(cp) != Character.FORMAT)
                .forEach(sb::appendCodePoint);
        return sb.toString();
    }

    /** Marks the line from {@code start} to the end of {@code sb} when it looks like a CLI line. */
    private static void defuse(StringBuilder sb, int start) {
        if (looksLikeCli(sb.substring(start))) {
            sb.insert(start, MARK);
        }
    }

    static boolean looksLikeCli(String line) {
        String n = Normalizer.normalize(line, Normalizer.Form.NFKC).toLowerCase(Locale.ROOT);
        int i = 0;
        while (i < n.length() && !Character.isLetterOrDigit(n.charAt(i))) {
            i++;
        }
        return n.startsWith("sandbox4j", i);
    }
}
