package dev.sandbox4j.emulators.vercel.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** How a kill reaches a command at each point of its worker's life. */
class CommandRunTest {
    private final CommandRun run = new CommandRun("cmd_1", "bash", List.of(), "/", "s", 0, 1000);

    @AfterEach
    void clearInterrupt() {
        Thread.interrupted();
    }

    /** A stray interrupt would hit the pool thread's next task: another command's wait for the machine. */
    @Test
    void aKillAfterTheCommandLeftTheMachineDoesNotInterruptItsWorker() {
        assertTrue(run.queued(Thread.currentThread()));
        run.dequeued();
        assertTrue(run.startExecuting());
        run.leftMachine();
        assertTrue(run.kill(9, () -> {
            throw new AssertionError("the machine runs the next command now");
        }));
        assertFalse(Thread.interrupted(), "the pool thread was interrupted after its command had left the machine");
        assertFalse(run.killPending());
        assertEquals(9, run.killSignal());
    }

    @Test
    void aKillWhileQueuedInterruptsOnlyThatWaitAndTheCommandNeverStarts() {
        assertTrue(run.queued(Thread.currentThread()));
        assertTrue(run.kill(9, () -> false));
        assertTrue(Thread.currentThread().isInterrupted(), "the wait for the machine was not interrupted");
        run.dequeued();
        assertFalse(Thread.currentThread().isInterrupted(), "the interrupt would reach the machine's exec");
        assertFalse(run.startExecuting(), "a killed command started");
    }

    @Test
    void aKillBeforeTheWorkerPickedTheCommandUpMeansItNeverStarts() {
        assertTrue(run.kill(15, () -> false));
        assertFalse(run.queued(Thread.currentThread()));
        assertFalse(Thread.currentThread().isInterrupted());
        assertEquals(15, run.killSignal());
    }

    /** The machine has not started the process yet: the kill is retried until it has. */
    @Test
    void aKillBeforeTheProcessStartedIsRetriedUntilItKillsIt() throws InterruptedException {
        assertTrue(run.queued(Thread.currentThread()));
        run.dequeued();
        assertTrue(run.startExecuting());
        AtomicInteger tries = new AtomicInteger();
        assertTrue(run.kill(9, () -> tries.incrementAndGet() > 3));
        assertTrue(run.killPending());
        run.retryKill(() -> tries.incrementAndGet() > 3, 1);
        assertFalse(run.killPending());
        assertEquals(4, tries.get());
        assertTrue(run.kill(9, () -> {
            throw new AssertionError("killed twice");
        }));
    }

    @Test
    void aPendingKillStopsWhenTheCommandLeavesTheMachine() throws InterruptedException {
        run.queued(Thread.currentThread());
        run.dequeued();
        run.startExecuting();
        run.kill(9, () -> false);
        Thread left = new Thread(() -> {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                return;
            }
            run.leftMachine();
        });
        left.start();
        run.retryKill(() -> false, 10_000); // woken by leftMachine(), not by the poll
        left.join();
        assertFalse(run.killPending());
    }
}
