package dev.sandbox4j.api.exception;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.PartialOutput;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** A copy made with toBuilder() keeps the exception's type, its details and the flags the builder set. */
class ExceptionCopyTest {
    private static final List<Function<SandboxException.Builder, SandboxException>> TYPES = List.of(
            SandboxAuthenticationException::new, SandboxRateLimitException::new, SandboxNotFoundException::new,
            SandboxCapacityException::new, SandboxConfigurationException::new, SandboxInterruptedException::new,
            b -> b.build());

    @Test
    void everySubtypeStaysItselfWithItsDetailsAndTheChangedFlags() {
        for (Function<SandboxException.Builder, SandboxException> type : TYPES) {
            IllegalStateException cause = new IllegalStateException("underneath");
            SandboxException original = type.apply(SandboxException.builder("provider said no").provider("p")
                    .httpStatus(429).providerCode("slow_down").retryAfter(Duration.ofSeconds(3)).retriable(true)
                    .cause(cause));
            SandboxException copy = original.toBuilder().requestMayHaveSucceeded(true).codeMayHaveRun(true).build();
            assertSame(original.getClass(), copy.getClass(), original.getClass().getSimpleName());
            assertEquals(original.getMessage(), copy.getMessage());
            assertEquals("p", copy.provider());
            assertEquals(429, copy.httpStatus().getAsInt());
            assertEquals("slow_down", copy.providerCode().orElseThrow());
            assertEquals(Duration.ofSeconds(3), copy.retryAfter().orElseThrow());
            assertTrue(copy.isRetriable());
            assertTrue(copy.requestMayHaveSucceeded());
            assertTrue(copy.codeMayHaveRun());
            assertSame(cause, copy.getCause());
            assertFalse(original.codeMayHaveRun(), "the original is unchanged");
        }
    }

    @Test
    void aFlagTurnedOffStaysOffInTheCopy() {
        SandboxException original = new SandboxRateLimitException("busy");
        SandboxException copy = original.toBuilder().retriable(false).build();
        assertSame(SandboxRateLimitException.class, copy.getClass());
        assertFalse(copy.isRetriable());
    }

    @Test
    void anInterruptKeepsItsPartialOutputInACopyAndThroughSerialization() throws Exception {
        PartialOutput out = PartialOutput.builder().stdout("so far\n").stderr("warn\n").stdoutBytes(7).stderrBytes(5)
                .stdoutTruncated(true).build();
        SandboxInterruptedException original = new SandboxInterruptedException(
                SandboxException.builder("interrupted during exec").codeMayHaveRun(true), out);
        SandboxInterruptedException copy = (SandboxInterruptedException) original.toBuilder().retriable(true).build();
        assertEquals(out, copy.output());
        assertTrue(copy.isRetriable());
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        try (java.io.ObjectOutputStream o = new java.io.ObjectOutputStream(bytes)) {
            o.writeObject(original);
        }
        try (java.io.ObjectInputStream in = new java.io.ObjectInputStream(new java.io.ByteArrayInputStream(bytes.toByteArray()))) {
            assertEquals(out, ((SandboxInterruptedException) in.readObject()).output());
        }
        assertEquals(PartialOutput.none(), new SandboxInterruptedException("outside an exec").output());
        assertTrue(new SandboxInterruptedException("outside an exec").output().isEmpty());
    }

    @Test
    void partialOutputShowsSizesNotTheCodesTextAndRefusesNegativeCounts() {
        PartialOutput out = PartialOutput.builder().stdout("secret-looking output").stdoutBytes(21).build();
        assertFalse(out.toString().contains("secret-looking"), out.toString());
        assertTrue(out.toString().contains("21 chars"), out.toString());
        assertFalse(out.isEmpty());
        assertThrows(IllegalArgumentException.class, () -> PartialOutput.builder().stderrBytes(-1));
        assertThrows(NullPointerException.class, () -> PartialOutput.builder().stdout(null));
    }

    @Test
    void anAttachRefusalKeepsItsSandboxAndReasons() {
        AttachRefusedException original = new AttachRefusedException("p", "sb-1", List.of("lifetime differs"));
        SandboxException copy = original.toBuilder().codeMayHaveRun(false).build();
        AttachRefusedException refused = (AttachRefusedException) copy;
        assertEquals("sb-1", refused.sandboxId());
        assertEquals(List.of("lifetime differs"), refused.reasons());
        assertEquals(original.getMessage(), refused.getMessage());
    }

    @Test
    void aFreshBuilderStillBuildsAPlainException() {
        assertSame(SandboxException.class, SandboxException.builder("x").httpStatus(401).build().getClass());
    }
}
