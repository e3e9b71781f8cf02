package dev.sandbox4j.local.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Which owner lines name a live process: the start time compared within {@link Owner#START_TOLERANCE_MILLIS}. */
class OwnerTest {
    private static final long PID = ProcessHandle.current().pid();
    private static final long STARTED = ProcessHandle.current().info().startInstant().map(Instant::toEpochMilli).orElseThrow();

    @Test
    void thisJvmIsAliveEvenWhenAnotherJvmSawItsStartASecondOrTwoApart() {
        assertTrue(Owner.alive(Owner.current()));
        // another JVM's boot time (/proc/stat btime, whole seconds, recomputed after clock changes) may differ
        assertTrue(Owner.alive(PID + " " + (STARTED - 1000)), "a start seen 1 s earlier is the same process");
        assertTrue(Owner.alive(PID + " " + (STARTED + 2000)), "a start seen 2 s later is the same process");
    }

    @Test
    void aReusedPidOrAnEndedProcessIsNotTheOwner() throws Exception {
        assertFalse(Owner.alive(PID + " " + (STARTED - Owner.START_TOLERANCE_MILLIS - 60_000)),
                "the same pid started a minute before the window is another process");
        Process p = new ProcessBuilder("true").start();
        long pid = p.pid();
        p.waitFor();
        assertFalse(Owner.alive(pid + " " + STARTED), "an ended process owns nothing");
    }

    @Test
    void anUnreadableLineKeepsTheSandbox() {
        assertTrue(Owner.alive("garbage"));
        assertTrue(Owner.alive("12 x"));
        assertTrue(Owner.alive(PID + " -1"), "no start time recorded: the pid alone decides");
    }
}
