package dev.sandbox4j.api;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/** One try at opening a sandbox: which runner, how it ended, how long it took. Messages hold no secrets. */
public final class Attempt {
    private final String runner;
    private final String errorType;
    private final String message;
    private final Duration duration;

    private Attempt(String runner, String errorType, String message, Duration duration) {
        this.runner = Objects.requireNonNull(runner, "runner");
        this.errorType = errorType;
        this.message = message;
        this.duration = Objects.requireNonNull(duration, "duration");
    }

    public static Attempt succeeded(String runner, Duration duration) {
        return new Attempt(runner, null, null, duration);
    }

    public static Attempt failed(String runner, Throwable error, Duration duration) {
        return new Attempt(runner, error.getClass().getSimpleName(), String.valueOf(error.getMessage()), duration);
    }

    public String runner() {
        return runner;
    }

    public boolean succeeded() {
        return errorType == null;
    }

    /** The simple name of the exception's class, when the attempt failed. */
    public Optional<String> errorType() {
        return Optional.ofNullable(errorType);
    }

    public Optional<String> message() {
        return Optional.ofNullable(message);
    }

    public Duration duration() {
        return duration;
    }

    @Override
    public String toString() {
        return runner + (succeeded() ? " ok" : " " + errorType + ": " + message) + " (" + duration.toMillis() + " ms)";
    }
}
