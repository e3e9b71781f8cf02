package dev.sandbox4j.emulators;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The options every standalone emulator main takes besides its own: {@code --instant} (no code runs,
 * see {@link HttpEmulator#instant()}) and {@code --create-delay-ms N} (every create answered N ms late,
 * see {@link Faults#createDelay}). Each main passes the arguments it does not know on to its own parsing.
 *
 * @since 0.1.0
 */
public final class EmulatorOptions {
    /** The options as a usage string. */
    public static final String USAGE = "[--instant] [--create-delay-ms N]";

    private final boolean instant;
    private final Duration createDelay;
    private final List<String> rest;

    private EmulatorOptions(boolean instant, Duration createDelay, List<String> rest) {
        this.instant = instant;
        this.createDelay = createDelay;
        this.rest = List.copyOf(rest);
    }

    /**
     * Takes the shared options out of {@code args}.
     *
     * @param args a main's command-line arguments; the array is not changed
     * @return the shared options found, with every other argument kept, in order, in {@link #rest()}
     * @throws IllegalArgumentException when {@code --create-delay-ms} has no value, or one that is not a
     *         whole number of milliseconds or is negative
     */
    public static EmulatorOptions parse(String[] args) {
        boolean instant = false;
        Duration delay = Duration.ZERO;
        List<String> rest = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--instant":
                    instant = true;
                    break;
                case "--create-delay-ms":
                    if (i + 1 >= args.length) {
                        throw new IllegalArgumentException("--create-delay-ms needs a number of milliseconds");
                    }
                    try {
                        delay = Duration.ofMillis(Long.parseLong(args[++i].trim()));
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException("--create-delay-ms needs a number, was '" + args[i] + "'");
                    }
                    if (delay.isNegative()) {
                        throw new IllegalArgumentException("--create-delay-ms must not be negative");
                    }
                    break;
                default:
                    rest.add(args[i]);
            }
        }
        return new EmulatorOptions(instant, delay, rest);
    }

    /** {@return whether {@code --instant} was given} */
    public boolean instant() {
        return instant;
    }

    /** {@return the {@code --create-delay-ms} given, or zero} */
    public Duration createDelay() {
        return createDelay;
    }

    /** {@return the arguments left for the main's own parsing, in order (unmodifiable)} */
    public List<String> rest() {
        return rest;
    }

    /** {@return the arguments left, as a new array} */
    public String[] restArray() {
        return rest.toArray(new String[0]);
    }

    /**
     * Sets the create delay on an emulator's fault knobs (zero, when none was given, turns it off).
     *
     * @param faults the emulator's fault knobs
     */
    public void applyTo(Faults faults) {
        faults.createDelay(createDelay);
    }

    /**
     * {@return how the options read back, for the line a main prints at start: {@code running code} or
     * {@code instant (no code runs)}, then the create delay when there is one}
     */
    public String describe() {
        return (instant ? "instant (no code runs)" : "running code")
                + (createDelay.isZero() ? "" : ", creates answered " + createDelay.toMillis() + " ms late");
    }
}
