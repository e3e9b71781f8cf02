package dev.sandbox4j.compose.internal;

import dev.sandbox4j.compose.PermitStore;
import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The default permit store: counts in this JVM's memory, so a cap holds within one JVM only. A lease
 * is never lost here; a detached sandbox's permit is kept until it is adopted or its lifetime passes.
 */
public final class InProcessPermitStore implements PermitStore {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition released = lock.newCondition();
    // keys with at least one permit held; an entry is removed when its count drops to zero
    private final Map<String, Integer> heldByKey = new HashMap<>();
    // permits of detached sandboxes: "key\0sandboxId" -> the System.nanoTime() their lifetime ends
    private final Map<String, Long> detached = new HashMap<>();
    private int held;
    private long releases;

    @Override
    public Acquisition tryAcquire(String key, int perKey, int global) {
        lock.lock();
        try {
            expireDetached();
            int ofKey = heldByKey.getOrDefault(key, 0);
            if (held >= global || ofKey >= perKey) {
                return Acquisition.refused(ofKey, held, releases);
            }
            held++;
            heldByKey.merge(key, 1, Integer::sum);
            return Acquisition.granted(new Held(key, Long.MAX_VALUE));
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Lease adopt(String key, String sandboxId) {
        lock.lock();
        try {
            expireDetached();
            Long until = detached.remove(key + '\0' + sandboxId);
            // the permit stays counted: it only changes hands
            return until == null ? null : new Held(key, until);
        } finally {
            lock.unlock();
        }
    }

    private void release(String key) {
        lock.lock();
        try {
            held--;
            heldByKey.computeIfPresent(key, (k, n) -> n == 1 ? null : n - 1);
            releases++;
            // every waiter re-checks: the freed permit may suit a waiter on another key, and a
            // waiter that was interrupted meanwhile must not swallow the only signal
            released.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Frees the permits of detached sandboxes whose lifetime has passed. Under the lock. */
    private void expireDetached() {
        long now = System.nanoTime();
        for (Iterator<Map.Entry<String, Long>> it = detached.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Long> e = it.next();
            if (now - e.getValue() >= 0) {
                it.remove();
                release(e.getKey().substring(0, e.getKey().indexOf('\0')));
            }
        }
    }

    /** Nanoseconds until the next detached permit expires, at most {@code nanos}. Under the lock. */
    private long untilNextExpiry(long nanos) {
        long now = System.nanoTime();
        for (long until : detached.values()) {
            nanos = Math.min(nanos, Math.max(0, until - now));
        }
        return nanos;
    }

    @Override
    public long awaitRelease(Acquisition refused, long nanos) throws InterruptedException {
        long start = System.nanoTime();
        lock.lock();
        try {
            // a release between the refusal and now counts: return at once and let the caller try again
            while (releases == refused.epoch()) {
                long left = nanos - (System.nanoTime() - start);
                if (left <= 0) {
                    break;
                }
                long wait = untilNextExpiry(left);
                if (wait == 0) {
                    expireDetached();
                    continue;
                }
                released.awaitNanos(wait);
            }
            return nanos - (System.nanoTime() - start);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int inUse() {
        lock.lock();
        try {
            expireDetached();
            return held;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int inUse(String key) {
        lock.lock();
        try {
            expireDetached();
            return heldByKey.getOrDefault(key, 0);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int activeKeys() {
        lock.lock();
        try {
            expireDetached();
            return heldByKey.size();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "in-process";
    }

    private final class Held implements Lease {
        private final String key;
        // when adopted: the lifetime end of the detached sandbox, which a new detach does not extend
        private final long until;

        Held(String key, long until) {
            this.key = key;
            this.until = until;
        }

        @Override
        public void release() {
            InProcessPermitStore.this.release(key);
        }

        @Override
        public boolean detach(String sandboxId, Duration lifetime) {
            Duration capped = lifetime.compareTo(Duration.ofDays(365)) > 0 ? Duration.ofDays(365) : lifetime;
            long end = System.nanoTime() + capped.toNanos();
            if (until != Long.MAX_VALUE && until - end < 0) {
                end = until;
            }
            lock.lock();
            try {
                detached.put(key + '\0' + sandboxId, end);
            } finally {
                lock.unlock();
            }
            return true;
        }
    }
}
