package dev.sandbox4j.emulators;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts sandboxes created and torn down by an emulator, so tests can assert that nothing leaked.
 *
 * @since 0.1.0
 */
public final class Ledger {
    private final AtomicInteger created = new AtomicInteger();
    private final AtomicInteger destroyed = new AtomicInteger();
    private final Set<String> live = ConcurrentHashMap.newKeySet();

    /** Records a sandbox the emulator created. Public so emulators in sub-packages can record. */
    public void created(String id) {
        created.incrementAndGet();
        live.add(id);
    }

    /** Records a teardown (an explicit kill, an expiry, or the emulator's close). Counted once per id. */
    public void destroyed(String id) {
        if (live.remove(id)) {
            destroyed.incrementAndGet();
        }
    }

    public int created() {
        return created.get();
    }

    public int destroyed() {
        return destroyed.get();
    }

    /** Sandboxes created and not yet torn down. */
    public int live() {
        return live.size();
    }

    public Set<String> liveIds() {
        return Set.copyOf(live);
    }

    @Override
    public String toString() {
        return "Ledger[created=" + created + ", destroyed=" + destroyed + ", live=" + live.size() + "]";
    }
}
