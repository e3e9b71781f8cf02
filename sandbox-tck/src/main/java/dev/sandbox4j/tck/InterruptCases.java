package dev.sandbox4j.tck;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.policy.Language;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Contract cases. Interrupts: an interrupted caller gets an exception and the sandbox is torn down. Part of {@link SandboxRunnerContract}.
 *
 * @since 0.1.0
 */
public interface InterruptCases extends ContractContext {
    /**
     * Opens a sandbox and, on a worker thread, execs Python that sleeps 60 s (budget 90 s); once the worker
     * blocks (leaves {@code NEW} and {@code RUNNABLE}), or after 2 s whatever it is doing, interrupts it.
     * Fails unless the worker returns within 60 s of the interrupt and the case within 45 s of its start,
     * {@code exec} threw {@code SandboxInterruptedException} with the worker's interrupt flag set again, the
     * sandbox was closed by the interrupt itself (checked before the case calls {@code close()}) with teardown
     * {@code DESTROYED} or {@code ALREADY_GONE}, and the leak count is back to its baseline. Skipped without
     * {@code Language.PYTHON}.
     *
     * @throws Exception when the wait for the worker is interrupted
     */
    @Test
    default void interruptingTheCallerMidRunThrowsAndTearsDown() throws Exception {
        requireLanguage(Language.PYTHON);
        Sandbox sandbox = runner().open(SandboxSpec.defaults());
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicBoolean flagSet = new AtomicBoolean();
        Thread worker = new Thread(() -> {
            try {
                sandbox.exec(Execution.builder("import time\ntime.sleep(60)").budget(Duration.ofSeconds(90)).build());
            } catch (Throwable t) {
                thrown.set(t);
                flagSet.set(Thread.currentThread().isInterrupted());
            }
        }, "tck-interrupt-worker");
        long t0 = System.nanoTime();
        boolean closedByInterrupt;
        try {
            worker.start();
            // interrupt once the worker blocks inside exec (or after 2 s, whatever it is doing then)
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            while (System.nanoTime() < until
                    && (worker.getState() == Thread.State.NEW || worker.getState() == Thread.State.RUNNABLE)) {
                Thread.sleep(5);
            }
            worker.interrupt();
            worker.join(TimeUnit.SECONDS.toMillis(60));
            assertFalse(worker.isAlive(), "exec did not return after the interrupt");
            closedByInterrupt = sandbox.isClosed();
        } finally {
            sandbox.close();
        }
        assertTrue(Duration.ofNanos(System.nanoTime() - t0).toSeconds() < 45, "exec waited for the code instead of the interrupt");
        assertInstanceOf(SandboxInterruptedException.class, thrown.get(), "exec must throw SandboxInterruptedException");
        assertTrue(flagSet.get(), "the interrupt flag must be set again");
        assertTrue(closedByInterrupt, "the sandbox must be torn down by the interrupt, before anyone calls close()");
        assertTrue(sandbox.teardown() == Teardown.DESTROYED || sandbox.teardown() == Teardown.ALREADY_GONE,
                "teardown " + sandbox.teardown());
        assertLeakCountBackToBaseline();
    }
}
