package dev.sandbox4j.local;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.local.internal.SeccompFilter;
import java.nio.file.Path;

/**
 * Started (by {@link KeyringTest}) from a process that holds a session keyring with a secret key:
 * runs the review's keyring attack in a sandbox and prints what it got.
 */
public final class KeyringMain {
    private KeyringMain() {
    }

    public static void main(String[] args) {
        SeccompFilter.Arch arch = SeccompFilter.Arch.of(System.getProperty("os.arch")).orElseThrow();
        String code = "import ctypes, errno\n"
                + "libc = ctypes.CDLL(None, use_errno=True)\n"
                + "libc.syscall.restype = ctypes.c_long\n"
                + "def err():\n"
                + "    return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))\n"
                // KEYCTL_SEARCH (10) in the session keyring (-3), then KEYCTL_READ (11)
                + "k = libc.syscall(ctypes.c_long(" + arch.number("keyctl") + "), ctypes.c_long(10), ctypes.c_long(-3),"
                + " b'user', b'sandbox4j-host-secret', ctypes.c_long(0))\n"
                + "if k < 0:\n"
                + "    print('search', err())\n"
                + "else:\n"
                + "    buf = ctypes.create_string_buffer(64)\n"
                + "    n = libc.syscall(ctypes.c_long(" + arch.number("keyctl") + "), ctypes.c_long(11), ctypes.c_long(k), buf,"
                + " ctypes.c_long(64))\n"
                + "    print('read', buf.raw[:n].decode() if n >= 0 else err())\n"
                + "p = libc.syscall(ctypes.c_long(" + arch.number("add_key") + "), b'user', b'sandbox4j-planted', b'x',"
                + " ctypes.c_long(1), ctypes.c_long(-3))\n"
                + "print('plant', 'ok' if p >= 0 else err())\n";
        try (LocalSandboxRunner runner = LocalSandboxRunner.builder().workRoot(Path.of(args[0])).build()) {
            RunResult r = runner.run(RunRequest.of(SandboxSpec.defaults(), Execution.python(code)));
            System.out.print(r.stdout());
            System.out.print(r.stderr());
        }
    }
}
