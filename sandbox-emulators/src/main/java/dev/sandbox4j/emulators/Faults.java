package dev.sandbox4j.emulators;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Fault knobs, shared by every emulator. Each knob counts down: {@code failCreate(503, 2)} makes the
 * next two creates answer 503. Thread-safe.
 *
 * @since 0.1.0
 */
public final class Faults {
    private final AtomicInteger createFailures = new AtomicInteger();
    private volatile int createFailureStatus = 503;
    private volatile int retryAfterSeconds = -1;
    private final AtomicInteger lostCreates = new AtomicInteger();
    private final AtomicInteger droppedStreams = new AtomicInteger();
    private final AtomicInteger teardownFailures = new AtomicInteger();
    private volatile int teardownFailureStatus = 500;
    private volatile Duration delay = Duration.ZERO;
    private volatile boolean hostileFraming;

    /** The next {@code times} creates answer {@code status} and create nothing. */
    public Faults failCreate(int status, int times) {
        createFailureStatus = status;
        retryAfterSeconds = -1;
        createFailures.set(times);
        return this;
    }

    /** The next {@code times} creates answer 429 with {@code Retry-After: seconds}. */
    public Faults rateLimitCreate(int times, int seconds) {
        createFailureStatus = 429;
        retryAfterSeconds = seconds;
        createFailures.set(times);
        return this;
    }

    /** The next {@code times} creates succeed, but the connection is dropped before the answer. */
    public Faults loseCreateResponse(int times) {
        lostCreates.set(times);
        return this;
    }

    /** The next {@code times} command streams are cut after the first output, mid-run. */
    public Faults dropStream(int times) {
        droppedStreams.set(times);
        return this;
    }

    /** The next {@code times} teardown calls answer {@code status} and leave the sandbox alive. */
    public Faults failTeardown(int status, int times) {
        teardownFailureStatus = status;
        teardownFailures.set(times);
        return this;
    }

    /** Every answer is delayed by {@code delay}. */
    public Faults slow(Duration delay) {
        this.delay = delay;
        return this;
    }

    /** Command streams send a hostile frame (a huge length prefix or an endless line) instead of output. */
    public Faults hostileFraming(boolean on) {
        this.hostileFraming = on;
        return this;
    }

    /** Clears every knob. */
    public Faults reset() {
        createFailures.set(0);
        lostCreates.set(0);
        droppedStreams.set(0);
        teardownFailures.set(0);
        delay = Duration.ZERO;
        hostileFraming = false;
        return this;
    }

    /** The status to fail this create with, or 0. */
    public int takeCreateFailure() {
        return take(createFailures) ? createFailureStatus : 0;
    }

    /** Retry-After seconds for a failed create, or -1. */
    public int retryAfterSeconds() {
        return retryAfterSeconds;
    }

    public boolean takeLostCreate() {
        return take(lostCreates);
    }

    public boolean takeDroppedStream() {
        return take(droppedStreams);
    }

    /** The status to fail this teardown with, or 0. */
    public int takeTeardownFailure() {
        return take(teardownFailures) ? teardownFailureStatus : 0;
    }

    public boolean hostileFraming() {
        return hostileFraming;
    }

    /** Sleeps for the configured delay. */
    public void pause() throws InterruptedException {
        Duration d = delay;
        if (!d.isZero()) {
            Thread.sleep(d.toMillis());
        }
    }

    private static boolean take(AtomicInteger counter) {
        return counter.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0;
    }
}
