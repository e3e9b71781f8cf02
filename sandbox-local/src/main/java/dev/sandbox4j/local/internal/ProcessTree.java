package dev.sandbox4j.local.internal;

import java.util.concurrent.TimeUnit;

/**
 * Kills one sandbox's whole process tree.
 *
 * <p>The JVM's child is the outer bwrap; its only child is the sandbox's PID 1, the execute-only init
 * of {@link BwrapCommand} (not dumpable, so the code cannot rewrite it, and deaf to signals from inside
 * its namespace). SIGKILL to that PID 1 from the host makes the kernel kill every process in the
 * namespace (daemons that called setsid() and ignore every signal included), and PID 1 is not reapable
 * before all of them are gone. The outer bwrap then reaps it and exits, so once {@link Process#waitFor}
 * returns, nothing of the sandbox is left. Killing only the outer bwrap also works (--die-with-parent
 * delivers SIGKILL to PID 1, and the code cannot clear that PID 1's parent-death signal) but returns
 * before the namespace is empty.
 *
 * <p>When the code exits by itself, PID 1 exits too, which kills what the code left running, and the
 * outer bwrap exits only after reaping it: again nothing is left once the JVM sees bwrap's exit.
 */
final class ProcessTree {
    private static final long FIND_INIT_MILLIS = 1_000;
    private static final long EXIT_WAIT_MILLIS = 5_000;

    private ProcessTree() {
    }

    /** Kills the tree and waits until the outer bwrap has exited. Never throws; keeps the interrupt flag. */
    static void kill(Process outer) {
        if (!outer.isAlive()) {
            return;
        }
        // run to the end even if interrupted: a half-killed sandbox is worse than a late interrupt
        boolean interrupted = Thread.interrupted();
        try {
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(FIND_INIT_MILLIS);
            boolean killedInit = false;
            while (outer.isAlive() && !killedInit && System.nanoTime() < until) {
                for (ProcessHandle c : outer.children().toList()) {
                    killedInit |= c.destroyForcibly();
                }
                if (!killedInit) {
                    // bwrap has not cloned PID 1 yet (it does within milliseconds of starting)
                    interrupted |= pause(1);
                }
            }
            if (!killedInit) {
                outer.destroyForcibly();
            }
            Wait w = waitFor(outer, EXIT_WAIT_MILLIS);
            interrupted |= w.interrupted;
            if (!w.exited) {
                outer.destroyForcibly();
                interrupted |= waitFor(outer, EXIT_WAIT_MILLIS).interrupted;
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static final class Wait {
        boolean exited;
        boolean interrupted;
    }

    /** Waits for exit, not giving up on an interrupt (it is reported instead). */
    private static Wait waitFor(Process p, long millis) {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        Wait w = new Wait();
        while (true) {
            long left = until - System.nanoTime();
            if (left <= 0) {
                w.exited = !p.isAlive();
                return w;
            }
            try {
                w.exited = p.waitFor(left, TimeUnit.NANOSECONDS);
                return w;
            } catch (InterruptedException e) {
                w.interrupted = true;
            }
        }
    }

    private static boolean pause(long millis) {
        try {
            Thread.sleep(millis);
            return false;
        } catch (InterruptedException e) {
            return true;
        }
    }
}
