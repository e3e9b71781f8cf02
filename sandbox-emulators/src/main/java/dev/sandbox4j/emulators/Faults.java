package dev.sandbox4j.emulators;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Fault knobs, shared by every emulator. Each knob counts down: {@code failCreate(503, 2)} makes the
 * next two creates answer 503. Each knob also counts how often it {@linkplain #fired fired} (took
 * effect on a request), so a test can tell that it exercised what it meant to. Thread-safe.
 *
 * @since 0.1.0
 */
public final class Faults {
    /**
     * The knobs, as {@link #fired} counts them.
     *
     * @since 0.1.0
     */
    public enum Fault {
        /** A create answered with an error status (5xx or another), creating nothing. */
        FAIL_CREATE,
        /** A create answered 429, creating nothing. */
        RATE_LIMIT_CREATE,
        /** A create took effect, then its connection was dropped before the answer. */
        LOSE_CREATE_RESPONSE,
        /** A create whose connection hung and dropped; the sandbox appeared only afterwards. */
        LATE_CREATE,
        /** A lookup by run id (the adapters' listing) hung past the client's timeout. */
        HANG_LOOKUP,
        /** A create took effect and answered 2xx with a garbled body. */
        GARBLE_CREATE,
        /** Another call answered 2xx with a garbled body. */
        GARBLE_ANSWER,
        /** A command started, then its connection was dropped before any answer. */
        LOSE_EXEC_RESPONSE,
        /** A command stream was cut after the first output. */
        DROP_STREAM,
        /** A teardown call answered an error and left the sandbox alive. */
        FAIL_TEARDOWN,
        /** A command was refused with an error status before it started. */
        FAIL_EXEC,
        /** A command stream sent a hostile frame. */
        HOSTILE_FRAMING
    }

    private final AtomicInteger createFailures = new AtomicInteger();
    private volatile int createFailureStatus = 503;
    private final AtomicInteger rateLimits = new AtomicInteger();
    private volatile int retryAfterSeconds = -1;
    private final AtomicInteger lostCreates = new AtomicInteger();
    private final AtomicInteger lateCreates = new AtomicInteger();
    private volatile Duration lateCreateMax = Duration.ofMillis(1500);
    private final AtomicInteger hungLookups = new AtomicInteger();
    private volatile Duration lookupHang = Duration.ofSeconds(3);
    private final AtomicInteger garbledCreates = new AtomicInteger();
    private final AtomicInteger garbledAnswers = new AtomicInteger();
    private final AtomicInteger lostExecResponses = new AtomicInteger();
    private final AtomicInteger droppedStreams = new AtomicInteger();
    private final AtomicInteger teardownFailures = new AtomicInteger();
    private volatile int teardownFailureStatus = 500;
    private final AtomicInteger execFailures = new AtomicInteger();
    private volatile int execFailureStatus = 500;
    private volatile Duration delay = Duration.ZERO;
    private volatile Duration createDelay = Duration.ZERO;
    private final AtomicInteger heldCreates = new AtomicInteger();
    private volatile boolean hostileFraming;
    private final Map<Fault, AtomicInteger> fired = new EnumMap<>(Fault.class);

    /** Makes knobs that are all off, with every fire count at 0. */
    public Faults() {
        for (Fault f : Fault.values()) {
            fired.put(f, new AtomicInteger());
        }
    }

    /**
     * The next {@code times} creates answer {@code status} and create nothing. A 429 is
     * {@link #rateLimitCreate rateLimitCreate(times, -1)}: a rate limit without {@code Retry-After}.
     *
     * @param status the HTTP status to answer (or the emulator's equivalent), such as 503 or 500
     * @param times how many creates fail; 0 turns the knob off
     * @return these knobs
     */
    public Faults failCreate(int status, int times) {
        if (status == 429) {
            return rateLimitCreate(times, -1);
        }
        createFailureStatus = status;
        createFailures.set(times);
        return this;
    }

    /**
     * The next {@code times} creates answer 429 with {@code Retry-After: seconds}.
     *
     * @param times how many creates are refused; 0 turns the knob off
     * @param seconds the {@code Retry-After} value; -1 sends no {@code Retry-After}
     * @return these knobs
     */
    public Faults rateLimitCreate(int times, int seconds) {
        retryAfterSeconds = seconds;
        rateLimits.set(times);
        return this;
    }

