package dev.sandbox4j.tck;

import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.api.exception.SandboxAuthenticationException;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.api.exception.SandboxRateLimitException;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The provider-failure matrix every adapter's tests walk: an authentication failure, a rate limit and
 * a not-found, each during create, exec and teardown, must reach the caller as the API's subtype with
 * its flags, reach the agent tool as that type's category, and carry no secret. An adapter's test arms
 * its own fake for each cell and hands what came back to the checks here.
 *
 * @since 0.1.0
 */
public final class FailureCells {
    private FailureCells() {
    }

    /** What the provider answered. */
    public enum Failure {
        /** HTTP 401, gRPC UNAUTHENTICATED. */
        AUTHENTICATION(SandboxAuthenticationException.class, false,
                "error: the sandbox provider rejected the application's credentials."),
        /** HTTP 429, gRPC RESOURCE_EXHAUSTED. */
        RATE_LIMIT(SandboxRateLimitException.class, true, "error: the sandbox provider is rate limiting requests."),
        /** HTTP 404, gRPC NOT_FOUND. */
        NOT_FOUND(SandboxNotFoundException.class, false,
                "error: the sandbox no longer exists (it expired or was deleted).");

        private final Class<? extends SandboxException> type;
        private final boolean retriable;
        private final String toolText;

        Failure(Class<? extends SandboxException> type, boolean retriable, String toolText) {
            this.type = type;
            this.retriable = retriable;
            this.toolText = toolText;
        }

        /**
         * The subtype the API defines for this failure.
         *
         * @return the exception type
         */
        public Class<? extends SandboxException> type() {
            return type;
        }

        /**
         * Whether the API calls this failure retriable.
         *
         * @return true for a rate limit only
         */
        public boolean retriable() {
            return retriable;
        }
    }

    /** When the provider answered so. */
    public enum Phase {
        /** Creating the sandbox ({@code open}, or the start of {@code run}). */
        CREATE,
        /** Running code in an open sandbox. */
        EXEC,
        /** Destroying the sandbox after its code ran. */
        TEARDOWN
    }

    /** One cell: a failure in a phase. */
    public record Cell(Failure failure, Phase phase) {
        @Override
        public String toString() {
            return failure + " during " + phase;
        }
    }

    /**
     * Every cell, failures by phases.
     *
     * @return the nine cells, phase by phase in declaration order, each phase with every failure
     */
    public static List<Cell> cells() {
        List<Cell> out = new ArrayList<>();
        for (Phase p : Phase.values()) {
            for (Failure f : Failure.values()) {
                out.add(new Cell(f, p));
            }
        }
        return out;
    }

    /**
     * The tool's opening sentence for an exception of {@code type} (ToolErrors' category), so a test
     * can tell a typed answer from the generic "the sandbox infrastructure failed".
     *
     * @param type a {@link Failure#type()} or {@code SandboxConfigurationException}
     * @return the sentence the tool's answer opens with
     * @throws IllegalArgumentException for any other type
     */
    public static String toolText(Class<? extends SandboxException> type) {
        for (Failure f : Failure.values()) {
            if (f.type == type) {
                return f.toolText;
            }
        }
        if (type == SandboxConfigurationException.class) {
            return "error: the code-execution tool is not configured correctly.";
        }
        throw new IllegalArgumentException("no tool category for " + type.getName());
    }

    /**
     * Checks what a failed create or exec threw: exactly {@code type}, with its flags (not retriable
     * for authentication and not-found, retriable for a rate limit; never an ambiguous outcome for an
     * answer the provider gave, nor code that may have run), {@code retryAfter} when given, and no secret anywhere in it.
     *
     * @param thrown what the call threw
     * @param type the subtype expected (usually {@link Failure#type()}; an adapter may document another)
     * @param failure the failure the fake sent
     * @param retryAfter the Retry-After the fake sent, or null for none
     * @param secrets values that must appear nowhere in the exception or its causes
     * @return the exception, for further checks
     */
    public static SandboxException assertTyped(Throwable thrown, Class<? extends SandboxException> type,
            Failure failure, Duration retryAfter, String... secrets) {
        return assertTyped(thrown, new Expected(type, retryAfter, false), failure, secrets);
    }

