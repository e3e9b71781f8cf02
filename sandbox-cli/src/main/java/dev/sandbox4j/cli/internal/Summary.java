package dev.sandbox4j.cli.internal;

import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.UntrustedText;
import java.util.Locale;

/** The one-line, human-readable lines the CLI writes to stderr. */
public final class Summary {
    public static final String PREFIX = "sandbox4j: ";

    private Summary() {
    }

    /** For example {@code sandbox4j: exited with code 0 in 41 ms (provider local, sandbox 3f2a, teardown destroyed)}. */
    public static String of(RunResult r) {
        StringBuilder sb = new StringBuilder(PREFIX);
        switch (r.status()) {
            case EXITED:
                sb.append("exited with code ").append(r.exitCode().isPresent() ? r.exitCode().getAsInt() : "?");
                break;
            case TIMED_OUT:
                sb.append("timed out: killed at the end of its budget");
                break;
            case OUTPUT_LIMIT:
                sb.append("killed: its output reached the hard cap");
                break;
            default:
                sb.append("killed").append(r.exitCode().isPresent() ? " (exit code " + r.exitCode().getAsInt() + ")" : "");
        }
        sb.append(" after ").append(r.duration().toMillis()).append(" ms");
        if (r.stdoutTruncated()) {
            sb.append("; stdout truncated (").append(r.stdoutBytes()).append(" bytes written)");
        }
        if (r.stderrTruncated()) {
            sb.append("; stderr truncated (").append(r.stderrBytes()).append(" bytes written)");
        }
        sb.append(" (provider ").append(r.provider()).append(", sandbox ").append(r.sandboxId())
                .append(", teardown ").append(r.teardown().name().toLowerCase(Locale.ROOT)).append(')');
        return oneLine(sb.toString());
    }

    /** {@code text} as displayed, on one line: see {@link UntrustedText#oneLine}. */
    public static String oneLine(String text) {
        return UntrustedText.oneLine(text);
    }
}
