package dev.sandbox4j.api.internal;

import dev.sandbox4j.api.spi.PermitStore;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/** The default permit store: counts in this JVM's memory, so a cap holds within one JVM only. */
public final class InProcessPermitStore implements PermitStore {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition released = lock.newCondition();
    // keys with at least one permit held; an entry is removed when its count drops to zero
    private final Map<String, Integer> heldByKey = new HashMap<>();
    private int held;
    private long releases;

    @Override
    public Acquisition tryAcquire(String key, int perKey, int global) {
        lock.lock();
        try {
            int ofKey = heldByKey.getOrDefault(key, 0);
            if (held >= global || ofKey >= perKey) {
                return Acquisition.refused(ofKey, held, releases);
            }
            held++;
            heldByKey.merge(key, 1, Integer::sum);
            return Acquisition.granted(() -> release(key));
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

    @Override
    public long awaitRelease(Acquisition refused, long nanos) throws InterruptedException {
        lock.lock();
        try {
            // a release between the refusal and now counts: return at once and let the caller try again
            while (releases == refused.epoch() && nanos > 0) {
                nanos = released.awaitNanos(nanos);
            }
            return nanos;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int inUse() {
        lock.lock();
        try {
            return held;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int inUse(String key) {
        lock.lock();
        try {
            return heldByKey.getOrDefault(key, 0);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int activeKeys() {
        lock.lock();
        try {
            return heldByKey.size();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "in-process";
    }
}