    /**
     * What a cell must throw, where an adapter documents more than the API's default: another type, or
     * an answer it treats as ambiguous (a create it looks up by run id before throwing).
     *
     * @param type the subtype
     * @param retryAfter the Retry-After the fake sent, or null for none
     * @param requestMayHaveSucceeded whether the adapter flags the answer as an unknown outcome
     * @param teardown the outcome of a teardown cell, or null for {@link #expectedTeardown}
     */
    public record Expected(Class<? extends SandboxException> type, Duration retryAfter, boolean requestMayHaveSucceeded,
            Teardown teardown) {
        /**
         * With the default teardown outcome.
         *
         * @param type the subtype
         * @param retryAfter the Retry-After the fake sent, or null for none
         * @param requestMayHaveSucceeded whether the adapter flags the answer as an unknown outcome
         */
        public Expected(Class<? extends SandboxException> type, Duration retryAfter, boolean requestMayHaveSucceeded) {
            this(type, retryAfter, requestMayHaveSucceeded, null);
        }

        Teardown teardownFor(Failure f) {
            return teardown != null ? teardown : expectedTeardown(f);
        }
    }

    /**
     * As {@link #assertTyped(Throwable, Class, Failure, Duration, String...)}, with the expectation
     * spelled out: {@code requestMayHaveSucceeded} must equal the expectation's (the teardown it names
     * plays no part here); the exception must also name a provider.
     *
     * @param thrown what the call threw, or null when it threw nothing (which fails)
     * @param expected the type, Retry-After and unknown-outcome flag expected
     * @param failure the failure the fake sent
     * @param secrets values that must appear nowhere in the exception or its causes
     * @return the exception, for further checks
     */
    public static SandboxException assertTyped(Throwable thrown, Expected expected, Failure failure, String... secrets) {
        Class<? extends SandboxException> type = expected.type();
        Duration retryAfter = expected.retryAfter();
        if (thrown == null || thrown.getClass() != type) {
            throw new AssertionError("expected " + type.getSimpleName() + " for " + failure + ", got "
                    + (thrown == null ? "nothing" : thrown.getClass().getName() + ": " + thrown.getMessage()), thrown);
        }
        SandboxException e = (SandboxException) thrown;
        if (e.isRetriable() != failure.retriable) {
            throw new AssertionError(failure + ": retriable should be " + failure.retriable + ": " + e.getMessage(), e);
        }
        if (e.requestMayHaveSucceeded() != expected.requestMayHaveSucceeded()) {
            throw new AssertionError(failure + ": requestMayHaveSucceeded should be " + expected.requestMayHaveSucceeded()
                    + " (a definite refusal is not an unknown outcome unless the adapter says so): " + e.getMessage(), e);
        }
        if (e.codeMayHaveRun()) {
            throw new AssertionError(failure + ": a provider's refusal comes before any code, yet codeMayHaveRun is set: "
                    + e.getMessage(), e);
        }
        if (retryAfter != null && !e.retryAfter().equals(java.util.Optional.of(retryAfter))) {
            throw new AssertionError(failure + ": retryAfter should be " + retryAfter + ", was " + e.retryAfter(), e);
        }
        if (e.provider() == null || e.provider().isBlank()) {
            throw new AssertionError(failure + ": the exception names no provider: " + e.getMessage(), e);
        }
        assertNoSecret(e, secrets);
        return e;
    }

    /**
     * No secret in the message, toString or stack trace of {@code e} or any of its causes (up to 20
     * deep); throws {@code AssertionError} naming the secret's length, not the secret.
     *
     * @param e the exception
     * @param secrets values that must appear nowhere; null and empty ones are ignored
     */
    public static void assertNoSecret(Throwable e, String... secrets) {
        StringWriter trace = new StringWriter();
        e.printStackTrace(new PrintWriter(trace));
        StringBuilder all = new StringBuilder(trace.toString());
        int depth = 0;
        for (Throwable t = e; t != null && depth < 20; t = t.getCause(), depth++) {
            all.append('\n').append(t).append('\n').append(t.getMessage());
        }
        assertAbsent(all.toString(), "the exception or its causes", secrets);
    }

