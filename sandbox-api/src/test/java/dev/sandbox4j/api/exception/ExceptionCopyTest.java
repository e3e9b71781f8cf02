package dev.sandbox4j.api.exception;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
