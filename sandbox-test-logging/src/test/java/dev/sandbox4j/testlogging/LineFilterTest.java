package dev.sandbox4j.testlogging;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class LineFilterTest {
    private static final String LOG = String.join("\n",
            "[main] DEBUG dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner - created sbx-1",
            "[VercelEmulator-worker] WARN dev.sandbox4j.emulators.HttpEmulator - POST failed",
            "java.io.IOException: Broken pipe",
            "\tat java.base/sun.nio.ch.FileDispatcherImpl.write0(Native Method)",
            "Caused by: java.lang.IllegalStateException: x",
            "\t... 3 more",
            "[main] INFO dev.sandbox4j.Foo - started",
            "a continuation of the INFO record",
            "[main] [ERROR] cli - broken",
            "plain line from a test",
            "") ;

    private static String filter(Level threshold, String text, ByteArrayOutputStream file) throws IOException {
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(new LineFilter(console, file, threshold), true, StandardCharsets.UTF_8)) {
            out.print(text);
        }
        return console.toString(StandardCharsets.UTF_8);
    }

    @Test
    void warnShowsWarnAndErrorHeadersOnlyAndNoStackTraces() throws IOException {
        assertEquals(String.join("\n",
                "[VercelEmulator-worker] WARN dev.sandbox4j.emulators.HttpEmulator - POST failed",
                "[main] [ERROR] cli - broken",
                "plain line from a test",
                ""), filter(Level.WARN, LOG, null));
    }

    @Test
    void debugShowsEverythingAndTheFileAlwaysGetsEverything() throws IOException {
        ByteArrayOutputStream file = new ByteArrayOutputStream();
        assertEquals(LOG, filter(Level.DEBUG, LOG, null));
        filter(Level.WARN, LOG, file);
        assertEquals(LOG, file.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aLineWithoutNewlineIsKeptUntilCloseAndLongLinesStayBounded() throws IOException {
        assertEquals("no newline", filter(Level.WARN, "no newline", null));
        String longLine = "x".repeat(200_000);
        assertEquals(longLine, filter(Level.WARN, longLine, null));
    }

    @Test
    void unknownLevelsFallBackToWarn() {
        assertEquals(Level.WARN, Level.parse("loud"));
        assertEquals(Level.DEBUG, Level.parse(" Debug "));
    }
}