    /**
     * Checks the tool's answer to a failed create or exec: it opens with the category of {@code type}
     * (never the generic infrastructure text), says whether trying again helps as the flags say,
     * says the code did not run (a provider's refusal comes before any code), and holds no secret;
     * throws {@code AssertionError} otherwise.
     *
     * @param text the tool's answer
     * @param type the exception type whose category ({@link #toolText}) the answer opens with
     * @param failure the failure the fake sent, whose {@link Failure#retriable()} the answer must echo
     * @param secrets values that must appear nowhere in the answer
     */
    public static void assertToolText(String text, Class<? extends SandboxException> type, Failure failure,
            String... secrets) {
        String opening = toolText(type);
        if (text == null || !text.startsWith(opening)) {
            throw new AssertionError("the tool should answer '" + opening + " ...' for " + failure + ", answered: " + text);
        }
        String again = failure.retriable ? " Trying again may work" : " Trying again will not help.";
        if (!text.contains(again)) {
            throw new AssertionError("the tool's answer for " + failure + " should say '" + again + "': " + text);
        }
        if (!text.contains(" The code did not run.")) {
            throw new AssertionError("the tool's answer for " + failure + " should say the code did not run: " + text);
        }
        assertAbsent(text, "the tool's answer", secrets);
    }

    /**
     * What a failed destroy leaves after a run that succeeded: a not-found means the sandbox is already
     * gone; a refused or rate-limited destroy (retried until the teardown deadline) is a failed teardown.
     * Either way the run's result is returned, not an exception.
     *
     * @param failure the failure the destroy met
     * @return {@code ALREADY_GONE} for a not-found, {@code FAILED} otherwise
     */
    public static Teardown expectedTeardown(Failure failure) {
        return failure == Failure.NOT_FOUND ? Teardown.ALREADY_GONE : Teardown.FAILED;
    }

    /**
     * Checks the log of a run whose destroy failed: a failed teardown is reported (the log is where it
     * is) with the exception's type and without secrets; an already-gone sandbox is no failure.
     *
     * @param log what the run logged
     * @param failure the failure the destroy met
     * @param type the subtype the destroy failed with
     * @param secrets values that must appear nowhere in the log
     */
    public static void assertTeardownLogged(String log, Failure failure, Class<? extends SandboxException> type,
            String... secrets) {
        List<String> lines = new ArrayList<>();
        for (String line : log.split("\\R")) {
            if (line.contains("teardown failed")) {
                lines.add(line);
            }
        }
        if (expectedTeardown(failure) == Teardown.ALREADY_GONE) {
            if (!lines.isEmpty()) {
                throw new AssertionError("an already-gone sandbox was reported as a failed teardown: " + lines);
            }
        } else if (lines.stream().noneMatch(l -> l.contains(type.getSimpleName()))) {
            throw new AssertionError("no teardown failure naming " + type.getSimpleName() + " was logged: " + lines);
        }
        assertAbsent(log, "the log", secrets);
    }

    /**
     * Walks one cell: arms the fake before each call and checks what comes back. For create and exec:
     * {@code run}, then {@code open} (create) or {@code exec} on an opened sandbox, then the tool,
     * each throwing or answering with the type. For teardown: {@code run} and the tool return the
     * code's result with {@link #expectedTeardown}, and the log reports a failed teardown with its type.
     *
     * @param cell the failure and its phase
     * @param runner the adapter's runner, pointed at the fake
     * @param arm arms one call's worth of the failure in the cell's phase
     * @param tool runs {@code print(1)} through the agent tool on {@code runner}, handing the tool's
     *        full result to the consumer (its {@code onResult}), and returns the tool's answer
     * @param type the subtype expected ({@link Failure#type()} unless the adapter documents another)
     * @param retryAfter the Retry-After the fake sent, or null
     * @param secrets values that must appear nowhere
     */
    public static void walk(Cell cell, SandboxRunner runner, Runnable arm,
            Function<Consumer<RunResult>, String> tool, Class<? extends SandboxException> type, Duration retryAfter,
            String... secrets) {
        walk(cell, runner, arm, tool, new Expected(type, retryAfter, false), secrets);
    }

