package dev.sandbox4j.local;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.local.internal.SeccompFilter;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.TreeSet;

/** Runs the local runner in a JVM that is not root (for {@link NonRootTest}) and prints what it saw. */
public final class NonRootMain {
    private NonRootMain() {
    }

    public static void main(String[] args) throws Exception {
        Path workRoot = Path.of(args[0]);
        int keyctl = SeccompFilter.Arch.of(System.getProperty("os.arch")).orElseThrow().number("keyctl");
        try (LocalSandboxRunner runner = LocalSandboxRunner.builder().workRoot(workRoot).build()) {
            System.out.println("limits " + new TreeSet<>(runner.capabilities().limits()));
            try {
                runner.open(SandboxSpec.builder().limits(Limits.builder().memoryMib(256).build()).build()).close();
                System.out.println("memory accepted");
            } catch (UnsupportedPolicyException e) {
                System.out.println("memory refused");
            }
            try (LocalSandbox s = runner.openLocal(SandboxSpec.defaults())) {
                s.writeFile("in/x.txt", "from the jvm".getBytes(StandardCharsets.UTF_8));
                RunResult r = s.exec(Execution.python("import ctypes, errno, os, sys\n"
                        + "libc = ctypes.CDLL(None, use_errno=True)\n"
                        + "r = libc.syscall(" + keyctl + ", 0, -3, 1)\n"
                        + "print('keyctl', errno.errorcode.get(ctypes.get_errno()) if r < 0 else r)\n"
                        + "try:\n    open('/evil', 'w')\n    print('root writable')\nexcept OSError as e:\n"
                        + "    print('root', errno.errorcode[e.errno])\n"
                        + "print('stdin', repr(sys.stdin.read()))\n"
                        + "print('file', open('in/x.txt').read())\n"));
                System.out.print(r.stdout());
                System.out.print(r.stderr());
            }
        }
        try (var l = Files.list(workRoot)) {
            System.out.println("left " + l.count());
        }
    }
}
