package dev.sandbox4j.docker.internal;

import dev.sandbox4j.policy.Language;
import dev.sandbox4j.spi.CodeCommand;
import java.util.ArrayList;
import java.util.List;

/**
 * The fixed POSIX shell scripts the runner execs in a container. Code never goes through them as text:
 * it is an argument ({@code "$@"}) or a file, so it reaches the interpreter byte for byte.
 *
 * <p>Killing: the Engine API cannot kill an exec, and Docker Desktop hides the container's PIDs from the
 * host. So every process the code makes runs as one uid that nothing else in the container uses (the
 * container's init and its {@code sleep} run as another), and what ends them is {@link #KILL}, run by the
 * driver as a separate exec as root in the container, whose only capability is {@code CAP_KILL}: code,
 * being another uid without capabilities, can neither signal, trace nor rewrite it (seccomp denies
 * {@code ptrace} and {@code process_vm_writev}; {@code /proc/<pid>/mem} of another uid is closed to it).
 * It SIGKILLs every live process of the code's uid, again and again, until {@code /proc} shows none
 * (a process with SIGKILL pending cannot complete a fork, so a fork bomb shrinks; zombies wait for init);
 * if it cannot show that in its rounds, or cannot start (the pids limit being full), the driver kills the
 * whole container. The wrapper {@link #WRAP} runs as the code's uid and ends with {@code kill -KILL -1} (one
 * atomic blast at every process of the uid), but the code can kill the wrapper first, so nothing relies
 * on it: the driver runs {@link #KILL} after every exec, on each path (see {@link ExecRun}).
 */
final class Scripts {
    /** Rounds of {@link #KILL} before it gives up (then the container is killed); later rounds pause a little. */
    static final int KILL_ROUNDS = 200;

    /**
     * As root with CAP_KILL: SIGKILLs every live process of uid $1 until /proc shows none; exit 0 then, 1 when
     * that could not be shown. Builtins only, but the pause of late rounds.
     */
    static final String KILL = "U=$1; n=0\n"
            + "while :; do\n"
            + "  left=\n"
            + "  for p in /proc/[0-9]*; do\n"
            + "    st=; u=\n"
            + "    { while read -r key v w; do\n"
            + "        case $key in State:) st=$v;; Uid:) u=$v; break;; esac\n"
            + "      done < \"$p/status\"; } 2>/dev/null\n"
            + "    if [ \"$u\" = \"$U\" ] && [ \"$st\" != Z ] && [ -n \"$st\" ]; then\n"
            + "      kill -KILL \"${p#/proc/}\" 2>/dev/null; left=1\n"
            + "    fi\n"
            + "  done\n"
            + "  [ -z \"$left\" ] && exit 0\n"
            + "  n=$((n+1)); [ $n -ge " + KILL_ROUNDS + " ] && exit 1\n"
            + "  [ $n -ge 50 ] && sleep 0.02\n"
            + "done\n";

    /** Runs "$@" as the code's uid, then one SIGKILL at every other process of that uid; exits with the command's status. */
    static final String WRAP = "\"$@\"\n"
            + "rc=$?\n"
            + "kill -KILL -1 2>/dev/null\n"
            + "exit $rc\n";

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

    /** The bound on a helper's read or listing: nothing blocks in them, so only a pathological case gets near it. */
    static final int HELPER_SECONDS = 30;

    /**
     * Reads file "$1" (at most "$2" bytes to stdout), its size on stderr. Nothing here can be stalled or sent
     * elsewhere by a file the code swaps meanwhile (a FIFO, a link): the type and size come from
     * {@code lstat} (no open), the one open is {@code dd}'s with {@code O_NOFOLLOW | O_NONBLOCK} (a FIFO
     * neither blocks the open nor a read, a final link is refused), the whole read is bounded by
     * {@code timeout}, and afterwards the path must still be the same regular file (device and inode)
     * as before, or the read is refused.
     */
    static final String READ = WALK
            + "if [ ! -e \"$cur\" ]; then exit 5; fi\n"
            + "if [ ! -f \"$cur\" ]; then exit 6; fi\n"
            + "st=$(stat -c '%d:%i %s' -- \"$cur\" 2>/dev/null) || exit 7\n"
            + "timeout -s KILL " + HELPER_SECONDS + " dd if=\"$cur\" iflag=nofollow,nonblock,count_bytes bs=65536 count=\"$2\""
            + " status=none 2>/dev/null\n"
            + "rc=$?\n"
            + "[ $rc -eq 137 ] && exit 9\n"
            + "[ $rc -eq 0 ] || exit 7\n"
            + "if [ -L \"$cur\" ] || [ ! -f \"$cur\" ]; then exit 8; fi\n"
            + "[ \"$(stat -c '%d:%i %s' -- \"$cur\" 2>/dev/null)\" = \"$st\" ] || exit 8\n"
            + "printf '%s\\n' \"${st#* }\" >&2\n";

    /** Lists directory "$1": {@code type size name NUL} per entry, links not followed, bounded in time. */
    static final String LIST = WALK
            + "if [ ! -e \"$cur\" ]; then exit 5; fi\n"
            + "if [ ! -d \"$cur\" ]; then printf '%s' \"$p\" >&2; exit 4; fi\n"
            + "exec timeout -s KILL " + HELPER_SECONDS + " find \"$cur/\" -mindepth 1 -maxdepth 1 -printf '%y %s %f\\0'\n";

    /** What a READ or LIST exit status means. */
    static String refusal(int exit, String path, String component) {
        switch (exit) {
            case 3: return path + ": '" + component + "' is a symbolic link (not followed)";
            case 4: return path + ": '" + component + "' is not a directory";
            case 5: return path + ": no such file or directory";
            case 6: return path + ": not a regular file";
            case 8: return path + ": changed while it was read (replaced, or made a link or a FIFO): refused";
            case 9: return path + ": reading did not finish within " + HELPER_SECONDS + " s";
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

    /** The interpreter with code inline: {@code python3 -c}, {@code node -e}, {@code bash -c} ({@link CodeCommand}). */
    static List<String> inline(Language l, String code) {
        return CodeCommand.of(l).inline(code);
    }

    /** The interpreter with code in a file. */
    static List<String> file(Language l, String path) {
        return CodeCommand.of(l).file(path);
    }

    static String extension(Language l) {
        return CodeCommand.of(l).extension();
    }
}
