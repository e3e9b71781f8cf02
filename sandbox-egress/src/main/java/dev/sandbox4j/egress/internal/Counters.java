package dev.sandbox4j.egress.internal;

import dev.sandbox4j.egress.RefusalReason;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/** The proxy's counters, read into an {@code EgressStats} snapshot. */
public final class Counters {
    final AtomicLong accepted = new AtomicLong();
    final AtomicLong open = new AtomicLong();
    final AtomicLong admitted = new AtomicLong();
    final AtomicLong upstreamFailures = new AtomicLong();
    final AtomicLong idleClosed = new AtomicLong();
    final AtomicLong lifetimeClosed = new AtomicLong();
    final AtomicLong bytesUp = new AtomicLong();
    final AtomicLong bytesDown = new AtomicLong();
    private final AtomicLongArray refusals = new AtomicLongArray(RefusalReason.values().length);

    void refused(RefusalReason r) {
        refusals.incrementAndGet(r.ordinal());
    }

    public long accepted() {
        return accepted.get();
    }

    public long open() {
        return open.get();
    }

    public long admitted() {
        return admitted.get();
    }

    public long upstreamFailures() {
        return upstreamFailures.get();
    }

    public long idleClosed() {
        return idleClosed.get();
    }

    public long lifetimeClosed() {
        return lifetimeClosed.get();
    }

    public long bytesUp() {
        return bytesUp.get();
    }

    public long bytesDown() {
        return bytesDown.get();
    }

    public Map<RefusalReason, Long> refusals() {
        Map<RefusalReason, Long> m = new EnumMap<>(RefusalReason.class);
        for (RefusalReason r : RefusalReason.values()) {
            m.put(r, refusals.get(r.ordinal()));
        }
        return m;
    }
}