    /**
     * Adds {@code times} to a knob's count, keeping its settings (status, delays): for a campaign that
     * arms the faults of each run as it starts, with runs in flight together. Hostile framing is a
     * switch, not a count, and cannot be armed.
     *
     * @param fault the knob to arm
     * @param times how many more requests it fires on
     * @return these knobs
     * @throws IllegalArgumentException for {@link Fault#HOSTILE_FRAMING}
     */
    public Faults arm(Fault fault, int times) {
        counter(fault).addAndGet(times);
        return this;
    }

    private AtomicInteger counter(Fault fault) {
        switch (fault) {
            case FAIL_CREATE: return createFailures;
            case RATE_LIMIT_CREATE: return rateLimits;
            case LOSE_CREATE_RESPONSE: return lostCreates;
            case LATE_CREATE: return lateCreates;
            case HANG_LOOKUP: return hungLookups;
            case GARBLE_CREATE: return garbledCreates;
            case GARBLE_ANSWER: return garbledAnswers;
            case LOSE_EXEC_RESPONSE: return lostExecResponses;
            case DROP_STREAM: return droppedStreams;
            case FAIL_TEARDOWN: return teardownFailures;
            case FAIL_EXEC: return execFailures;
            default: throw new IllegalArgumentException(fault + " is a switch: use hostileFraming(boolean)");
        }
    }

    /**
     * The next {@code times} creates succeed, but the connection is dropped before the answer.
     *
     * @param times how many creates lose their answer; 0 turns the knob off
     * @return these knobs
     */
    public Faults loseCreateResponse(int times) {
        lostCreates.set(times);
        return this;
    }

    /**
     * The next {@code times} creates complete late: the connection hangs for a random part of
     * {@code max}, then drops without an answer, and the sandbox is created (listed by its labels)
     * only some time after that, within {@code max} of the request, as a real server finishes a
     * create its client gave up on.
     *
     * @param times how many creates complete late; 0 turns the knob off
     * @param max the longest a late create takes to appear, from its request (at least 2 ms is used)
     * @return these knobs
     */
    public Faults lateCreate(int times, Duration max) {
        lateCreateMax = max;
        lateCreates.set(times);
        return this;
    }

    /**
     * The next {@code times} lookups by run id (the listing the adapters use after a lost create) hang
     * for {@code hang} (longer than the client's timeout), then drop or answer.
     *
     * @param times how many lookups hang; 0 turns the knob off
     * @param hang how long each one hangs
     * @return these knobs
     */
    public Faults hangLookup(int times, Duration hang) {
        lookupHang = hang;
        hungLookups.set(times);
        return this;
    }

    /**
     * The next {@code times} creates take effect and answer 2xx with a garbled body.
     *
     * @param times how many create answers are garbled; 0 turns the knob off
     * @return these knobs
     */
    public Faults garbleCreate(int times) {
        garbledCreates.set(times);
        return this;
    }

    /**
     * The next {@code times} other calls answer their 2xx with a garbled body (a body-less answer stays so).
     *
     * @param times how many answers are garbled; 0 turns the knob off
     * @return these knobs
     */
    public Faults garbleAnswer(int times) {
        garbledAnswers.set(times);
        return this;
    }

    /**
     * The next {@code times} commands start, and their connection is dropped before any answer.
     *
     * @param times how many commands lose their answer; 0 turns the knob off
     * @return these knobs
     */
    public Faults loseExecResponse(int times) {
        lostExecResponses.set(times);
        return this;
    }

    /**
     * The next {@code times} command streams are cut after the first output, mid-run.
     *
     * @param times how many streams are cut; 0 turns the knob off
     * @return these knobs
     */
    public Faults dropStream(int times) {
        droppedStreams.set(times);
        return this;
    }

    /**
     * The next {@code times} teardown calls answer {@code status} and leave the sandbox alive.
     *
     * @param status the HTTP status to answer (or the emulator's equivalent)
     * @param times how many teardowns fail; 0 turns the knob off
     * @return these knobs
     */
    public Faults failTeardown(int status, int times) {
        teardownFailureStatus = status;
        teardownFailures.set(times);
        return this;
    }

