package dev.sandbox4j.kubernetes.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * The fixed POSIX shell scripts the driver execs in the pod. Code never goes through them as text: it
 * is an argument ({@code "$@"}) or a file, so it reaches the interpreter byte for byte.
 *
 * <p>Killing: closing the exec stream does not kill the command on a real cluster (the kubelet leaves
 * it running), and every process of the pod's container runs as one uid. {@code kill -KILL -1} from
 * that uid reaches every process of it at once but the caller and the container's PID 1 (the
 * {@code sleep} that keeps the pod alive), whatever the code did: forked, double-forked,
 * {@code setsid}. The wrapper does it when the command returns (nothing outlives an exec), and on
 * budget expiry, output cap or interrupt a second exec does it and checks from {@code /proc} that
 * nothing but PID 1 is left; when it cannot show that, the driver deletes the sandbox (fail closed).
 *
 * <p>Files go through the same exec channel as base64 text, so a hostile file cannot break the stream
 * framing and binary content survives; every path component is checked not to be a symbolic link.
 */
final class Scripts {
    /** Kills every other process but PID 1 and checks /proc until none is alive; builtins only. */
    private static final String KILL_ALL = "k() {\n"
            + "  n=0\n"
            + "  while :; do\n"
            + "    kill -KILL -1 2>/dev/null\n"
            + "    left=\n"
            + "    for p in /proc/[0-9]*; do\n"
            + "      case $p in /proc/1|/proc/$$) continue;; esac\n"
            + "      st=\n"
            + "      { while read -r key v w; do\n"
            + "          case $key in State:) st=$v; break;; esac\n"
            + "        done < \"$p/status\"; } 2>/dev/null\n"
            + "      [ -n \"$st\" ] && [ \"$st\" != Z ] && left=1\n"
            + "    done\n"
            + "    [ -z \"$left\" ] && return 0\n"
            + "    n=$((n+1)); [ $n -ge 200 ] && return 1\n"
            + "  done\n"
            + "}\n";

    /** Runs "$@", then kills whatever it left behind; exits with the command's status. */
    static final String WRAP = KILL_ALL + "\"$@\"\nrc=$?\nk\nexit $rc\n";

    /** Exit 0 when nothing but PID 1 and this shell is alive, 1 when that could not be shown. */
    static final String KILL = KILL_ALL + "k\n";

    /** Walks "$1" below the work directory refusing any symbolic link on the way. */
    private static final String WALK = "p=$1; cur=.; rest=$p\n"
            + "if [ -n \"$p\" ]; then\n"
            + "  while :; do\n"
            + "    c=${rest%%/*}; cur=$cur/$c\n"
            + "    if [ -L \"$cur\" ]; then printf '%s' \"$c\" >&2; exit 3; fi\n"
            + "    [ \"$c\" = \"$rest\" ] && break\n"
            + "    rest=${rest#*/}\n"
            + "    if [ ! -d \"$cur\" ]; then printf '%s' \"$c\" >&2; exit 4; fi\n"
            + "  done\n"
            + "fi\n";

    /** Reads file "$1" (at most "$2" bytes, base64 on stdout), its size on stderr. */
    static final String READ = WALK
            + "if [ ! -e \"$cur\" ]; then exit 5; fi\n"
            + "if [ ! -f \"$cur\" ]; then exit 6; fi\n"
            + "wc -c < \"$cur\" >&2 || exit 7\n"
            + "head -c \"$2\" -- \"$cur\" | base64 || exit 7\n";

    /** Lists directory "$1": {@code type size name NUL} per entry, links not followed, base64 on stdout. */
    static final String LIST = WALK
            + "if [ ! -e \"$cur\" ]; then exit 5; fi\n"
            + "if [ ! -d \"$cur\" ]; then printf '%s' \"$p\" >&2; exit 4; fi\n"
            + "find \"$cur/\" -mindepth 1 -maxdepth 1 -printf '%y %s %f\\0' | base64\n";

    /**
     * Appends base64 "$2" to file "$1" below directory "$4" ("$3" = 1 truncates first), making parent
     * directories; refuses a link anywhere on the path. Runs as the code's uid.
     */
    static final String WRITE = "p=$1; cur=$4; rest=$p\n"
            + "while :; do\n"
            + "  c=${rest%%/*}; cur=$cur/$c\n"
            + "  if [ -L \"$cur\" ]; then printf '%s' \"$c\" >&2; exit 3; fi\n"
            + "  [ \"$c\" = \"$rest\" ] && break\n"
            + "  rest=${rest#*/}\n"
            + "  mkdir -p -- \"$cur\" || exit 4\n"
            + "done\n"
            + "if [ \"$3\" = 1 ]; then : > \"$cur\" || exit 7; fi\n"
            + "printf '%s' \"$2\" | base64 -d >> \"$cur\" || exit 7\n";

    /** What a READ, LIST or WRITE exit status means. */
    static String refusal(int exit, String path, String component) {
        switch (exit) {
            case 3: return path + ": '" + component + "' is a symbolic link (not followed)";
            case 4: return path + ": '" + component + "' is not a directory";
            case 5: return path + ": no such file or directory";
            case 6: return path + ": not a regular file";
            default: return path + ": could not be read or written (exit " + exit + ")";
        }
    }

    private Scripts() {
    }

    static List<String> shell(String script, String... args) {
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", script, "sandbox4j"));
        argv.addAll(List.of(args));
        return argv;
    }

    /** What a second start of the same exec writes to stderr (with {@link #ONCE_EXIT}) instead of running the code. */
    static final String ONCE_MARKER = "sandbox4j: this exec was already started once; the code is not run again";
    /** The exit status of a second start of the same exec. */
    static final int ONCE_EXIT = 125;
    /**
     * Runs the rest of argv only when the directory {@code $1} did not exist yet ({@code mkdir} is atomic):
     * a user's exec sent twice (the JDK's HTTP client re-sends a GET, the exec's upgrade, once when the
     * connection closes before any answer, after the command may have started) runs its code at most once.
     */
    private static final String ONCE = "mkdir -- \"$1\" 2>/dev/null || { echo \"$2\" >&2; exit " + ONCE_EXIT + "; }\n"
            + "shift 2\nexec \"$@\"\n";

    /** {@code command} behind the once-guard of {@code marker} (a path in {@code /tmp}, unique to one exec). */
    static List<String> once(String marker, List<String> command) {
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", ONCE, "sandbox4j-once", marker, ONCE_MARKER));
        argv.addAll(command);
        return argv;
    }

    /** The command wrapped so its leftovers are killed when it returns. */
    static List<String> wrapped(List<String> command) {
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", WRAP, "sandbox4j"));
        argv.addAll(command);
        return argv;
    }
}
