package dev.sandbox4j.testlogging;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Passes whole lines to the console when they should be seen there, and every line to an optional
 * file. A log record's header ({@code [thread] LEVEL logger - message}, slf4j-simple's format) sets
 * whether the lines after it are shown; stack-trace lines are shown only at DEBUG and below, so an
 * expected failure logged at WARN is one line on the console. Lines that are not log output (a
 * test's own prints) are shown unless they continue a hidden record.
 */
final class LineFilter extends OutputStream {
    private static final Pattern HEADER =
            Pattern.compile("^(?:\\[[^\\]]*\\] )?\\[?(TRACE|DEBUG|INFO|WARN|ERROR)\\]? ");
    private static final Pattern STACK = Pattern.compile(
            "^(?:\\s+at |\\s*\\.\\.\\. \\d+ (?:more|common frames omitted)|\\s*Caused by: |\\s*Suppressed: "
                    + "|(?:[a-zA-Z_$][\\w$]*\\.)+[A-Z][\\w$]*(?:Exception|Error|Throwable)\\b)");
    // A line longer than this is passed on in pieces; memory stays bounded whatever a test prints.
    private static final int MAX_LINE = 64 * 1024;

    private final OutputStream console;
    private final OutputStream file;
    private final Level threshold;
    private final ByteArrayOutputStream line = new ByteArrayOutputStream();
    private boolean recordShown = true;

    LineFilter(OutputStream console, OutputStream file, Level threshold) {
        this.console = console;
        this.file = file;
        this.threshold = threshold;
    }

    @Override
    public synchronized void write(int b) throws IOException {
        line.write(b);
        if (b == '\n' || line.size() >= MAX_LINE) {
            emit();
        }
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) throws IOException {
        int start = off;
        int end = off + len;
        for (int i = off; i < end; i++) {
            if (b[i] == '\n' || line.size() + (i - start + 1) >= MAX_LINE) {
                line.write(b, start, i - start + 1);
                emit();
                start = i + 1;
            }
        }
        line.write(b, start, end - start);
    }

    @Override
    public synchronized void flush() throws IOException {
        console.flush();
        if (file != null) {
            file.flush();
        }
    }

    @Override
    public synchronized void close() throws IOException {
        if (line.size() > 0) {
            emit();
        }
        flush();
    }

    /** Whether {@code text}, one line, belongs on the console; updates the current record's state. */
    boolean shows(String text) {
        Matcher header = HEADER.matcher(text);
        if (header.find()) {
            recordShown = Level.valueOf(header.group(1)).compareTo(threshold) >= 0;
            return recordShown;
        }
        if (STACK.matcher(text).find()) {
            return threshold.compareTo(Level.DEBUG) <= 0;
        }
        return recordShown;
    }

    private void emit() throws IOException {
        byte[] bytes = line.toByteArray();
        line.reset();
        if (file != null) {
            file.write(bytes);
        }
        if (shows(new String(bytes, StandardCharsets.UTF_8))) {
            console.write(bytes);
        }
    }
}