    /**
     * The next {@code times} commands are refused with {@code status} before they start (an emulator
     * that has no such answer ignores it: the agent-sandbox emulator's pod exec has one).
     *
     * @param status the HTTP status to answer (or the emulator's equivalent)
     * @param times how many commands are refused; 0 turns the knob off
     * @return these knobs
     */
    public Faults failExec(int status, int times) {
        execFailureStatus = status;
        execFailures.set(times);
        return this;
    }

    /**
     * Every answer is delayed by {@code delay}, until changed or {@link #reset()}.
     *
     * @param delay how long each answer waits; zero turns it off
     * @return these knobs
     */
    public Faults slow(Duration delay) {
        this.delay = delay;
        return this;
    }

    /**
     * Every create is answered {@code delay} late: held before anything is created, as a provider that
     * takes this long to place and boot a sandbox (for warm-pool measurements). Zero turns it off.
     * Not a count and not a firing: it applies to every create until {@link #reset()}.
     *
     * @param delay how long each create is held; zero turns it off
     * @return these knobs
     * @throws IllegalArgumentException when {@code delay} is negative
     */
    public Faults createDelay(Duration delay) {
        if (delay.isNegative()) {
            throw new IllegalArgumentException("createDelay must not be negative");
        }
        this.createDelay = delay;
        return this;
    }

    /** {@return the delay every create is held for (zero when off)} */
    public Duration createDelay() {
        return createDelay;
    }

    /**
     * Command streams send a hostile frame (a huge length prefix or an endless line) instead of output.
     * A switch, not a count: it stays as set until changed or {@link #reset()}.
     *
     * @param on true to send hostile frames, false for normal output
     * @return these knobs
     */
    public Faults hostileFraming(boolean on) {
        this.hostileFraming = on;
        return this;
    }

    /**
     * Clears every knob: counts to 0, the answer and create delays to zero, hostile framing off. The
     * fire counts, statuses and durations set before stay.
     *
     * @return these knobs
     */
    public Faults reset() {
        createFailures.set(0);
        rateLimits.set(0);
        lostCreates.set(0);
        lateCreates.set(0);
        hungLookups.set(0);
        garbledCreates.set(0);
        garbledAnswers.set(0);
        lostExecResponses.set(0);
        droppedStreams.set(0);
        teardownFailures.set(0);
        execFailures.set(0);
        delay = Duration.ZERO;
        createDelay = Duration.ZERO;
        hostileFraming = false;
        return this;
    }

    /**
     * {@return how often {@code fault} took effect since these knobs were made (the emulator started)}
     *
     * @param fault the knob
     */
    public int fired(Fault fault) {
        return fired.get(fault).get();
    }

    /** {@return every knob's fire count, as a copy: later firings do not change it} */
    public Map<Fault, Integer> firedCounts() {
        Map<Fault, Integer> out = new EnumMap<>(Fault.class);
        fired.forEach((k, v) -> out.put(k, v.get()));
        return out;
    }

    private void fire(Fault fault) {
        fired.get(fault).incrementAndGet();
    }

    /**
     * Takes one create failure, for an emulator about to create: a pending rate limit first (429), then
     * a pending {@link #failCreate}. A non-zero answer counts as a firing.
     *
     * @return the status to fail this create with, or 0 to create as usual
     */
    public int takeCreateFailure() {
        if (take(rateLimits, Fault.RATE_LIMIT_CREATE)) {
            return 429;
        }
        return take(createFailures, Fault.FAIL_CREATE) ? createFailureStatus : 0;
    }

    /** {@return the {@code Retry-After} seconds for a rate-limited create, or -1 to send none} */
    public int retryAfterSeconds() {
        return retryAfterSeconds;
    }

    /**
     * Takes one {@link #loseCreateResponse} firing, for an emulator about to create.
     *
     * @return whether this create is to take effect and then drop its connection without an answer
     */
    public boolean takeLostCreate() {
        return take(lostCreates, Fault.LOSE_CREATE_RESPONSE);
    }

