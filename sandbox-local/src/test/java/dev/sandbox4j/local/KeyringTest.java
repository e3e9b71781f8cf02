package dev.sandbox4j.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sandbox4j.local.internal.SeccompFilter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Finding 1 as the review did it: the JVM runs in a session keyring holding a secret (as on a desktop,
 * where it holds Kerberos tickets and disk keys); code in the sandbox tries to read it and to plant a key.
 */
class KeyringTest {
    @Test
    void theCallersSessionKeyringCannotBeReadOrWrittenFromInside() throws Exception {
        Path python = Path.of("/usr/bin/python3");
        assumeTrue(Files.isExecutable(python), "needs /usr/bin/python3 to call keyctl from the test JVM's side");
        assumeTrue(SeccompFilter.Arch.of(System.getProperty("os.arch")).isPresent(),
                () -> "no syscall table for " + System.getProperty("os.arch") + " (the runner refuses to start there)");
        SeccompFilter.Arch arch = SeccompFilter.Arch.of(System.getProperty("os.arch")).orElseThrow();
        Path workRoot = TestDirs.workRoot();
        try {
            // a host helper: joins a new session keyring, adds the secret, runs the JVM inside it, then looks
            // for a key the sandbox planted
            String helper = "import ctypes, subprocess, sys\n"
                    + "libc = ctypes.CDLL(None, use_errno=True)\n"
                    + "libc.syscall.restype = ctypes.c_long\n"
                    + "KEYCTL = " + arch.number("keyctl") + "\n"
                    + "assert libc.syscall(ctypes.c_long(KEYCTL), ctypes.c_long(1), b'sandbox4j-test-session') >= 0\n"
                    + "assert libc.syscall(ctypes.c_long(" + arch.number("add_key") + "), b'user', b'sandbox4j-host-secret',"
                    + " b'kerberos-ticket', ctypes.c_long(15), ctypes.c_long(-3)) >= 0\n"
                    + "r = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)\n"
                    + "sys.stdout.write(r.stdout.decode())\n"
                    + "k = libc.syscall(ctypes.c_long(KEYCTL), ctypes.c_long(10), ctypes.c_long(-3), b'user',"
                    + " b'sandbox4j-planted', ctypes.c_long(0))\n"
                    + "print('host sees planted key', k >= 0)\n";
            Path java = Path.of(System.getProperty("java.home"), "bin", "java");
            Process p = new ProcessBuilder(python.toString(), "-c", helper, java.toString(), "-cp",
                    System.getProperty("java.class.path"), KeyringMain.class.getName(), workRoot.toString())
                    .redirectErrorStream(true).start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(120, TimeUnit.SECONDS));
            assertEquals(0, p.exitValue(), out);
            assertEquals("search EPERM\nplant EPERM\nhost sees planted key False\n", out);
        } finally {
            TestDirs.delete(workRoot);
        }
    }
}
