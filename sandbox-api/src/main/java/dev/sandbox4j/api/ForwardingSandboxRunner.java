package dev.sandbox4j.api;

import dev.sandbox4j.policy.Capabilities;
import java.util.Objects;

/**
 * A {@link SandboxRunner} that forwards every call to another one: the shape of every adapter's
 * public runner (which forwards to the shared lifecycle) and of decorators, which override what they
 * change. {@link #run} is forwarded too (the lifecycle builds a one-shot result once); a decorator
 * that overrides {@link #open} must also override {@code run}, for instance with
 * {@code SandboxRunner}'s default: open, exec, close.
 *
 * @param <R> the wrapped runner's type
 *
 * @since 0.1.0
 */
public abstract class ForwardingSandboxRunner<R extends SandboxRunner> implements SandboxRunner {
    private final R delegate;

    /**
     * Wraps {@code delegate}.
     *
     * @param delegate the runner every call is forwarded to; not null
     */
    protected ForwardingSandboxRunner(R delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** {@return the runner calls are forwarded to} */
    protected final R delegate() {
        return delegate;
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public Capabilities capabilities() {
        return delegate.capabilities();
    }

    @Override
    public Sandbox open(SandboxSpec spec) {
        return delegate.open(spec);
    }

    @Override
    public Sandbox attach(String sandboxId, SandboxSpec expected) {
        return delegate.attach(sandboxId, expected);
    }

    @Override
    public RunResult run(RunRequest request) {
        return delegate.run(request);
    }

    @Override
    public LifecycleStats lifecycleStats() {
        return delegate.lifecycleStats();
    }

    @Override
    public SweepResult sweep(SweepRequest request) {
        return delegate.sweep(request);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
