package dev.sandbox4j.docker.internal;

import dev.sandbox4j.policy.Language;
import java.util.ArrayList;
import java.util.List;

/**
 * The fixed POSIX shell scripts the runner execs in a container. Code never goes through them as text:
 * it is an argument ({@code "$@"}) or a file, so it reaches the interpreter byte for byte.
 *
 * <p>Killing: the Engine API cannot kill an exec, and Docker Desktop hides the container's PIDs from the
 * host. So every process the code makes runs as one uid that nothing else in the container uses (the
 * container's init and its {@code sleep} run as another), and {@code kill -KILL -1} from that uid sends
 * SIGKILL to every process of it at once, whatever it did: forked, double-forked, {@code setsid}, a new
 * process group. The kernel walks the task list under the lock that {@code fork} needs, so a fork bomb
 * cannot add a process during the walk, and a process with SIGKILL pending cannot complete a fork. The
 * wrapper does it when the command returns (nothing outlives an exec, as with the local runner), and on
 * budget expiry, output cap or interrupt a second exec does it and then checks, from {@code /proc},
 * that no live process of the uid is left; if it cannot prove that (or cannot start, the pids limit
 * being full), the driver kills the whole container.
 */
final class Scripts {
    /** Kills every other process of uid $U and checks /proc until none is alive (zombies wait for init); builtins only. */
    static final String KILL_ALL = "k() {\n"
            + "  n=0\n"
            + "  while :; do\n"
            + "    kill -KILL -1 2>/dev/null\n"
            + "    left=\n"
            + "    for p in /proc/[0-9]*; do\n"
            + "      [ \"$p\" = \"/proc/$$\" ] && continue\n"
            + "      st=; u=\n"
            + "      { while read -r key v w; do\n"
            + "          case $key in State:) st=$v;; Uid:) u=$v; break;; esac\n"
            + "        done < \"$p/status\"; } 2>/dev/null\n"
            + "      [ \"$u\" = \"$U\" ] && [ \"$st\" != Z ] && left=1\n"
            + "    done\n"
            + "    [ -z \"$left\" ] && return 0\n"
            + "    n=$((n+1)); [ $n -ge 200 ] && return 1\n"
            + "  done\n"
            + "}\n";

    /** Runs "$@" (after the uid), then kills whatever it left behind; exits with the command's status. */
    static final String WRAP = "U=$1; shift\n" + KILL_ALL
            + "\"$@\"\n"
            + "rc=$?\n"
            + "k\n"
            + "exit $rc\n";

    /** Exit 0 when no process of uid $1 (but this one) is alive any more, 1 when that could not be shown. */
    static final String KILL = "U=$1\n" + KILL_ALL + "k\n";

    /**
     * Walks "$1" below the work directory refusing any symbolic link on the way (no process of the code
     * is alive between execs, so nothing can swap a component meanwhile). Prints the component that failed.
     */
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

    /** Reads file "$1" (at most "$2" bytes to stdout), its size on stderr. */
    static final String READ = WALK
            + "if [ ! -e \"$cur\" ]; then exit 5; fi\n"
            + "if [ ! -f \"$cur\" ]; then exit 6; fi\n"
            + "wc -c < \"$cur\" >&2 || exit 7\n"
            + "exec head -c \"$2\" -- \"$cur\"\n";

    /** Lists directory "$1": {@code type size name NUL} per entry, links not followed. */
    static final String LIST = WALK
            + "if [ ! -e \"$cur\" ]; then exit 5; fi\n"
            + "if [ ! -d \"$cur\" ]; then printf '%s' \"$p\" >&2; exit 4; fi\n"
            + "exec find \"$cur/\" -mindepth 1 -maxdepth 1 -printf '%y %s %f\\0'\n";

    /** What a READ or LIST exit status means. */
    static String refusal(int exit, String path, String component) {
        switch (exit) {
            case 3: return path + ": '" + component + "' is a symbolic link (not followed)";
            case 4: return path + ": '" + component + "' is not a directory";
            case 5: return path + ": no such file or directory";
            case 6: return path + ": not a regular file";
            default: return path + ": could not be read (exit " + exit + ")";
        }
    }

    private Scripts() {
    }

    static List<String> shell(String script, String... args) {
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", script, "sandbox4j"));
        argv.addAll(List.of(args));
        return argv;
    }

    /** The interpreter with code inline: {@code python3 -c}, {@code node -e}, {@code bash -c}. */
    static List<String> inline(Language l, String code) {
        switch (l) {
            case PYTHON: return List.of("python3", "-c", code);
            case JAVASCRIPT: return List.of("node", "-e", code);
            default: return List.of("bash", "-c", code);
        }
    }

    /** The interpreter with code in a file. */
    static List<String> file(Language l, String path) {
        switch (l) {
            case PYTHON: return List.of("python3", path);
            case JAVASCRIPT: return List.of("node", path);
            default: return List.of("bash", path);
        }
    }

    static String extension(Language l) {
        switch (l) {
            case PYTHON: return ".py";
            case JAVASCRIPT: return ".js";
            default: return ".sh";
        }
    }
}
