package dev.sandbox4j.compose;

import java.util.Objects;

/**
 * A sandbox permit that its holder lost: the permit store found the lease gone (it expired while the
 * holder was paused or cut off, or the store lost its data) and the caps were full, or no renewal
 * succeeded within the lease time. The {@link ConcurrencyLimiter} then closes the sandbox (a running
 * exec ends with {@link PermitLostException}) and reports the loss to its listener.
 *
 * <p>When the caps were full at the time the loss was found, others held the permits while this
 * holder's sandbox was still open: the cap was exceeded for a while. {@link #perKeyExceeded()} and
 * {@link #globalExceeded()} say which caps that touched.
 *
 * @since 0.1.0
 */
public final class PermitLoss {
    /**
     * Why the permit is gone.
     *
     * @since 0.1.0
     */
    public enum Reason {
        /** The lease had expired in the store and the caps were full when the renewal came. */
        TAKEN,
        /** No renewal succeeded within the lease time (the store could not be reached): the lease may have expired. */
        NOT_RENEWED
    }

    private final String key;
    private final Reason reason;
    private final int heldByKey;
    private final int heldInAll;
    private final int perKey;
    private final int global;

    private PermitLoss(Builder b) {
        this.key = Objects.requireNonNull(b.key, "key");
        this.reason = Objects.requireNonNull(b.reason, "reason");
        this.heldByKey = b.heldByKey;
        this.heldInAll = b.heldInAll;
        this.perKey = b.perKey;
        this.global = b.global;
    }

    /**
     * Starts a loss of a permit of {@code key}: counts unknown (-1), no caps.
     *
     * @param key the key the permit was held under; not null
     * @param reason why the permit is gone; not null
     * @return a new builder
     */
    public static Builder builder(String key, Reason reason) {
        return new Builder(key, reason);
    }

    /** {@return the key the lost permit was held under} */
    public String key() {
        return key;
    }

    /** {@return why the permit is gone} */
    public Reason reason() {
        return reason;
    }

    /**
     * {@return the permits others held of this key when the loss was found; -1 when unknown ({@link
     * Reason#NOT_RENEWED})}
     */
    public int heldByKey() {
        return heldByKey;
    }

    /** {@return the permits others held in all when the loss was found; -1 when unknown} */
    public int heldInAll() {
        return heldInAll;
    }

    /** {@return the cap per key; {@link Integer#MAX_VALUE} when not given} */
    public int perKey() {
        return perKey;
    }

    /** {@return the global cap; {@link Integer#MAX_VALUE} when there is none} */
    public int global() {
        return global;
    }

    /** {@return true when the key's cap was full without this holder: with it, the key was over its cap} */
    public boolean perKeyExceeded() {
        return heldByKey >= perKey;
    }

    /**
     * {@return true when the global cap was full without this holder: with it, the global cap was exceeded}
     */
    public boolean globalExceeded() {
        return global != Integer.MAX_VALUE && heldInAll >= global;
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder("PermitLoss[key '").append(key).append("', ").append(reason);
        if (heldByKey >= 0) {
            s.append(", ").append(heldByKey).append(" of ").append(perKey).append(" per key held by others");
        }
        if (heldInAll >= 0 && global != Integer.MAX_VALUE) {
            s.append(", ").append(heldInAll).append(" of ").append(global).append(" in all");
        }
        if (perKeyExceeded() || globalExceeded()) {
            s.append(", exceeded:").append(perKeyExceeded() ? " per-key" : "").append(globalExceeded() ? " global" : "");
        }
        return s.append(']').toString();
    }

    /**
     * Collects a permit loss; for permit stores.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private final String key;
        private final Reason reason;
        private int heldByKey = -1;
        private int heldInAll = -1;
        private int perKey = Integer.MAX_VALUE;
        private int global = Integer.MAX_VALUE;

        private Builder(String key, Reason reason) {
            this.key = key;
            this.reason = reason;
        }

        /**
         * What the store counted, without the lost lease, when it found the loss.
         *
         * @param byKey permits of the key others held; -1 when unknown
         * @param inAll permits others held in all; -1 when unknown
         * @return this builder
         */
        public Builder held(int byKey, int inAll) {
            this.heldByKey = byKey;
            this.heldInAll = inAll;
            return this;
        }

        /**
         * Sets the limiter's caps at the time of the loss. Default none ({@link Integer#MAX_VALUE}).
         *
         * @param perKey the cap per key
         * @param global the global cap; {@link Integer#MAX_VALUE} for none
         * @return this builder
         */
        public Builder caps(int perKey, int global) {
            this.perKey = perKey;
            this.global = global;
            return this;
        }

        /** {@return the loss} */
        public PermitLoss build() {
            return new PermitLoss(this);
        }
    }
}
