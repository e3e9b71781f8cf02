package dev.sandbox4j.cli;

import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunners;
import dev.sandbox4j.api.UntrustedText;
import dev.sandbox4j.cli.internal.CliLanguage;
import dev.sandbox4j.cli.internal.CliOptions;
import dev.sandbox4j.cli.internal.JsonError;
import dev.sandbox4j.cli.internal.JsonOutput;
import dev.sandbox4j.cli.internal.Refusal;
import dev.sandbox4j.cli.internal.SavedFiles;
import dev.sandbox4j.cli.internal.Summary;
import dev.sandbox4j.cli.internal.UsageException;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.InvalidPolicyException;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

/**
 * Runs one piece of code in a sandbox from the command line:
 * {@code java -jar sandbox4j-cli.jar --code 'print(6*7)'}. See {@code --help}.
 *
 * <p>Exit status: {@value #EXIT_COMPLETED} when the run completed (whatever the code's exit code),
 * {@value #EXIT_USAGE} for a usage or policy error or a provider that is missing or not configured,
 * {@value #EXIT_PROVIDER} for a provider failure, {@value #EXIT_UNEXPECTED} for anything else.
 * Under {@code --json} a failure is one JSON object on stdout ({@code {"error":{"kind":...,"message":...,
 * "exitStatus":...}}}) and nothing goes to stderr; {@code --version} prints the jar's version. A refused
 * policy names each refused rule in words and the {@code --egress} forms the runner does enforce.
 *
 * @since 0.1.0
 */
public final class RunCode {
    /** The word every line of the CLI's own starts with; a line of the code's output that looks like it is marked. */
    private static final String CLI_WORD = "sandbox4j";
    /** Exit status when the run completed, whatever the code's own exit code. */
    public static final int EXIT_COMPLETED = 0;
    /** Exit status for anything else, a {@code --save-dir} that cannot be written among them. */
    public static final int EXIT_UNEXPECTED = 1;
    /** Exit status for a usage or policy error, or a provider that is missing or not configured. */
    public static final int EXIT_USAGE = 2;
    /** Exit status for a provider failure, an interrupt included. */
    public static final int EXIT_PROVIDER = 3;

    /** Longer than the API's default teardown deadline (30 s), so a Ctrl-C still tears the sandbox down. */
    private static final long TEARDOWN_WAIT_SECONDS = 40;

    private final BiFunction<String, Map<String, String>, SandboxRunner> runners;

    RunCode(BiFunction<String, Map<String, String>, SandboxRunner> runners) {
        this.runners = Objects.requireNonNull(runners, "runners");
    }

