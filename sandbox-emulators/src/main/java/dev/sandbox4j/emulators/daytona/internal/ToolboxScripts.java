package dev.sandbox4j.emulators.daytona.internal;

import static dev.sandbox4j.emulators.ShellWords.quote;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.sandbox4j.emulators.ShellWords;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * The bash scripts the emulated daemon runs. Daytona's daemon writes a request's command to the stdin
 * of the sandbox's login shell with stdout and stderr going to one buffer
 * ({@code apps/daemon/pkg/toolbox/process/execute.go}); code-run turns code into a shell line that
 * pipes the base64-encoded code to the interpreter ({@code process/coderun/python.go},
 * {@code javascript.go}, {@code typescript.go}). Here the same shell text is the code of a bash
 * execution, after a preamble that merges stderr into stdout, links uploaded files into place, exports
 * the request's variables and changes to its working directory.
 */
public final class ToolboxScripts {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Lines of code-run output that carry an artifact ({@code coderun/artifacts.go}). */
    public static final String ARTIFACT_MARKER = "dtn_artifact_k39fd2:";
    /** Code-run's JavaScript and TypeScript prefix: drops the script name from {@code process.argv}. */
    private static final String ARGV_SPLICE = "process.argv.splice(1, 1);\n";

    private ToolboxScripts() {
    }

    /**
     * Checks variable names as the daemon does ({@code common/env.go}).
     *
     * @throws WireException 400 naming the first bad name
     */
    public static void validateEnvNames(Map<String, String> envs) throws WireException {
        for (String key : envs.keySet()) {
            if (!ShellWords.validEnvName(key)) {
                throw WireException.badRequest("bad request: invalid environment variable name: '" + key + "'");
            }
        }
    }

    /**
     * The script for {@code process/execute}.
     *
     * @param outsidePaths absolute sandbox paths of files uploaded outside the home, to link into place
     * @param cwdFailureMarker printed (then exit 255) when {@code cwd} cannot be entered
     */
    public static String execute(String command, String cwd, Map<String, String> envs,
            Collection<String> outsidePaths, String cwdFailureMarker) {
        StringBuilder sb = preamble(envs, outsidePaths);
        if (cwd != null && !cwd.isEmpty()) {
            sb.append("cd -- ").append(sandboxPath(cwd)).append(" 2>/dev/null || { printf '%s' ")
                    .append(quote(cwdFailureMarker)).append("; exit 255; }\n");
        }
        sb.append("unset __dtn_wd\n");
        return sb.append(command).append('\n').toString();
    }

    /**
     * The script for {@code process/code-run}.
     *
     * @throws WireException 400 for a language the daemon does not know
     */
    public static String codeRun(String language, String code, List<String> argv, Map<String, String> envs,
            Collection<String> outsidePaths) throws WireException {
        StringBuilder args = new StringBuilder();
        for (String a : argv) {
            // the daemon joins argv with spaces unquoted; quoting keeps the emulator from adding a shell hop
            args.append(' ').append(quote(a));
        }
        String line;
        switch (language) {
            case "python":
                line = "printf '%s' '" + base64(code) + "' | base64 -d | python3 -u -" + args;
                break;
            case "javascript":
                line = "printf '%s' '" + base64(ARGV_SPLICE + code) + "' | base64 -d | node -" + args;
                break;
            case "typescript":
                line = "_f=/tmp/dtn_$$.ts; printf '%s' '" + base64(ARGV_SPLICE + code) + "' | base64 -d > \"$_f\"; "
                        + "npm_config_loglevel=error npx ts-node -T --ignore-diagnostics 5107 -O '{\"module\":\"CommonJS\"}' \"$_f\""
                        + args + "; _dtn_ec=$?; rm -f \"$_f\"; exit $_dtn_ec";
                break;
            default:
                throw WireException.badRequest("bad request: unsupported language: " + language);
        }
        StringBuilder sb = preamble(envs, outsidePaths);
        sb.append("unset __dtn_wd\n");
        return sb.append(line).append('\n').toString();
    }

