package dev.sandbox4j.local.internal;

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
 *   <li>the launcher argv: {@code [setpriv --reuid=... --] bwrap --args 0};</li>
 *   <li>the bwrap options, sent NUL-separated on bwrap's stdin ({@code --args 0}), so env values and
 *       host paths arrive byte for byte whatever the JVM's locale, and stay out of {@code /proc/1/cmdline};</li>
 *   <li>the command argv after {@code --}: {@code prlimit ... -- python3 -c CODE} (bwrap takes the
 *       command only from its real argv).</li>
 * </ol>
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

    private BwrapCommand() {
    }

    /** What runs on the host: setpriv (when the JVM is root) then bwrap reading its options from stdin. */
    public static List<String> launcher(LocalSettings s) {
        List<String> a = new ArrayList<>();
        if (s.dropPrivileges()) {
            // as host root, RLIMIT_NPROC would not be enforced (the kernel exempts uid 0)
            a.add(s.setpriv().toString());
            a.add("--reuid=" + s.dropUid());
            a.add("--regid=" + s.dropGid());
            a.add("--clear-groups");
            a.add("--no-new-privs");
            a.add("--");
        }
        a.add(s.bwrap().toString());
        a.add("--args");
        a.add("0");
        return a;
    }

    /**
     * The bwrap options for one execution.
     *
     * @param root the sandbox's host directory (with {@code work/} and {@code etc/})
     * @param shareNet true for allow-all egress (the host's network), false for deny-all (own, empty netns)
     * @param env the spec's environment, set after the defaults (so it may override them)
     */
    public static List<String> options(LocalSettings s, Path root, boolean shareNet, Map<String, String> env) {
        List<String> a = new ArrayList<>();
        // --disable-userns needs an explicit --unshare-user (--unshare-all only tries it)
        add(a, "--unshare-all", "--unshare-user", "--disable-userns");
        if (shareNet) {
            a.add("--share-net");
        }
        add(a, "--die-with-parent", "--new-session", "--cap-drop", "ALL");
        add(a, "--hostname", "sandbox",
                "--uid", Integer.toString(LocalSettings.SANDBOX_UID), "--gid", Integer.toString(LocalSettings.SANDBOX_UID));
        add(a, "--clearenv",
                "--setenv", "PATH", PATH,
                "--setenv", "HOME", SANDBOX_DIR,
                "--setenv", "LANG", "C.UTF-8",
                "--setenv", "TMPDIR", "/tmp");
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
        add(a, "--size", Long.toString(s.tmpSizeBytes()), "--tmpfs", "/tmp");
        add(a, "--size", Long.toString(s.tmpSizeBytes()), "--tmpfs", "/dev/shm");
        add(a, "--bind", root.resolve("work").toString(), SANDBOX_DIR, "--chdir", SANDBOX_DIR);
        return a;
    }

    /**
     * The command after bwrap's {@code --}: prlimit applies the limits inside the sandbox's user
     * namespace (so RLIMIT_NPROC counts this sandbox's processes only), then execs the interpreter.
     */
    public static List<String> command(LocalSettings s, long cpuSeconds, List<String> interpreter) {
        List<String> a = new ArrayList<>();
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
