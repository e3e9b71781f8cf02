package dev.sandbox4j.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Size and lifetime of a sandbox, and how much it may move over the network. Every value is
 * optional: unset means the runner's default (for the lifetime, sandbox-api derives one from the
 * budget plus a margin; for the network, no cap beyond the runner's own). A runner refuses a value it
 * cannot apply ({@link Capabilities.Limit}).
 *
 * @since 0.1.0
 */
public final class Limits {
    private static final Limits DEFAULTS = builder().build();

    private final Duration lifetime;
    private final Integer vcpus;
    private final Integer memoryMib;
    private final Integer diskMib;
    private final Integer networkMib;

    private Limits(Builder b) {
        this.lifetime = b.lifetime;
        this.vcpus = b.vcpus;
        this.memoryMib = b.memoryMib;
        this.diskMib = b.diskMib;
        this.networkMib = b.networkMib;
    }

    /**
     * Everything at the runner's default.
     *
     * @return the shared limits with no value set
     */
    public static Limits defaults() {
        return DEFAULTS;
    }

    /** {@return a new builder with no value set} */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return a builder holding this value's settings, to derive changed limits from} */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.lifetime = lifetime;
        b.vcpus = vcpus;
        b.memoryMib = memoryMib;
        b.diskMib = diskMib;
        b.networkMib = networkMib;
        return b;
    }

    /**
     * How long the provider keeps the sandbox alive at most, whatever the client does.
     *
     * @return the lifetime, positive; empty for the runner's default
     */
    public Optional<Duration> lifetime() {
        return Optional.ofNullable(lifetime);
    }

    /** {@return the number of virtual CPUs, positive; empty for the runner's default} */
    public OptionalInt vcpus() {
        return vcpus == null ? OptionalInt.empty() : OptionalInt.of(vcpus);
    }

    /** {@return the memory size in MiB, positive; empty for the runner's default} */
    public OptionalInt memoryMib() {
        return memoryMib == null ? OptionalInt.empty() : OptionalInt.of(memoryMib);
    }

    /** {@return the disk size in MiB, positive; empty for the runner's default} */
    public OptionalInt diskMib() {
        return diskMib == null ? OptionalInt.empty() : OptionalInt.of(diskMib);
    }

    /**
     * The most the sandbox may move over the network over its whole life: bytes sent and received
     * together, as the runner's egress proxy relays them (setup and code alike, across lock-downs).
     * When it is reached, the connection that crossed it is closed and every later connection is
     * refused. Only a runner that declares {@link Capabilities.Limit#NETWORK} takes it, and only where
     * every byte goes through its proxy (a domain or CIDR list, or deny-all; not allow-all).
     *
     * @return the cap in MiB, positive; empty for none
     */
    public OptionalInt networkMib() {
        return networkMib == null ? OptionalInt.empty() : OptionalInt.of(networkMib);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Limits l && Objects.equals(l.lifetime, lifetime) && Objects.equals(l.vcpus, vcpus)
                && Objects.equals(l.memoryMib, memoryMib) && Objects.equals(l.diskMib, diskMib)
                && Objects.equals(l.networkMib, networkMib);
    }

    @Override
    public int hashCode() {
        return Objects.hash(lifetime, vcpus, memoryMib, diskMib, networkMib);
    }

    @Override
    public String toString() {
        return "Limits[lifetime=" + (lifetime == null ? "default" : lifetime)
                + ", vcpus=" + (vcpus == null ? "default" : vcpus)
                + ", memoryMib=" + (memoryMib == null ? "default" : memoryMib)
                + ", diskMib=" + (diskMib == null ? "default" : diskMib)
                + (networkMib == null ? "" : ", networkMib=" + networkMib) + "]";
    }

    /**
     * Collects limits; {@link #build()} checks every value is positive. Unset values stay at the runner's
     * default.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private Duration lifetime;
        private Integer vcpus;
        private Integer memoryMib;
        private Integer diskMib;
        private Integer networkMib;

        private Builder() {
        }

        /**
         * Sets the most time the provider keeps the sandbox alive. Default unset.
         *
         * @param lifetime positive; null to unset
         * @return this builder
         */
        public Builder lifetime(Duration lifetime) {
            this.lifetime = lifetime;
            return this;
        }

        /**
         * Sets the number of virtual CPUs. Default unset.
         *
         * @param vcpus positive
         * @return this builder
         */
        public Builder vcpus(int vcpus) {
            this.vcpus = vcpus;
            return this;
        }

        /**
         * Sets the memory size. Default unset.
         *
         * @param memoryMib in MiB, positive
         * @return this builder
         */
        public Builder memoryMib(int memoryMib) {
            this.memoryMib = memoryMib;
            return this;
        }

        /**
         * Sets the disk size. Default unset.
         *
         * @param diskMib in MiB, positive
         * @return this builder
         */
        public Builder diskMib(int diskMib) {
            this.diskMib = diskMib;
            return this;
        }

        /**
         * Sets the most the sandbox may move over the network, sent and received together
         * ({@link Limits#networkMib()}). Default unset.
         *
         * @param networkMib in MiB, positive
         * @return this builder
         */
        public Builder networkMib(int networkMib) {
            this.networkMib = networkMib;
            return this;
        }

        /**
         * Checks every value and builds the limits.
         *
         * @return the limits
         * @throws InvalidPolicyException for zero or negative values
         */
        public Limits build() {
            List<String> problems = new ArrayList<>();
            if (lifetime != null && (lifetime.isNegative() || lifetime.isZero())) {
                problems.add("lifetime must be positive, was " + lifetime);
            }
            if (vcpus != null && vcpus <= 0) {
                problems.add("vcpus must be positive, was " + vcpus);
            }
            if (memoryMib != null && memoryMib <= 0) {
                problems.add("memoryMib must be positive, was " + memoryMib);
            }
            if (diskMib != null && diskMib <= 0) {
                problems.add("diskMib must be positive, was " + diskMib);
            }
            if (networkMib != null && networkMib <= 0) {
                problems.add("networkMib must be positive, was " + networkMib);
            }
            if (!problems.isEmpty()) {
                throw new InvalidPolicyException(problems);
            }
            return new Limits(this);
        }
    }
}
