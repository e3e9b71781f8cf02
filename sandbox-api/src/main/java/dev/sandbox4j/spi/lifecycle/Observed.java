package dev.sandbox4j.spi.lifecycle;

import dev.sandbox4j.api.LeakSuspected;
import dev.sandbox4j.api.LifecycleEvent;
import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Teardown;
import java.time.Duration;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells a {@link LifecycleListener} about the lifecycle's operations, so the lifecycle itself needs
 * one call line per operation. A listener's exception is logged and swallowed: metrics never change
 * what happens to a sandbox.
 */
final class Observed {
    private static final Logger log = LoggerFactory.getLogger(Observed.class);

    private final LifecycleListener listener;
    private final String provider;

    Observed(LifecycleListener listener, String provider) {
        this.listener = listener;
        this.provider = provider;
    }

    /**
     * Runs a create; {@code attempts} reads how many create attempts it made, whether the open succeeded
     * or failed (0 when it failed before any call).
     */
    <T> T create(Supplier<T> open, java.util.function.IntSupplier attempts) {
        return call(LifecycleEvent.Phase.CREATE, open, (b, r) -> b.attempts(attempts.getAsInt()),
                b -> b.attempts(attempts.getAsInt()));
    }

    /** Runs an exec; {@code status} reads the status from its result. */
    <T> T exec(Supplier<T> exec, Function<T, RunStatus> status) {
        return call(LifecycleEvent.Phase.EXEC, exec, (b, r) -> b.status(status.apply(r)), b -> { });
    }

    Teardown teardown(Supplier<Teardown> teardown) {
        return call(LifecycleEvent.Phase.TEARDOWN, teardown, (b, t) -> b.teardown(t), b -> { });
    }

    void leak(LeakSuspected.Reason reason, String runId) {
        if (listener == LifecycleListener.NONE) {
            return;
        }
        try {
            listener.leakSuspected(LeakSuspected.of(provider, reason, runId));
        } catch (RuntimeException e) {
            log.warn("{}: lifecycle listener {} failed on a suspected leak: {}", provider, listener, e.toString());
        }
    }

    private interface Describe<T> {
        void on(LifecycleEvent.Builder b, T result);
    }

    private interface DescribeFailure {
        void on(LifecycleEvent.Builder b);
    }

    private <T> T call(LifecycleEvent.Phase phase, Supplier<T> work, Describe<T> ok, DescribeFailure failed) {
        if (listener == LifecycleListener.NONE) {
            return work.get();
        }
        LifecycleListener.Operation op = started(phase);
        long t0 = System.nanoTime();
        T result;
        try {
            result = work.get();
        } catch (RuntimeException | Error e) {
            LifecycleEvent.Builder b = LifecycleEvent.builder(phase, provider).duration(since(t0)).error(e);
            failed.on(b);
            end(op, b);
            throw e;
        }
        LifecycleEvent.Builder b = LifecycleEvent.builder(phase, provider).duration(since(t0));
        ok.on(b, result);
        end(op, b);
        return result;
    }

    private LifecycleListener.Operation started(LifecycleEvent.Phase phase) {
        try {
            LifecycleListener.Operation op = listener.started(phase, provider);
            return op == null ? LifecycleListener.Operation.NONE : op;
        } catch (RuntimeException e) {
            log.warn("{}: lifecycle listener {} failed as a {} started: {}", provider, listener, phase, e.toString());
            return LifecycleListener.Operation.NONE;
        }
    }

    private void end(LifecycleListener.Operation op, LifecycleEvent.Builder b) {
        LifecycleEvent event = b.build();
        try {
            op.ended(event);
        } catch (RuntimeException e) {
            log.warn("{}: lifecycle listener {} failed as a {} ended: {}", provider, listener, event.phase(), e.toString());
        }
    }

    private static Duration since(long t0) {
        return Duration.ofNanos(System.nanoTime() - t0);
    }
}
