package dev.sandbox4j.api;

import dev.sandbox4j.policy.InvalidPolicyException;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import dev.sandbox4j.api.exception.SandboxException;

/**
 * One try at opening a sandbox: which runner, how it ended, how long it took. Messages hold no secrets.
 *
 * @since 0.1.0
 */
public final class Attempt {
    private static final int MAX_MESSAGE = 500;

    /**
     * How a try got its sandbox.
     *
     * @since 0.1.0
     */
    public enum Source {
        /** A create call on the provider (the usual case, and every failed try). */
        CREATED,
        /** Taken from a warm pool ({@code dev.sandbox4j.compose.WarmPoolRunner}): created ahead, no code run in it before. */
        POOL,
        /** Attached by id ({@link SandboxRunner#attach}) to a sandbox created earlier. */
        ATTACHED
    }

    private final String runner;
    private final String errorType;
    private final String message;
    private final Duration duration;
    private final Source source;

    private Attempt(String runner, String errorType, String message, Duration duration) {
        this(runner, errorType, message, duration, Source.CREATED);
    }

    private Attempt(String runner, String errorType, String message, Duration duration, Source source) {
        this.source = Objects.requireNonNull(source, "source");
        this.runner = Objects.requireNonNull(runner, "runner");
        this.errorType = errorType;
        this.message = message;
        this.duration = Objects.requireNonNull(duration, "duration");
    }

    /**
     * A successful create.
     *
     * @param runner the runner's name
     * @param duration how long the create took
     * @return the attempt
     */
    public static Attempt succeeded(String runner, Duration duration) {
        return new Attempt(runner, null, null, duration);
    }

    /**
     * A sandbox handed out by a warm pool or attached by id.
     *
     * @param runner the runner's name
     * @param source {@link Source#POOL} or {@link Source#ATTACHED}
     * @param duration how long taking or attaching took
     * @return the attempt
     */
    public static Attempt reused(String runner, Source source, Duration duration) {
        if (source == Source.CREATED) {
            throw new IllegalArgumentException("a reused sandbox comes from the pool or an attach");
        }
        return new Attempt(runner, null, null, duration, source);
    }

    /**
     * A failed try. The message is kept only for sandbox4j's own exceptions, whose messages never hold
     * secrets; any other exception (an HTTP client's, say) may echo a URL or a header, so only its type
     * is kept. Control characters are removed and the message is cut to 500 characters.
     *
     * @param runner the runner's name
     * @param error what the try failed with; not null
     * @param duration how long the try took
     * @return the attempt
     */
    public static Attempt failed(String runner, Throwable error, Duration duration) {
        return new Attempt(runner, error.getClass().getSimpleName(), safeMessage(error), duration);
    }

    private static String safeMessage(Throwable error) {
        boolean ours = error instanceof SandboxException || error instanceof UnsupportedPolicyException
                || error instanceof InvalidPolicyException;
        String m = error.getMessage();
        if (!ours || m == null) {
            return null;
        }
        StringBuilder sb = new StringBuilder(Math.min(m.length(), MAX_MESSAGE + 1));
        for (int i = 0; i < m.length() && sb.length() < MAX_MESSAGE; i++) {
            char c = m.charAt(i);
            sb.append(Character.isISOControl(c) ? ' ' : c);
        }
        if (m.length() > MAX_MESSAGE) {
            if (Character.isHighSurrogate(sb.charAt(sb.length() - 1))) {
                sb.setLength(sb.length() - 1);
            }
            sb.append('…');
        }
        return sb.toString();
    }

    /** {@return the name of the runner tried, e.g. {@code e2b}} */
    public String runner() {
        return runner;
    }

    /** {@return true when the try got a sandbox} */
    public boolean succeeded() {
        return errorType == null;
    }

    /** {@return the simple name of the exception's class, when the attempt failed} */
    public Optional<String> errorType() {
        return Optional.ofNullable(errorType);
    }

    /**
     * {@return the failure's message, when it is one of sandbox4j's own exceptions (see {@link #failed})}
     */
    public Optional<String> message() {
        return Optional.ofNullable(message);
    }

    /** {@return how long the try took} */
    public Duration duration() {
        return duration;
    }

    /**
     * Where the sandbox came from: a create, a warm pool or an attach.
     *
     * @return the source; {@link Source#CREATED} for every failed try
     */
    public Source source() {
        return source;
    }

    @Override
    public String toString() {
        return runner + (succeeded() ? " ok" : " " + errorType + (message == null ? "" : ": " + message))
                + (source == Source.CREATED ? "" : " " + source.name().toLowerCase(java.util.Locale.ROOT))
                + " (" + duration.toMillis() + " ms)";
    }
}