    /**
     * The script for a session command: stdout and stderr kept apart (the daemon's labelers read each
     * from its own pipe), uploaded files linked into place, run in the home. Its stdin is what the
     * daemon's wrapper gives it ({@code pkg/session/execute.go}): for an async command a pipe held open
     * and never written ({@code while :; do sleep 3600; done > "$ip"}, kept for {@code SendInput}), so a
     * read waits for ever; here a FIFO opened for reading and writing, with no process of its own. For
     * a sync one the pipe ends at once ({@code cat /dev/null > "$ip"}): {@code /dev/null}.
     */
    public static String session(String command, Collection<String> outsidePaths, boolean async) {
        StringBuilder sb = links(new StringBuilder(), outsidePaths);
        sb.append("unset __dtn_wd\n");
        if (!async) {
            return sb.append("{\n").append(command).append("\n} 0</dev/null\n").toString();
        }
        sb.append("__dtn_in=$(mktemp -u) && mkfifo -m 600 \"$__dtn_in\" || exit 1\n");
        return sb.append("{ rm -f \"$__dtn_in\"; unset __dtn_in\n").append(command).append("\n} 0<>\"$__dtn_in\"\n").toString();
    }

    private static StringBuilder preamble(Map<String, String> envs, Collection<String> outsidePaths) {
        StringBuilder sb = new StringBuilder();
        // one buffer for both streams, as the daemon's cmd.Stdout = cmd.Stderr = &buf
        sb.append("exec 2>&1\n");
        links(sb, outsidePaths);
        envs.forEach((k, v) -> sb.append("export ").append(k).append('=').append(quote(v)).append('\n'));
        return sb;
    }

    private static StringBuilder links(StringBuilder sb, Collection<String> outsidePaths) {
        sb.append("__dtn_wd=\"$PWD\"\n");
        for (String abs : outsidePaths) {
            int slash = abs.lastIndexOf('/');
            String parent = slash <= 0 ? "/" : abs.substring(0, slash);
            sb.append("mkdir -p -- ").append(quote(parent)).append(" 2>/dev/null; ln -sfn -- \"$__dtn_wd\"/")
                    .append(quote(SandboxPaths.OUTSIDE + abs)).append(' ').append(quote(abs)).append(" 2>/dev/null\n");
        }
        return sb;
    }

    /** A sandbox path as a bash word: the home maps to the working directory. */
    private static String sandboxPath(String path) {
        String abs = SandboxPaths.absolute(path);
        String home = SandboxPaths.underHome(abs);
        if (home == null) {
            return quote(abs);
        }
        return home.isEmpty() ? "\"$__dtn_wd\"" : "\"$__dtn_wd\"/" + quote(home);
    }

    private static String base64(String code) {
        return Base64.getEncoder().encodeToString(code.getBytes(StandardCharsets.UTF_8));
    }

    /** Code-run output with artifact lines taken out, and the charts they carried (or null). */
    public static final class Artifacts {
        private final String result;
        private final ArrayNode charts;

        Artifacts(String result, ArrayNode charts) {
            this.result = result;
            this.charts = charts;
        }

        public String result() {
            return result;
        }

        /** The charts, or null when there were none (the daemon then omits {@code artifacts}). */
        public ArrayNode charts() {
            return charts;
        }
    }

    /** Removes artifact lines as the daemon does; lines that do not parse are dropped silently. */
    public static Artifacts parseArtifacts(String output) {
        if (!output.contains(ARTIFACT_MARKER)) {
            return new Artifacts(output, null);
        }
        String[] lines = output.split("\n", -1);
        List<String> kept = new ArrayList<>(lines.length);
        ArrayNode charts = JSON.createArrayNode();
        for (String line : lines) {
            if (!line.startsWith(ARTIFACT_MARKER)) {
                kept.add(line);
                continue;
            }
            String payload = line.substring(ARTIFACT_MARKER.length()).trim();
            if (payload.isEmpty()) {
                continue;
            }
            try {
                JsonNode artifact = JSON.readTree(payload);
                JsonNode value = artifact.path("value");
                if ("chart".equals(artifact.path("type").asText()) && value.isObject()) {
                    charts.add(value);
                }
            } catch (Exception e) {
                // not JSON: dropped, as the daemon drops it
            }
        }
        return new Artifacts(String.join("\n", kept), charts.isEmpty() ? null : charts);
    }
}
