package dev.sandbox4j.spi.lifecycle;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One exec lock per sandbox in this JVM, shared by every {@link ManagedSandbox} object for it (the one
 * that opened it and any attached to it by id), so two execs never interleave in one sandbox from this
 * JVM. Counted: the entry goes when the last holder closes or detaches. A {@link ReentrantLock}, not a
 * monitor: an exec holds it across blocking I/O, which inside {@code synchronized} would pin a virtual
 * thread's carrier.
 */
final class SandboxLocks {
    private static final Map<String, Lock> LOCKS = new HashMap<>();

    private SandboxLocks() {
    }

    /** The lock for this sandbox, created on first use; each call must be matched by one {@link Lock#release()}. */
    static Lock acquire(String provider, String sandboxId) {
        String key = provider + "\u0000" + sandboxId;
        synchronized (LOCKS) { // held for a map update only, never across I/O
            Lock l = LOCKS.computeIfAbsent(key, Lock::new);
            l.holders++;
            return l;
        }
    }

    /** How many sandboxes have a lock entry (for tests: none once everything is closed). */
    static int size() {
        synchronized (LOCKS) {
            return LOCKS.size();
        }
    }

    static final class Lock extends ReentrantLock {
        private static final long serialVersionUID = 1L;
        private final String key;
        private int holders;

        private Lock(String key) {
            this.key = key;
        }

        /** One holder is done with the sandbox; the last one removes the entry. */
        void release() {
            synchronized (LOCKS) {
                if (--holders == 0) {
                    LOCKS.remove(key, this);
                }
            }
        }
    }
}