    /**
     * As {@link #walk(Cell, SandboxRunner, Runnable, Function, Class, Duration, String...)}, with the
     * expectation spelled out (for a teardown cell, its teardown outcome too).
     *
     * @param cell the failure and its phase
     * @param runner the adapter's runner, pointed at the fake
     * @param arm arms one call's worth of the failure in the cell's phase
     * @param tool as in the other {@code walk}
     * @param expected what the cell must throw, or for a teardown cell, the teardown it must report
     * @param secrets values that must appear nowhere
     */
    public static void walk(Cell cell, SandboxRunner runner, Runnable arm,
            Function<Consumer<RunResult>, String> tool, Expected expected, String... secrets) {
        walk(cell, runner, arm, tool, expected, true, secrets);
    }

    /**
     * As {@link #walk(Cell, SandboxRunner, Runnable, Function, Expected, String...)}; without
     * {@code viaOpen}, a create or exec failure is checked through {@code run()} and the tool only (for
     * a runner whose sandboxes take long to start: {@code open()} and {@code exec()} share run's path in
     * the lifecycle).
     *
     * @param cell the failure and its phase
     * @param runner the adapter's runner, pointed at the fake
     * @param arm arms one call's worth of the failure in the cell's phase
     * @param tool as in the other {@code walk}
     * @param expected what the cell must throw, or for a teardown cell, the teardown it must report
     * @param viaOpen whether a create or exec cell is also checked through {@code open()} and
     *        {@code exec()}; ignored by a teardown cell
     * @param secrets values that must appear nowhere
     */
    public static void walk(Cell cell, SandboxRunner runner, Runnable arm,
            Function<Consumer<RunResult>, String> tool, Expected expected, boolean viaOpen, String... secrets) {
        Class<? extends SandboxException> type = expected.type();
        RunRequest hello = RunRequest.python("print('hello')");
        Failure f = cell.failure();
        if (cell.phase() == Phase.TEARDOWN) {
            String log = captureErr(() -> {
                arm.run();
                RunResult result = runner.run(hello);
                if (result.teardown() != expected.teardownFor(f)) {
                    throw new AssertionError(cell + ": run() reported teardown " + result.teardown());
                }
                arm.run();
                AtomicReference<RunResult> reported = new AtomicReference<>();
                String text = tool.apply(reported::set);
                if (text.startsWith("error:") || reported.get() == null) {
                    throw new AssertionError(cell + ": the tool should answer with the code's result: " + text);
                }
                if (reported.get().teardown() != expected.teardownFor(f)) {
                    throw new AssertionError(cell + ": the tool's result reported teardown " + reported.get().teardown());
                }
                assertAbsent(text, "the tool's answer", secrets);
            });
            if (expected.teardownFor(f) == Teardown.FAILED) {
                assertTeardownLogged(log, f, type, secrets);
            } else if (log.contains("teardown failed")) {
                throw new AssertionError(cell + ": a teardown that did not fail was reported as failed: " + log);
            } else {
                assertAbsent(log, "the log", secrets);
            }
            return;
        }
        arm.run();
        assertTyped(thrown(() -> runner.run(hello)), expected, f, secrets);
        if (viaOpen) {
            arm.run();
            if (cell.phase() == Phase.CREATE) {
                assertTyped(thrown(() -> runner.open(SandboxSpec.defaults())), expected, f, secrets);
            } else {
                try (Sandbox s = runner.open(SandboxSpec.defaults())) {
                    assertTyped(thrown(() -> s.exec(hello.execution())), expected, f, secrets);
                }
            }
        }
        arm.run();
        assertToolText(tool.apply(r -> { }), type, f, secrets);
    }

    private static Throwable thrown(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            return e;
        }
        return null;
    }

    /**
     * What {@code body} wrote to System.err (where slf4j-simple logs in this project's tests).
     *
     * @param body what to run with System.err captured; it is restored afterwards, also when {@code body} throws
     * @return the captured text, as UTF-8
     */
    public static String captureErr(Runnable body) {
        PrintStream original = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setErr(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            body.run();
        } finally {
            System.setErr(original);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /**
     * Fails when any of {@code secrets} occurs in {@code text}.
     *
     * @param text the text to search
     * @param where what the text is, for the failure message
     * @param secrets the values; null and empty ones are ignored
     */
    public static void assertAbsent(String text, String where, String... secrets) {
        for (String s : secrets) {
            if (s != null && !s.isEmpty() && text.contains(s)) {
                throw new AssertionError(where + " holds a secret (" + s.length() + " characters)");
            }
        }
    }
}
