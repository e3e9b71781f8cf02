package dev.sandbox4j.egress;

import java.time.Duration;
import java.util.Objects;

/**
 * The limits of one proxy, which serves one sandbox: concurrent connections, bytes relayed in both
 * directions together over the proxy's life, how long a connection may sit idle and how long it may
 * live, and how long an upstream connect may take.
 *
 * <p>A connection over {@link #maxConnections()} is refused with a 403 at once; when
 * {@link #maxBytes()} is reached, the connection that crossed it is closed and every later request is
 * refused ({@link RefusalReason#BYTE_LIMIT}). A connection idle for {@link #idleTimeout()} or open for
 * {@link #maxConnectionLifetime()} is closed (counted in {@link EgressStats#idleClosed()} and
 * {@link EgressStats#lifetimeClosed()}).
 *
 * @since 0.1.0
 */
public final class EgressLimits {
    private static final EgressLimits DEFAULTS = builder().build();

    private final int maxConnections;
    private final long maxBytes;
    private final Duration idleTimeout;
    private final Duration maxConnectionLifetime;
    private final Duration connectTimeout;
    private final int maxHeaderBytes;

    private EgressLimits(Builder b) {
        this.maxConnections = b.maxConnections;
        this.maxBytes = b.maxBytes;
        this.idleTimeout = b.idleTimeout;
        this.maxConnectionLifetime = b.maxConnectionLifetime;
        this.connectTimeout = b.connectTimeout;
        this.maxHeaderBytes = b.maxHeaderBytes;
    }

    /**
     * 64 connections, 4 GiB, 5 minutes idle, 1 hour per connection, 10 s to connect, 64 KiB of
     * request or response head.
     *
     * @return the shared default limits
     */
    public static EgressLimits defaults() {
        return DEFAULTS;
    }

    /** {@return a new builder at the {@link #defaults()}} */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return a builder holding these limits, to derive changed ones from} */
    public Builder toBuilder() {
        return new Builder().maxConnections(maxConnections).maxBytes(maxBytes).idleTimeout(idleTimeout)
                .maxConnectionLifetime(maxConnectionLifetime).connectTimeout(connectTimeout).maxHeaderBytes(maxHeaderBytes);
    }

    /** {@return the most concurrent connections from the sandbox to the proxy; default 64} */
    public int maxConnections() {
        return maxConnections;
    }

    /** {@return the most bytes relayed, both directions together, over the proxy's life; default 4 GiB} */
    public long maxBytes() {
        return maxBytes;
    }

    /** {@return how long a connection may sit idle before it is closed; default 5 minutes} */
    public Duration idleTimeout() {
        return idleTimeout;
    }

    /** {@return how long a connection may stay open before it is closed; default 1 hour} */
    public Duration maxConnectionLifetime() {
        return maxConnectionLifetime;
    }

    /** {@return how long an upstream connect may take; default 10 s} */
    public Duration connectTimeout() {
        return connectTimeout;
    }

    /**
     * {@return the longest request or response head (start line and headers) the proxy reads, in bytes;
     * default 64 KiB}
     */
    public int maxHeaderBytes() {
        return maxHeaderBytes;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EgressLimits l && l.maxConnections == maxConnections && l.maxBytes == maxBytes
                && l.idleTimeout.equals(idleTimeout) && l.maxConnectionLifetime.equals(maxConnectionLifetime)
                && l.connectTimeout.equals(connectTimeout) && l.maxHeaderBytes == maxHeaderBytes;
    }

    @Override
    public int hashCode() {
        return Objects.hash(maxConnections, maxBytes, idleTimeout, maxConnectionLifetime, connectTimeout, maxHeaderBytes);
    }

    @Override
    public String toString() {
        return "EgressLimits[connections=" + maxConnections + ", bytes=" + maxBytes + ", idle=" + idleTimeout
                + ", lifetime=" + maxConnectionLifetime + ", connect=" + connectTimeout + ", head=" + maxHeaderBytes + "]";
    }

    /**
     * Collects limits; every value must be positive.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private int maxConnections = 64;
        private long maxBytes = 4L << 30;
        private Duration idleTimeout = Duration.ofMinutes(5);
        private Duration maxConnectionLifetime = Duration.ofHours(1);
        private Duration connectTimeout = Duration.ofSeconds(10);
        private int maxHeaderBytes = 64 << 10;

        private Builder() {
        }

        /**
         * Concurrent connections from the sandbox to the proxy.
         *
         * @param n positive; default 64
         * @return this builder
         * @throws IllegalArgumentException when zero or negative
         */
        public Builder maxConnections(int n) {
            this.maxConnections = positive(n, "maxConnections");
            return this;
        }

        /**
         * Bytes relayed, both directions together, over the proxy's life.
         *
         * @param n positive; default 4 GiB
         * @return this builder
         * @throws IllegalArgumentException when zero or negative
         */
        public Builder maxBytes(long n) {
            if (n <= 0) {
                throw new IllegalArgumentException("maxBytes must be positive: " + n);
            }
            this.maxBytes = n;
            return this;
        }

        /**
         * Sets how long a connection may sit idle before it is closed. Default 5 minutes.
         *
         * @param d positive
         * @return this builder
         * @throws IllegalArgumentException when zero or negative
         */
        public Builder idleTimeout(Duration d) {
            this.idleTimeout = positive(d, "idleTimeout");
            return this;
        }

        /**
         * Sets how long a connection may stay open before it is closed. Default 1 hour.
         *
         * @param d positive
         * @return this builder
         * @throws IllegalArgumentException when zero or negative
         */
        public Builder maxConnectionLifetime(Duration d) {
            this.maxConnectionLifetime = positive(d, "maxConnectionLifetime");
            return this;
        }

        /**
         * Sets how long an upstream connect may take. Default 10 s.
         *
         * @param d positive
         * @return this builder
         * @throws IllegalArgumentException when zero or negative
         */
        public Builder connectTimeout(Duration d) {
            this.connectTimeout = positive(d, "connectTimeout");
            return this;
        }

        /**
         * The longest request or response head (start line and headers) the proxy reads.
         *
         * @param n in bytes, positive; default 64 KiB
         * @return this builder
         * @throws IllegalArgumentException when zero or negative
         */
        public Builder maxHeaderBytes(int n) {
            this.maxHeaderBytes = positive(n, "maxHeaderBytes");
            return this;
        }

        /** {@return the limits} */
        public EgressLimits build() {
            return new EgressLimits(this);
        }

        private static int positive(int n, String what) {
            if (n <= 0) {
                throw new IllegalArgumentException(what + " must be positive: " + n);
            }
            return n;
        }

        private static Duration positive(Duration d, String what) {
            Objects.requireNonNull(d, what);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be positive: " + d);
            }
            return d;
        }
    }
}
