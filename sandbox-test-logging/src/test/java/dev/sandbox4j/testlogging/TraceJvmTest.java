package dev.sandbox4j.testlogging;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The capture sees what a secret-leak test needs it to see: JUL at FINEST, slf4j at TRACE, hex, JWTs. */
class TraceJvmTest {
    private static final String SECRET = "as-planted-7c41e9a2f0";

    private static TraceJvm.Result child(String mode) {
        return TraceJvm.run("tracejvmtest-" + mode, TraceJvmChild.class, Map.of("TRACE_TEST_SECRET", SECRET),
                List.of(mode), Duration.ofMinutes(2));
    }

    @Test
    void aCleanChildPassesAndItsCanariesAreCaptured() {
        TraceJvm.Result r = child("clean").assertClean(List.of(SECRET));
        // slf4j-simple at TRACE on a name no simplelogger.properties mentions
        r.assertContains("TRACE io.grpc.netty.shaded.Test - nothing secret here");
        assertTrue(r.lines() >= 3, r.output());
    }

    @Test
    void aSecretLoggedThroughJulAtFinestIsFound() {
        AssertionError e = assertThrows(AssertionError.class, () -> child("jul").assertClean(List.of(SECRET)));
        assertTrue(e.getMessage().contains("as text") && e.getMessage().contains("io.grpc.internal.Test"), e.getMessage());
    }

    @Test
    void aSecretHexDumpedIsFound() {
        AssertionError e = assertThrows(AssertionError.class, () -> child("slf4j-hex").assertClean(List.of(SECRET)));
        assertTrue(e.getMessage().contains("as hex"), e.getMessage());
    }

    @Test
    void anyJwtIsFound() {
        AssertionError e = assertThrows(AssertionError.class, () -> child("jwt").assertClean(List.of(SECRET)));
        assertTrue(e.getMessage().contains("a JWT"), e.getMessage());
    }

    @Test
    void aChildThatFailsFailsTheCheck() {
        AssertionError e = assertThrows(AssertionError.class, () -> child("exit").assertClean(List.of(SECRET)));
        assertTrue(e.getMessage().contains("exited with 3"), e.getMessage());
    }
}
