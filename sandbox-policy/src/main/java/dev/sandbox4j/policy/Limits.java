package dev.sandbox4j.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Size and lifetime of a sandbox. Every value is optional: unset means the runner's default
 * (for the lifetime, sandbox-api derives one from the budget plus a margin).
 *
 * @since 0.1.0
 */
public final class Limits {
    private static final Limits DEFAULTS = builder().build();

    private final Duration lifetime;
    private final Integer vcpus;
    private final Integer memoryMib;
    private final Integer diskMib;

    private Limits(Builder b) {
        this.lifetime = b.lifetime;
        this.vcpus = b.vcpus;
        this.memoryMib = b.memoryMib;
        this.diskMib = b.diskMib;
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

    @Override
    public boolean equals(Object o) {
        return o instanceof Limits l && Objects.equals(l.lifetime, lifetime) && Objects.equals(l.vcpus, vcpus)
                && Objects.equals(l.memoryMib, memoryMib) && Objects.equals(l.diskMib, diskMib);
    }

    @Override
    public int hashCode() {
        return Objects.hash(lifetime, vcpus, memoryMib, diskMib);
    }

    @Override
    public String toString() {
        return "Limits[lifetime=" + (lifetime == null ? "default" : lifetime)
                + ", vcpus=" + (vcpus == null ? "default" : vcpus)
                + ", memoryMib=" + (memoryMib == null ? "default" : memoryMib)
                + ", diskMib=" + (diskMib == null ? "default" : diskMib) + "]";
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
            if (!problems.isEmpty()) {
                throw new InvalidPolicyException(problems);
            }
            return new Limits(this);
        }
    }
}
