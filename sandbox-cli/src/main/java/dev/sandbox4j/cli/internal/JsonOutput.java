package dev.sandbox4j.cli.internal;

import dev.sandbox4j.api.RunResult;

/**
 * Writes a {@link RunResult} as one JSON object on one line. Hand-written to keep the jar free of a
 * JSON library; the output is pure ASCII (everything else is a {@code \\uXXXX} escape), so it reads the
 * same whatever the terminal's or the pipe's encoding, and untrusted output cannot break the framing.
 */
public final class JsonOutput {
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private JsonOutput() {
    }

    /**
     * The result with the fields stdout, stderr, exitCode (null when the process was killed before it
     * exited), status, stdoutTruncated, stderrTruncated, durationMs, provider, sandboxId, teardown.
     */
    public static String result(RunResult r) {
        return result(r, java.util.List.of());
    }

    /** As {@link #result(RunResult)}, with {@code files}: each collected file, and the name it was saved as (if any). */
    public static String result(RunResult r, java.util.List<String> savedAs) {
        StringBuilder sb = new StringBuilder(r.stdout().length() + r.stderr().length() + 256);
        sb.append('{');
        field(sb, "stdout").append(quote(r.stdout())).append(',');
        field(sb, "stderr").append(quote(r.stderr())).append(',');
        field(sb, "exitCode").append(r.exitCode().isPresent() ? Integer.toString(r.exitCode().getAsInt()) : "null").append(',');
        field(sb, "status").append(quote(r.status().name())).append(',');
        field(sb, "stdoutTruncated").append(r.stdoutTruncated()).append(',');
        field(sb, "stderrTruncated").append(r.stderrTruncated()).append(',');
        field(sb, "durationMs").append(r.duration().toMillis()).append(',');
        field(sb, "provider").append(quote(r.provider())).append(',');
        field(sb, "sandboxId").append(quote(r.sandboxId())).append(',');
        field(sb, "teardown").append(quote(r.teardown().name())).append(',');
        field(sb, "files").append('[');
        for (int i = 0; i < r.files().size(); i++) {
            dev.sandbox4j.api.SandboxFile f = r.files().get(i);
            sb.append(i == 0 ? "" : ",").append('{');
            field(sb, "path").append(quote(f.path())).append(',');
            field(sb, "size").append(f.size()).append(',');
            field(sb, "mediaType").append(quote(f.mediaType())).append(',');
            field(sb, "truncated").append(f.truncated()).append(',');
            field(sb, "savedAs").append(i < savedAs.size() ? quote(savedAs.get(i)) : "null");
            sb.append('}');
        }
        sb.append("],");
        field(sb, "notCollected").append('[');
        for (int i = 0; i < r.fileProblems().size(); i++) {
            sb.append(i == 0 ? "" : ",").append(quote(r.fileProblems().get(i)));
        }
        sb.append(']');
        return sb.append('}').toString();
    }

    private static StringBuilder field(StringBuilder sb, String name) {
        return sb.append('"').append(name).append("\":");
    }

    /** A JSON string literal for {@code s}, quotes included, in pure ASCII. */
    public static String quote(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 2);
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                case '\b': sb.append("\\b"); break;
                case '\f': sb.append("\\f"); break;
                default:
                    if (c < 0x20 || c > 0x7e) {
                        // control characters must be escaped; non-ASCII is escaped per UTF-16 unit,
                        // which keeps surrogate pairs intact as two escapes
                        sb.append("\\u").append(HEX[c >> 12 & 0xf]).append(HEX[c >> 8 & 0xf])
                                .append(HEX[c >> 4 & 0xf]).append(HEX[c & 0xf]);
                    } else {
                        sb.append(c);
                    }
            }
        }
        return sb.append('"').toString();
    }
}
