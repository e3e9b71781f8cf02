package dev.sandbox4j.local.internal;

import dev.sandbox4j.egress.SandboxForwarder;
import dev.sandbox4j.policy.Language;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Builds the three parts of one sandboxed process, as argument lists (never a shell string):
 * <ol>
 *   <li>the launcher argv: {@code sh -c LAUNCH_SCRIPT ... [setpriv --reuid=... --] bwrap --args 3 --seccomp 4};</li>
 *   <li>the bwrap options, written NUL-separated to the launcher's stdin, which the fixed script hands
 *       to bwrap as fd 3 ({@code --args 3}), so env values and host paths arrive byte for byte whatever
 *       the JVM's locale, and stay out of {@code /proc/1/cmdline}; the seccomp program is a file in
 *       the sandbox's host directory, opened by the script as fd 4;</li>
 *   <li>the command argv after {@code --}: {@code /sandbox4j-init -c INIT_SCRIPT sandbox4j-init prlimit ... --
 *       python3 -c CODE} (bwrap takes the command only from its real argv).</li>
 * </ol>
 *
 * <p>The sandbox's PID 1 is not bubblewrap's own reaper (which runs as the sandbox's uid, is dumpable,
 * and so could be rewritten by the code through {@code /proc/1/mem} to outlive the exec) but
 * {@link #INIT_PATH} ({@code --as-pid-1}): the host's {@code sh} copied execute-only, which the kernel
 * runs non-dumpable, so the code can neither write its memory nor trace it, and as a namespace's init
 * it ignores every signal from inside that it has no handler for (SIGKILL and SIGSTOP included). It runs
 * the command, reaps what is reparented to it, and exits with the command's status as soon as the
 * command has exited; its exit makes the kernel SIGKILL every other process of the PID namespace, and
 * bubblewrap (the JVM's child) returns only once it has reaped that PID 1, that is once the namespace is
 * empty. The one signal it handles is SIGINT (sh notes it while waiting): code that sends SIGINT to PID 1
 * changes its own exit code to 130, nothing else.
 */
public final class BwrapCommand {
    /**
     * Code up to this many UTF-8 bytes goes in argv; larger code goes by file. The kernel limits one
     * argv string to 128 KiB (MAX_ARG_STRLEN), and argv plus env together to a quarter of the stack limit.
     */
    public static final int MAX_ARGV_CODE_BYTES = 100 * 1024;
    /** The sandbox's working directory, bound read-write to the per-sandbox host directory. */
    public static final String SANDBOX_DIR = "/sandbox";
    static final String PATH = "/usr/local/bin:/usr/bin:/bin";
    /** Where the execute-only init ({@code SandboxDirs.INIT}) is bound inside the sandbox. */
    static final String INIT_PATH = "/sandbox4j-init";
    /**
     * What the init runs: the command as a child (never exec'd: an exec of a readable program would make
     * PID 1 dumpable again), then exit with its status.
     */
    static final String INIT_SCRIPT = "\"$@\"; exit $?";
    /**
     * The init's script when the sandbox's egress goes through the host proxy: first the forwarder
     * ($1 the interpreter, $2 its fixed source, $3 the port, $4 the socket), which returns once it
     * listens (its listening child stays), then the command as in {@link #INIT_SCRIPT}. Nothing of the
     * code runs before the port is open; a forwarder that cannot start ends the exec with 125.
     */
    static final String INIT_FORWARD_SCRIPT = "\"$1\" -I -S -c \"$2\" \"$3\" \"$4\" || exit 125; shift 4; \"$@\"; exit $?";

    private BwrapCommand() {
    }

    /**
     * A fixed script (never built from input; its inputs are positional arguments): join the
     * sandbox's cgroups while still able to (writing 0, itself), then exec the rest with the options pipe moved to fd 3,
     * the seccomp program opened on fd 4, and /dev/null as stdin. bwrap closes fds 3 and 4 after
     * reading them, so the code inherits only stdin (empty), stdout and stderr.
     * The shell's own PWD is unset so that bwrap's environment, visible in {@code /proc/1/environ}, stays empty.
     * Arguments: $1 the filter file, $2 the number of cgroup {@code tasks} files that follow, then the command.
     */
    static final String LAUNCH_SCRIPT = "unset PWD OLDPWD; f=$1; n=$2; shift 2; "
            + "while [ \"$n\" -gt 0 ]; do echo 0 > \"$1\" || exit 125; shift; n=$((n - 1)); done; "
            + "exec \"$@\" 3<&0 4<\"$f\" </dev/null";
    /** The descriptor bwrap reads its options from, and the one it reads the seccomp program from. */
    static final int OPTIONS_FD = 3;
    static final int SECCOMP_FD = 4;

    /**
     * What runs on the host: {@code sh -c LAUNCH_SCRIPT}, which execs setpriv (when the JVM is root)
     * which execs bwrap reading its options from fd 3 and its seccomp program from fd 4 (all one process).
     *
     * @param seccompFile the compiled filter (see {@link SeccompFilter})
     * @param cgroupProcs the cgroup {@code tasks} files the process joins before bwrap starts (may be empty)
     */
    public static List<String> launcher(LocalSettings s, Path seccompFile, List<Path> cgroupProcs) {
        List<String> a = new ArrayList<>();
        add(a, s.sh().toString(), "-c", LAUNCH_SCRIPT, "sandbox4j-launch", seccompFile.toString(),
                Integer.toString(cgroupProcs.size()));
        cgroupProcs.forEach(p -> a.add(p.toString()));
        if (s.dropPrivileges()) {
            // as host root, RLIMIT_NPROC would not be enforced (the kernel exempts uid 0)
            a.add(s.setpriv().toString());
            a.add("--reuid=" + s.dropUid());
            a.add("--regid=" + s.dropGid());
            a.add("--clear-groups");
            a.add("--no-new-privs");
            a.add("--");
        }
        add(a, s.bwrap().toString(), "--args", Integer.toString(OPTIONS_FD), "--seccomp", Integer.toString(SECCOMP_FD));
        return a;
    }

    /**
     * The bwrap options for one execution.
     *
     * @param root the sandbox's host directory (with {@code work/} and {@code etc/})
     * @param shareNet true for allow-all egress (the host's network), false for deny-all (own, empty netns)
     * @param env the spec's environment, set after the defaults (so it may override them)
     * @param diskBounded true when {@code root/fs} is the sandbox's own size-limited file system, which
     *        then also holds {@code /tmp} and {@code /dev/shm} (so one bound covers all three)
     */
    public static List<String> options(LocalSettings s, Path root, boolean shareNet, Map<String, String> env,
            boolean diskBounded) {
        return options(s, root, shareNet, env, diskBounded, null, false);
    }

    /**
     * As {@link #options(LocalSettings, Path, boolean, Map, boolean)}, for a sandbox whose egress goes
     * through the host proxy when {@code egressDir} is not null: its own empty network namespace, the
     * host directory holding the proxy's socket bound read-only at {@link SandboxForwarder#MOUNT}, the
     * proxy variables set (before the spec's, which may override them: that only loses the code its
     * route), and with {@code ca} the trust variables pointing at the CA files in that directory.
     */
    public static List<String> options(LocalSettings s, Path root, boolean shareNet, Map<String, String> env,
            boolean diskBounded, Path egressDir, boolean ca) {
        if (egressDir != null && shareNet) {
            throw new IllegalArgumentException("a proxied sandbox never shares the host's network");
        }
        List<String> a = new ArrayList<>();
        // --disable-userns needs an explicit --unshare-user (--unshare-all only tries it)
        add(a, "--unshare-all", "--unshare-user", "--disable-userns");
        if (shareNet) {
            a.add("--share-net");
        }
        // --as-pid-1: the command (the execute-only init) is PID 1, not bwrap's writable reaper
        add(a, "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--as-pid-1");
        add(a, "--hostname", "sandbox",
                "--uid", Integer.toString(LocalSettings.SANDBOX_UID), "--gid", Integer.toString(LocalSettings.SANDBOX_UID));
        add(a, "--clearenv",
                "--setenv", "PATH", PATH,
                "--setenv", "HOME", SANDBOX_DIR,
                "--setenv", "LANG", "C.UTF-8",
                "--setenv", "TMPDIR", "/tmp");
        if (egressDir != null) {
            SandboxForwarder.proxyEnvironment().forEach((k, v) -> add(a, "--setenv", k, v));
            if (ca) {
                SandboxForwarder.caEnvironment().forEach((k, v) -> add(a, "--setenv", k, v));
            }
        }
        env.forEach((k, v) -> add(a, "--setenv", k, v));
        add(a, "--ro-bind", "/usr", "/usr");
        for (String d : new String[] {"bin", "sbin", "lib", "lib64"}) {
            if (s.mergedUsr()) {
                add(a, "--symlink", "usr/" + d, "/" + d);
            } else {
                add(a, "--ro-bind-try", "/" + d, "/" + d);
            }
        }
        Path etc = root.resolve("etc");
        add(a, "--dir", "/etc");
        add(a, "--ro-bind", etc.resolve("passwd").toString(), "/etc/passwd");
        add(a, "--ro-bind", etc.resolve("group").toString(), "/etc/group");
        add(a, "--ro-bind", etc.resolve("nsswitch.conf").toString(), "/etc/nsswitch.conf");
        if (shareNet) {
            add(a, "--ro-bind-try", "/etc/hosts", "/etc/hosts");
            add(a, "--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf");
        } else {
            add(a, "--ro-bind", etc.resolve("hosts").toString(), "/etc/hosts");
        }
        // public, non-secret files programs expect (/etc/ssl/certs, not /etc/ssl: /etc/ssl/private holds keys)
        for (String f : new String[] {"ld.so.cache", "alternatives", "localtime", "ssl/certs", "ssl/openssl.cnf",
                "protocols", "services"}) {
            add(a, "--ro-bind-try", "/etc/" + f, "/etc/" + f);
        }
        add(a, "--proc", "/proc", "--dev", "/dev");
        // key descriptions of the caller's keyrings (the calls are denied by seccomp; this is the listing)
        // (an empty regular file: a device node would be refused on proc's nodev mount)
        String empty = etc.resolve("empty").toString();
        add(a, "--ro-bind-try", empty, "/proc/keys", "--ro-bind-try", empty, "/proc/key-users");
        Path fs = root.resolve(SandboxDirs.FS);
        if (diskBounded) {
            add(a, "--bind", fs.resolve(SandboxDirs.TMP).toString(), "/tmp");
            add(a, "--bind", fs.resolve(SandboxDirs.SHM).toString(), "/dev/shm");
        } else {
            add(a, "--size", Long.toString(s.tmpSizeBytes()), "--tmpfs", "/tmp");
            add(a, "--size", Long.toString(s.tmpSizeBytes()), "--tmpfs", "/dev/shm");
        }
        add(a, "--bind", fs.resolve(SandboxDirs.WORK).toString(), SANDBOX_DIR, "--chdir", SANDBOX_DIR);
        add(a, "--ro-bind", root.resolve(SandboxDirs.INIT).toString(), INIT_PATH);
        if (egressDir != null) {
            add(a, "--ro-bind", egressDir.toString(), SandboxForwarder.MOUNT);
        }
        // bwrap's / and /dev are tmpfs mounts without a size limit: read-only once everything is in place
        // (not recursive, so /dev/shm and the binds stay writable)
        add(a, "--remount-ro", "/dev", "--remount-ro", "/");
        return a;
    }

    /**
     * The command after bwrap's {@code --}: the init (PID 1) runs prlimit, which applies the limits
     * inside the sandbox's user namespace (so RLIMIT_NPROC counts this sandbox's processes only), then
     * execs the interpreter.
     */
    public static List<String> command(LocalSettings s, long cpuSeconds, List<String> interpreter) {
        return command(s, cpuSeconds, interpreter, null);
    }

    /**
     * As {@link #command(LocalSettings, long, List)}; with {@code proxySocket} (a path inside the
     * sandbox) the init first starts the {@link SandboxForwarder} to it, then runs the same command.
     */
    public static List<String> command(LocalSettings s, long cpuSeconds, List<String> interpreter, String proxySocket) {
        List<String> a = new ArrayList<>();
        if (proxySocket == null) {
            add(a, INIT_PATH, "-c", INIT_SCRIPT, "sandbox4j-init");
        } else {
            add(a, INIT_PATH, "-c", INIT_FORWARD_SCRIPT, "sandbox4j-init", s.python().toString(), SandboxForwarder.SOURCE,
                    Integer.toString(SandboxForwarder.PORT), proxySocket);
        }
        add(a, s.prlimit().toString(),
                "--cpu=" + cpuSeconds + ":" + (cpuSeconds + 1),
                "--as=" + s.addressSpaceBytes(),
                "--fsize=" + s.fileSizeBytes(),
                "--nproc=" + s.maxProcesses(),
                "--nofile=" + s.maxOpenFiles(),
                "--core=0",
                "--");
        a.addAll(interpreter);
        return a;
    }

    /** The interpreter, as a program path. */
    public static Path interpreterPath(LocalSettings s, Language language) {
        switch (language) {
            case PYTHON: return s.python();
            case JAVASCRIPT: return s.node();
            case BASH: return s.bash();
            default: throw new IllegalArgumentException("unknown language " + language);
        }
    }

    /** {@code python3 -c CODE}, {@code node -e CODE} or {@code bash -c CODE}. */
    public static List<String> inlineCode(LocalSettings s, Language language, String code) {
        String flag = language == Language.JAVASCRIPT ? "-e" : "-c";
        return List.of(interpreterPath(s, language).toString(), flag, code);
    }

    /** The fixed command that runs code written to {@code file} (a path inside the sandbox). */
    public static List<String> fileCode(LocalSettings s, Language language, String file) {
        return List.of(interpreterPath(s, language).toString(), file);
    }

    /** File name for code that goes by file; in the work dir so imports and requires resolve as with -c / -e. */
    public static String codeFileName(Language language, String suffix) {
        String ext = language == Language.PYTHON ? ".py" : language == Language.JAVASCRIPT ? ".cjs" : ".sh";
        return ".sandbox4j-code-" + suffix + ext;
    }

    /**
     * Whether code must go by file: a NUL byte (impossible in argv), more than {@link #MAX_ARGV_CODE_BYTES},
     * or non-ASCII text when the JVM does not encode argv as UTF-8.
     */
    public static boolean needsFile(LocalSettings s, String code) {
        if (code.indexOf('\0') >= 0) {
            return true;
        }
        if (!s.argvIsUtf8() && !code.chars().allMatch(c -> c < 0x80)) {
            return true;
        }
        // a char is at most 3 UTF-8 bytes (a surrogate pair is 4 bytes for 2 chars)
        if ((long) code.length() * 3 <= MAX_ARGV_CODE_BYTES) {
            return false;
        }
        return code.getBytes(StandardCharsets.UTF_8).length > MAX_ARGV_CODE_BYTES;
    }

    /** The options NUL-separated, for {@code --args 0}. A NUL inside an option is refused (it would split it). */
    public static byte[] encode(List<String> options) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(4096);
        for (String o : options) {
            if (o.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("a sandbox option contains a NUL character");
            }
            byte[] b = o.getBytes(StandardCharsets.UTF_8);
            out.write(b, 0, b.length);
            out.write(0);
        }
        return out.toByteArray();
    }

    private static void add(List<String> a, String... items) {
        a.addAll(List.of(items));
    }
}
