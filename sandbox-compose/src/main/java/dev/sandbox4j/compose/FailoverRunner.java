package dev.sandbox4j.compose;

import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Cidr;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import dev.sandbox4j.api.Attempt;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.ForwardingSandbox;
import dev.sandbox4j.api.LifecycleStats;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.SweepRequest;
import dev.sandbox4j.api.SweepResult;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxInterruptedException;

/**
 * Opens a sandbox on the first of several runners that can, in order.
 *
 * <pre>{@code
 * SandboxRunner runner = FailoverRunner.builder().runner(e2b).runner(daytona).build();
 * RunResult r = runner.run(request);   // r.attempts(): e2b SandboxException 503, daytona ok
 * }</pre>
 *
 * <p>Failover wraps {@link #open} only. It moves on to the next runner when opening failed with a
 * {@link SandboxException} that {@linkplain SandboxException#isRetriable() is retriable} and
 * {@linkplain SandboxException#codeMayHaveRun() ran no code}; any other failure is thrown at once.
 * {@link Sandbox#exec} goes to the one sandbox that was opened and is never retried or moved, so
 * untrusted code never runs twice. A runner's {@link UnsupportedPolicyException} is an error unless
 * {@link Builder#failoverOnUnsupportedPolicy(boolean)} is set: a caller who asked for a policy should
 * hear that the preferred runner cannot enforce it, not silently get another provider.
 *
 * <p>When every runner failed, the last runner's exception is thrown (its type tells the caller what
 * to do next) with the earlier ones {@linkplain Throwable#getSuppressed() suppressed}. On success,
 * {@link Sandbox#attempts()} and every {@link RunResult#attempts()} hold the whole chain: one attempt
 * per runner that failed, then the attempts of the runner that succeeded.
 *
 * <p>Thread-safe if the runners are. {@link #close()} closes every runner.
 *
 * @since 0.1.0
 */
public final class FailoverRunner implements SandboxRunner {
    private final List<SandboxRunner> runners;
    private final boolean failoverOnUnsupportedPolicy;
    private final String name;
    private final Capabilities capabilities;
    private volatile boolean closed;

    private FailoverRunner(Builder b) {
        this.runners = List.copyOf(b.runners);
        this.failoverOnUnsupportedPolicy = b.failoverOnUnsupportedPolicy;
        this.name = runners.stream().map(SandboxRunner::name).collect(Collectors.joining(", ", "failover(", ")"));
        this.capabilities = intersection(name, runners);
    }

    /** {@return a new builder with no runner; an unsupported policy is an error by default} */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Failover over {@code runners} in this order, with an unsupported policy being an error.
     *
     * @param runners tried in this order, at least one
     * @return the failover runner
     * @throws IllegalArgumentException with no runner
     */
    public static FailoverRunner of(SandboxRunner... runners) {
        Builder b = builder();
        for (SandboxRunner r : runners) {
            b.runner(r);
        }
        return b.build();
    }

    /** {@return the runners in the order they are tried} */
    public List<SandboxRunner> runners() {
        return runners;
    }

    /** {@code failover(a, b, ...)}. */
    @Override
    public String name() {
        return name;
    }

    /**
     * The intersection of the runners' capabilities: what every runner enforces exactly, the smallest
     * of their maxima, every network any of them always blocks, every allowance any of them adds (named
     * by runner), and each runner's own checks. Not the first runner's alone: after a failover the spec
     * is served by another runner, so only what all of them enforce is promised; a policy inside these
     * capabilities is never refused by whichever runner ends up serving it.
     */
    @Override
    public Capabilities capabilities() {
        return capabilities;
    }