    /**
     * For a late create: how long to hold the connection before dropping it, and (second) how long
     * after the request the sandbox appears; null when the knob does not fire.
     *
     * @return the hang (a random part of half the knob's maximum) and the appearance time (after the hang,
     *         within the maximum), or null
     */
    public Duration[] takeLateCreate() {
        if (!take(lateCreates, Fault.LATE_CREATE)) {
            return null;
        }
        long max = Math.max(2, lateCreateMax.toMillis());
        long hang = ThreadLocalRandom.current().nextLong(max / 2);
        long appear = hang + 1 + ThreadLocalRandom.current().nextLong(max - hang - 1);
        return new Duration[] {Duration.ofMillis(hang), Duration.ofMillis(appear)};
    }

    /** {@return how long this lookup hangs, or null when the knob does not fire} */
    public Duration takeHungLookup() {
        return take(hungLookups, Fault.HANG_LOOKUP) ? lookupHang : null;
    }

    /** {@return whether to garble this create's 2xx body; taken when its first byte is written} */
    public boolean takeGarbledCreate() {
        return take(garbledCreates, Fault.GARBLE_CREATE);
    }

    /** {@return whether to garble this call's 2xx body; taken when its first byte is written} */
    public boolean takeGarbledAnswer() {
        return take(garbledAnswers, Fault.GARBLE_ANSWER);
    }

    /** Whether a garble knob is armed, so the emulator watches this answer's body. */
    boolean garbleArmed(boolean create) {
        return (create ? garbledCreates : garbledAnswers).get() > 0;
    }

    /**
     * Takes one {@link #loseExecResponse} firing, for an emulator about to start a command.
     *
     * @return whether this command is to start and then drop its connection before any answer
     */
    public boolean takeLostExecResponse() {
        return take(lostExecResponses, Fault.LOSE_EXEC_RESPONSE);
    }

    /**
     * Takes one {@link #dropStream} firing, for an emulator about to stream a command's output.
     *
     * @return whether this stream is to be cut after its first output
     */
    public boolean takeDroppedStream() {
        return take(droppedStreams, Fault.DROP_STREAM);
    }

    /** {@return the status to refuse this command with, or 0 to run it; a non-zero answer counts as a firing} */
    public int takeExecFailure() {
        return take(execFailures, Fault.FAIL_EXEC) ? execFailureStatus : 0;
    }

    /** {@return the status to fail this teardown with, or 0 to tear down; a non-zero answer counts as a firing} */
    public int takeTeardownFailure() {
        if (!take(teardownFailures)) {
            return 0;
        }
        fire(Fault.FAIL_TEARDOWN);
        return teardownFailureStatus;
    }

    /** {@return whether command streams send a hostile frame; each true answer counts as one firing} */
    public boolean hostileFraming() {
        boolean on = hostileFraming;
        if (on) {
            fire(Fault.HOSTILE_FRAMING);
        }
        return on;
    }

    /**
     * Sleeps for the answer delay set by {@link #slow}; returns at once when it is zero.
     *
     * @throws InterruptedException when interrupted while sleeping
     */
    public void pause() throws InterruptedException {
        Duration d = delay;
        if (!d.isZero()) {
            Thread.sleep(d.toMillis());
        }
    }

    /**
     * Sleeps for the create delay; emulators call it at the start of each create, in the request's handler.
     * Returns at once when the delay is zero; otherwise counts the create in {@link #createsHeld()} first.
     *
     * @throws InterruptedException when interrupted while sleeping
     */
    public void pauseCreate() throws InterruptedException {
        Duration d = createDelay;
        if (!d.isZero()) {
            heldCreates.incrementAndGet();
            Thread.sleep(d.toMillis());
        }
    }

    /**
     * Creates that have entered the create delay: the handler runs and will create the sandbox when
     * the delay ends, whatever the client does meanwhile. A call counted on arrival is not yet that
     * far: gRPC drops a unary call cancelled before its handler starts, and then nothing is created.
     *
     * @return how many creates have entered the create delay since these knobs were made
     */
    public int createsHeld() {
        return heldCreates.get();
    }

    private boolean take(AtomicInteger counter, Fault fault) {
        if (!take(counter)) {
            return false;
        }
        fire(fault);
        return true;
    }

    private static boolean take(AtomicInteger counter) {
        return counter.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0;
    }
}
