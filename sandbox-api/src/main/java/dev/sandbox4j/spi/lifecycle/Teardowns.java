package dev.sandbox4j.spi.lifecycle;

import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.Teardown;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import dev.sandbox4j.spi.Backoff;
import dev.sandbox4j.spi.SandboxDriver;
import dev.sandbox4j.spi.SandboxHandle;

/**
 * Destroys one sandbox with retries until its own deadline, for the lifecycle, the lost-create
 * reaper and the sweep alike. The interrupt flag is cleared during a teardown and restored after it.
 */
final class Teardowns<H extends SandboxHandle> {
    private static final Logger log = LoggerFactory.getLogger(ManagedSandboxRunner.class);

    private final SandboxDriver<H> driver;
    private final String name;
    private final Duration timeout;
    private final Backoff backoff;
    private final Observed observed;

    Teardowns(SandboxDriver<H> driver, Observed observed, Duration timeout, Backoff backoff) {
        this.driver = driver;
        this.observed = observed;
        this.name = driver.provider();
        this.timeout = timeout;
        this.backoff = backoff;
    }

    /** Destroys with retries until the teardown deadline; interrupt flag cleared during, restored after. */
    Teardown teardown(H handle) {
        return observed.teardown(() -> destroyWithRetries(handle));
    }

    private Teardown destroyWithRetries(H handle) {
        boolean interrupted = Thread.interrupted();
        long deadline = backoff.nanoTime() + timeout.toNanos();
        SandboxException last = null;
        try {
            for (int attempt = 1; ; attempt++) {
                try {
                    boolean destroyed = driver.destroy(handle);
                    Teardown t = destroyed ? Teardown.DESTROYED : Teardown.ALREADY_GONE;
                    log.debug("{} sandbox {} torn down: {}", name, handle.id(), t);
                    return t;
                } catch (InterruptedException e) {
                    interrupted = true; // finish the teardown first; the flag is restored below
                } catch (SandboxException e) {
                    // the type goes with the message: the log is where a teardown failure is reported
                    if (!e.isRetriable()) {
                        log.warn("{} sandbox {} teardown failed: {}: {}", name, handle.id(),
                                e.getClass().getSimpleName(), e.getMessage());
                        return Teardown.FAILED;
                    }
                    last = e;
                    log.debug("{} sandbox {} teardown attempt {} failed: {}: {}", name, handle.id(), attempt,
                            e.getClass().getSimpleName(), e.getMessage());
                } catch (RuntimeException e) {
                    log.warn("{} sandbox {} teardown failed: {}", name, handle.id(), e.toString());
                    return Teardown.FAILED;
                }
                Duration delay = backoff.delay(attempt);
                if (backoff.nanoTime() + delay.toNanos() - deadline >= 0) {
                    log.warn("{} sandbox {} teardown failed after {} attempts; its lifetime will expire it{}",
                            name, handle.id(), attempt, last == null ? ""
                                    : "; last: " + last.getClass().getSimpleName() + ": " + last.getMessage());
                    return Teardown.FAILED;
                }
                try {
                    backoff.sleep(delay);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Teardown, then release: the lifecycle is done with the handle whatever the outcome. */
    Teardown teardownAndRelease(H handle) {
        Teardown t = teardown(handle);
        driver.release(handle);
        return t;
    }
}