    @Override
    public Sandbox open(SandboxSpec spec) {
        Objects.requireNonNull(spec, "spec");
        ensureOpen();
        List<Attempt> chain = new ArrayList<>();
        List<RuntimeException> failures = new ArrayList<>();
        for (SandboxRunner runner : runners) {
            if (!failures.isEmpty() && Thread.currentThread().isInterrupted()) {
                // the flag stays set: the caller's thread was asked to stop, so no further provider is tried
                throw fail(new SandboxInterruptedException(SandboxException.builder(
                        "interrupted before trying " + runner.name() + " after " + failures.size() + " failed attempt(s)")
                        .provider(name)), failures);
            }
            long t0 = System.nanoTime();
            try {
                Sandbox sandbox = runner.open(spec);
                List<Attempt> own = sandbox.attempts();
                chain.addAll(own.isEmpty() ? List.of(Attempt.succeeded(runner.name(), since(t0))) : own);
                return new FailoverSandbox(sandbox, chain);
            } catch (UnsupportedPolicyException e) {
                chain.add(Attempt.failed(runner.name(), e, since(t0)));
                if (!failoverOnUnsupportedPolicy) {
                    throw fail(e, failures);
                }
                failures.add(e);
            } catch (SandboxException e) {
                chain.add(Attempt.failed(runner.name(), e, since(t0)));
                if (!e.isRetriable() || e.codeMayHaveRun()) {
                    throw fail(e, failures);
                }
                failures.add(e);
            }
        }
        RuntimeException last = failures.remove(failures.size() - 1);
        throw fail(last, failures);
    }

    /** Failover does not attach (the id names a sandbox of one runner): refused, after the closed check. */
    @Override
    public Sandbox attach(String sandboxId, SandboxSpec expected) {
        ensureOpen();
        return SandboxRunner.super.attach(sandboxId, expected);
    }

    /** The sum over every runner. */
    @Override
    public LifecycleStats lifecycleStats() {
        LifecycleStats sum = LifecycleStats.EMPTY;
        for (SandboxRunner r : runners) {
            sum = sum.plus(r.lifecycleStats());
        }
        return sum;
    }