    /**
     * The command line's entry point: runs {@link #run} on the process's arguments and environment, tears the
     * sandbox down on Ctrl-C or SIGTERM, and exits with the status.
     *
     * @param args the command-line arguments; see {@code --help}
     */
    public static void main(String[] args) {
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        PrintStream err = new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8);
        // On Ctrl-C or SIGTERM the JVM runs shutdown hooks but does not interrupt main: interrupt it so
        // the sandbox is torn down (Sandbox.exec tears down on interrupt), and wait for that to finish.
        Thread mainThread = Thread.currentThread();
        CountDownLatch finished = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (finished.getCount() > 0) {
                mainThread.interrupt();
                try {
                    finished.await(TEARDOWN_WAIT_SECONDS, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }, "sandbox4j-teardown-on-exit"));
        int status;
        try {
            status = run(args, out, err, System.getenv());
        } finally {
            out.flush();
            err.flush();
            finished.countDown();
        }
        System.exit(status);
    }

    /**
     * The whole command: parses {@code args}, runs the code on the provider named by {@code --provider}
     * (configured from {@code env}), prints to {@code out} and {@code err}, and returns the exit status.
     *
     * @param args the command-line arguments
     * @param out where the result (or, under {@code --json}, every message) is printed
     * @param err where errors are printed, unless {@code --json}
     * @param env the environment the provider is configured from
     * @return the exit status: {@link #EXIT_COMPLETED}, {@link #EXIT_USAGE}, {@link #EXIT_PROVIDER} or
     *     {@link #EXIT_UNEXPECTED}
     */
    public static int run(String[] args, PrintStream out, PrintStream err, Map<String, String> env) {
        return new RunCode(RunCode::runner).execute(args, out, err, env);
    }

    /** {@code auto} is the embedded runner that works here (bubblewrap, else Docker); any other name a provider. */
    static SandboxRunner runner(String provider, Map<String, String> env) {
        return "auto".equalsIgnoreCase(provider.trim()) ? SandboxRunners.auto(env) : SandboxRunners.byName(provider, env);
    }

    int execute(String[] args, PrintStream out, PrintStream err, Map<String, String> env) {
        Failures fail = new Failures(CliOptions.wantsJson(args), out, err);
        try {
            CliOptions options = CliOptions.parse(args);
            if (options.help()) {
                out.print(CliOptions.USAGE);
                out.flush();
                return EXIT_COMPLETED;
            }
            if (options.version()) {
                out.println(options.json() ? "{\"version\":" + JsonOutput.quote(version()) + "}" : "sandbox4j-cli " + version());
                out.flush();
                return EXIT_COMPLETED;
            }
            RunResult result;
            try (SandboxRunner runner = runners.apply(options.provider(), env)) {
                try {
                    result = runner.run(options.toRunRequest());
                } catch (UnsupportedPolicyException e) {
                    return fail.with("policy", EXIT_USAGE, Refusal.describe(e, capabilitiesOf(runner))).print();
                }
            }
            List<String> saved = List.of();
            if (options.saveDir().isPresent()) {
                try {
                    saved = SavedFiles.save(options.saveDir().get(), result.files());
                } catch (IOException e) {
                    return fail.with("save-dir", EXIT_UNEXPECTED, "--save-dir: " + e.getMessage()).print();
                }
            }
            print(result, saved, options.json(), out, err);
            return EXIT_COMPLETED;
        } catch (UsageException e) {
            return fail.with("usage", EXIT_USAGE, e.getMessage() + " (see --help)").print();
        } catch (UnsupportedPolicyException e) {
            return fail.with("policy", EXIT_USAGE, Refusal.describe(e, null)).print();
        } catch (InvalidPolicyException e) {
            return fail.with("policy", EXIT_USAGE, e.getMessage()).print();
        } catch (SandboxConfigurationException e) {
            return fail.with("configuration", EXIT_USAGE, CliLanguage.of(e.getMessage())).print();
        } catch (SandboxException e) {
            Failures f = fail.with(e instanceof SandboxInterruptedException ? "interrupted" : "provider", EXIT_PROVIDER, describe(e));
            f.json().field("provider", e.provider()).field("retriable", e.isRetriable())
                    .field("codeMayHaveRun", e.codeMayHaveRun());
            e.httpStatus().ifPresent(status -> f.json().field("httpStatus", status));
            return f.print();
        } catch (RuntimeException e) {
            return fail.with("unexpected", EXIT_UNEXPECTED,
                    "unexpected error: " + e.getClass().getName() + ": " + e.getMessage()).print();
        }
    }

    /** The version of this jar, from the resource Maven filters at build time. */
    static String version() {
        try (InputStream in = RunCode.class.getResourceAsStream("version.properties")) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }

    private static Capabilities capabilitiesOf(SandboxRunner runner) {
        try {
            return runner.capabilities();
        } catch (RuntimeException e) {
            return null; // the refusal is still reported, without the suggestion
        }
    }

    /** One failure, printed as one line on stderr, or under --json as one object on stdout. */
    private static final class Failures {
        private final boolean json;
        private final PrintStream out;
        private final PrintStream err;
        private int status;
        private String message;
        private JsonError error;

        Failures(boolean json, PrintStream out, PrintStream err) {
            this.json = json;
            this.out = out;
            this.err = err;
        }

        Failures with(String kind, int status, String message) {
            this.status = status;
            this.message = Summary.oneLine(message);
            this.error = JsonError.of(kind, this.message, status);
            return this;
        }

        JsonError json() {
            return error;
        }

        int print() {
            if (json) {
                out.println(error);
                out.flush();
            } else {
                err.println(Summary.oneLine(Summary.PREFIX + message));
                err.flush();
            }
            return status;
        }
    }

    private static void print(RunResult r, List<String> saved, boolean json, PrintStream out, PrintStream err) {
        if (json) {
            out.println(JsonOutput.result(r, saved));
            out.flush();
            return;
        }
        // The output is untrusted: escape sequences, lone carriage returns, bidi and zero-width characters
        // could rewrite or hide text, and a line could imitate the summary; a line is judged by what it
        // displays (UntrustedText). On a terminal both streams share the screen: the code's stderr and the
        // summary start their own line even when stdout did not end with a newline.
        String stdout = UntrustedText.markImitations(r.stdout(), CLI_WORD);
        out.print(stdout);
        out.flush();
        if (!stdout.isEmpty() && !stdout.endsWith("\n")) {
            err.println();
        }
        String stderr = UntrustedText.markImitations(r.stderr(), CLI_WORD);
        err.print(stderr);
        if (!stderr.isEmpty() && !stderr.endsWith("\n")) {
            err.println();
        }
        for (int i = 0; i < r.files().size(); i++) {
            SandboxFile f = r.files().get(i);
            err.println(Summary.oneLine(Summary.PREFIX + "file " + f.path() + " (" + f.mediaType() + ", " + f.size() + " bytes"
                    + (f.truncated() ? ", cut at " + f.contentLength() : "") + ")" + (i < saved.size() ? " saved as " + saved.get(i) : "")));
        }
        for (String problem : r.fileProblems()) {
            err.println(Summary.oneLine(Summary.PREFIX + "not collected: " + problem));
        }
        err.println(Summary.of(r));
        err.flush();
    }

    private static String describe(SandboxException e) {
        StringBuilder sb = new StringBuilder(e instanceof SandboxInterruptedException ? "interrupted" : "provider error");
        if (e.provider() != null) {
            sb.append(" (").append(e.provider());
            e.httpStatus().ifPresent(s -> sb.append(", HTTP ").append(s));
            sb.append(')');
        }
        sb.append(": ").append(e.getMessage());
        if (e.isRetriable()) {
            sb.append(" [retriable]");
        }
        if (e.codeMayHaveRun()) {
            sb.append(" [the code may have run]");
        }
        return sb.toString();
    }
}
