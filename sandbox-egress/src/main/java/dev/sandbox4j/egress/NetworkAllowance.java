package dev.sandbox4j.egress;

import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One sandbox's network allowance ({@link Limits#networkMib()}: bytes sent and received together, over its
 * whole life) counted across the egress proxies a runner starts for it one after another: the setup's
 * proxy, then the code's after the lock-down. The runner starts each proxy with {@link #left()} as its
 * {@linkplain EgressProxy.Builder#maxBytesAtMost cap}; at an egress change it closes the proxy in place
 * first and counts what it relayed ({@link #retire}, or {@link #count} for a proxy it wraps), and only then
 * starts the next one with what is left, so no two proxies of the sandbox relay at once and together they
 * never pass the allowance. When nothing is left ({@link #spent()}) the runner starts no proxy: the sandbox
 * has no route out.
 *
 * <p>Allow-all egress reaches the network past the proxy, where nothing counts it: a runner refuses an
 * allowance with it, as the code's or the setup's egress, before it makes anything
 * ({@link #requireCountable}). Deny-all moves nothing, so any allowance holds there.
 *
 * <p>Thread-safe.
 *
 * @since 0.1.0
 */
public final class NetworkAllowance {
    /** The byte count standing for no allowance of the sandbox's own ({@link #bytes(Limits)}, {@link #left()}). */
    public static final long NONE = Long.MAX_VALUE;

    private final long bytes;
    private final AtomicLong used = new AtomicLong();

    private NetworkAllowance(long bytes) {
        this.bytes = bytes;
    }

    /**
     * The allowance {@code limits} sets.
     *
     * @param limits not null
     * @return an allowance of {@link #bytes(Limits)}; unlimited without {@link Limits#networkMib()}
     */
    public static NetworkAllowance of(Limits limits) {
        return ofBytes(bytes(limits));
    }

    /**
     * An allowance of {@code bytes}.
     *
     * @param bytes positive; {@link #NONE} for no allowance
     * @return a new allowance, nothing counted yet
     * @throws IllegalArgumentException when not positive
     */
    public static NetworkAllowance ofBytes(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("a network allowance must be positive: " + bytes);
        }
        return new NetworkAllowance(bytes);
    }

    /**
     * The allowance {@code limits} sets, in bytes.
     *
     * @param limits not null
     * @return {@link Limits#networkMib()} in bytes, or {@link #NONE} without it
     */
    public static long bytes(Limits limits) {
        Objects.requireNonNull(limits, "limits");
        return limits.networkMib().isPresent() ? limits.networkMib().getAsInt() * (1L << 20) : NONE;
    }

    /** {@return the whole allowance in bytes, {@link #NONE} for none} */
    public long bytes() {
        return bytes;
    }

    /** {@return true when the sandbox has an allowance of its own} */
    public boolean limited() {
        return bytes != NONE;
    }

    /** {@return the bytes the retired proxies relayed, counted against the allowance} */
    public long used() {
        return used.get();
    }

    /**
     * What the next proxy may relay: the allowance less what the retired proxies relayed.
     *
     * @return zero or more; {@link #NONE} without an allowance
     */
    public long left() {
        return limited() ? Math.max(0, bytes - used.get()) : NONE;
    }

    /** {@return true when the sandbox has an allowance and nothing of it is left: start no proxy} */
    public boolean spent() {
        return left() == 0;
    }

    /**
     * Counts what a proxy relayed, read after it was closed.
     *
     * @param relayed the bytes it relayed, both directions together; zero or more
     * @throws IllegalArgumentException when negative
     */
    public void count(long relayed) {
        if (relayed < 0) {
            throw new IllegalArgumentException("relayed bytes cannot be negative: " + relayed);
        }
        used.accumulateAndGet(relayed, (u, r) -> r > Long.MAX_VALUE - u ? Long.MAX_VALUE : u + r);
    }

    /**
     * Closes {@code proxy} (every connection it holds at once) and counts what it relayed, up and down.
     *
     * @param proxy the proxy taken out of place; not null
     * @return the bytes it relayed
     */
    public long retire(EgressProxy proxy) {
        long relayed;
        try {
            proxy.close();
        } finally {
            // read once it is closed: no connection of it relays any more
            EgressStats st = proxy.stats();
            relayed = st.bytesUp() + st.bytesDown();
            count(relayed);
        }
        return relayed;
    }

    /**
     * Refuses an egress an allowance cannot be counted under: allow-all, whose traffic goes past the proxy.
     * A runner calls it, for a sandbox with an allowance, with the code's egress and the setup's before it
     * makes anything, and with the egress of each change.
     *
     * @param egress the egress the sandbox would have
     * @param runner the runner's (provider's) name, for the exception
     * @param allowAllRoute what allow-all is on this runner, completing "allow-all ... past it" (for example
     *        {@code "shares the host's network"})
     * @throws UnsupportedPolicyException when {@code egress} is allow-all
     */
    public static void requireCountable(EgressPolicy egress, String runner, String allowAllRoute) {
        if (egress.isAllowAll()) {
            throw new UnsupportedPolicyException(runner, List.of("a network limit with allow-all egress (the " + runner
                    + " runner counts a sandbox's bytes in its egress proxy, and allow-all " + allowAllRoute
                    + " past it: give a domain or CIDR list instead)"));
        }
    }

    @Override
    public String toString() {
        return limited() ? "NetworkAllowance[" + bytes + " bytes, " + used() + " used]" : "NetworkAllowance[none]";
    }
}