    /** Sweeps every runner that can list its sandboxes, and merges what they did. */
    @Override
    public SweepResult sweep(SweepRequest request) {
        ensureOpen();
        int listed = 0;
        List<String> destroyed = new ArrayList<>();
        List<String> gone = new ArrayList<>();
        List<String> failed = new ArrayList<>();
        boolean any = false;
        for (SandboxRunner r : runners) {
            SweepResult one;
            try {
                one = r.sweep(request);
            } catch (UnsupportedOperationException e) {
                continue;
            }
            any = true;
            listed += one.listed();
            destroyed.addAll(one.destroyed());
            gone.addAll(one.alreadyGone());
            failed.addAll(one.failed());
        }
        if (!any) {
            throw new UnsupportedOperationException(name + ": none of its runners can list its sandboxes");
        }
        return SweepResult.builder().listed(listed).destroyed(destroyed).alreadyGone(gone).failed(failed).build();
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException(name + " is closed: it takes no more work; build a new runner");
        }
    }

    /**
     * Refuses new work from now on and closes every runner, even when one throws; the first exception is
     * thrown with the rest suppressed.
     */
    @Override
    public void close() {
        closed = true;
        RuntimeException first = null;
        for (SandboxRunner r : runners) {
            try {
                r.close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    @Override
    public String toString() {
        return "FailoverRunner[" + name + (failoverOnUnsupportedPolicy ? ", on unsupported policy too" : "") + "]";
    }

    private static RuntimeException fail(RuntimeException thrown, List<RuntimeException> earlier) {
        for (RuntimeException e : earlier) {
            if (e != thrown) {
                thrown.addSuppressed(e);
            }
        }
        return thrown;
    }

    private static Duration since(long t0) {
        return Duration.ofNanos(System.nanoTime() - t0);
    }

    private static Capabilities intersection(String name, List<SandboxRunner> runners) {
        List<Capabilities> all = runners.stream().map(SandboxRunner::capabilities).toList();
        Set<Capabilities.Egress> egress = EnumSet.allOf(Capabilities.Egress.class);
        Set<Capabilities.Limit> limits = EnumSet.allOf(Capabilities.Limit.class);
        Set<Capabilities.Feature> features = EnumSet.allOf(Capabilities.Feature.class);
        Set<Language> languages = EnumSet.allOf(Language.class);
        int maxDomains = Integer.MAX_VALUE;
        int maxAllowed = Integer.MAX_VALUE;
        int maxDenied = Integer.MAX_VALUE;
        List<String> blocked = new ArrayList<>();
        List<String> allowances = new ArrayList<>();
        for (Capabilities c : all) {
            egress.retainAll(c.egress());
            limits.retainAll(c.limits());
            features.retainAll(c.features());
            languages.retainAll(c.languages());
            maxDomains = Math.min(maxDomains, c.maxAllowedDomains());
            maxAllowed = Math.min(maxAllowed, c.maxAllowedCidrs());
            maxDenied = Math.min(maxDenied, c.maxDeniedCidrs());
            for (Cidr cidr : c.alwaysBlocked()) {
                if (!blocked.contains(cidr.toString())) {
                    blocked.add(cidr.toString());
                }
            }
            c.implicitAllowances().forEach(a -> allowances.add(c.runner() + ": " + a));
        }
        Capabilities.Builder b = Capabilities.builder(name)
                .egress(egress.toArray(Capabilities.Egress[]::new))
                .limits(limits.toArray(Capabilities.Limit[]::new))
                .features(features.toArray(Capabilities.Feature[]::new))
                .languages(languages.toArray(Language[]::new))
                .maxAllowedDomains(maxDomains)
                .maxAllowedCidrs(maxAllowed)
                .maxDeniedCidrs(maxDenied)
                .alwaysBlocked(blocked);
        allowances.forEach(b::implicitAllowance);
        // each runner's full verdict, so its provider-specific checks (which Capabilities does not
        // expose) apply too; the sentences name the runner that would refuse
        return b.check((policy, lim) -> all.stream().flatMap(c -> c.violations(policy, lim).stream()).toList())
                .build();
    }

    /** The sandbox a runner opened, reporting the whole attempt chain. */
    private static final class FailoverSandbox extends ForwardingSandbox {
        private final List<Attempt> attempts;

        FailoverSandbox(Sandbox delegate, List<Attempt> attempts) {
            super(delegate);
            this.attempts = List.copyOf(attempts);
        }

        @Override
        public List<Attempt> attempts() {
            return attempts;
        }

        @Override
        public RunResult exec(Execution execution) {
            return delegate().exec(execution).toBuilder().attempts(attempts).build();
        }
    }

    /**
     * Collects the runners of a failover, in order.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private final List<SandboxRunner> runners = new ArrayList<>();
        private boolean failoverOnUnsupportedPolicy;

        private Builder() {
        }

        /**
         * Adds a runner; runners are tried in the order they were added.
         *
         * @param runner not null
         * @return this builder
         */
        public Builder runner(SandboxRunner runner) {
            runners.add(Objects.requireNonNull(runner, "runner"));
            return this;
        }

        /**
         * Whether a runner that cannot enforce the spec's policy ({@link UnsupportedPolicyException})
         * hands over to the next runner. Default false: the refusal is thrown. Even when true, no
         * runner ever runs code under a weaker policy; the next runner checks the spec itself.
         *
         * @param failover true to hand over on an unsupported policy
         * @return this builder
         */
        public Builder failoverOnUnsupportedPolicy(boolean failover) {
            this.failoverOnUnsupportedPolicy = failover;
            return this;
        }

        /**
         * Builds the failover runner.
         *
         * @return the runner, named {@code failover(a, b, ...)}, with the capabilities every runner shares
         * @throws IllegalArgumentException with no runner
         */
        public FailoverRunner build() {
            if (runners.isEmpty()) {
                throw new IllegalArgumentException("a failover runner needs at least one runner");
            }
            return new FailoverRunner(this);
        }
    }
}
