package dev.sandbox4j.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.local.internal.LocalSettings;
import dev.sandbox4j.local.internal.SeccompFilter;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The findings of the hostile-code review (issue 17), each tried from inside a local sandbox. */
class LocalContainmentTest {
    private static final boolean X86_64 = SeccompFilter.Arch.of(System.getProperty("os.arch")).orElse(null)
            == SeccompFilter.Arch.X86_64;
    private Path workRoot;
    private LocalSandboxRunner runner;

    @BeforeEach
    void createRunner() throws IOException {
        workRoot = TestDirs.workRoot();
        runner = LocalSandboxRunner.builder().workRoot(workRoot).maxAddressSpaceMib(2048).build();
    }

    @AfterEach
    void nothingLeft() throws IOException {
        try {
            assertEquals(0, TestDirs.entries(workRoot), "sandbox directories left behind");
        } finally {
            TestDirs.delete(workRoot);
        }
    }

    private RunResult python(Sandbox s, String code) {
        return s.exec(Execution.builder(code).budget(Duration.ofSeconds(60)).build());
    }

    /** Finding 1: every call the filter names fails with EPERM from inside, clone3 with ENOSYS. */
    @Test
    void everyDeniedSystemCallFailsFromInside() {
        SeccompFilter.Arch arch = SeccompFilter.Arch.of(System.getProperty("os.arch")).orElseThrow();
        String numbers = SeccompFilter.DENIED.stream().map(n -> "('" + n + "', " + arch.number(n) + ")")
                .collect(Collectors.joining(", "));
        String code = "import ctypes, errno, os\n"
                + "libc = ctypes.CDLL(None, use_errno=True)\n"
                + "libc.syscall.restype = ctypes.c_long\n"
                + "def call(nr, *args):\n"
                + "    ctypes.set_errno(0)\n"
                + "    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])\n"
                + "    return 'ok' if r >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))\n"
                // arguments that would be harmless (or fail with EINVAL/EFAULT) were the call allowed
                + "for name, nr in [" + numbers + "]:\n"
                + "    print(name, call(nr, 0, 0, 0, 0, 0))\n"
                + "print('clone3', call(" + arch.number("clone3") + ", 0, 0))\n"
                + "print('clone-newuser', call(" + arch.number("clone") + ", 0x10000000 | 17, 0, 0, 0, 0))\n"
                + "print('clone-newnet', call(" + arch.number("clone") + ", 0x40000000 | 17, 0, 0, 0, 0))\n"
                + "pid = os.fork()\n"
                + "if pid == 0:\n"
                + "    os._exit(7)\n"
                + "print('fork', os.waitpid(pid, 0)[1] >> 8)\n"
                + "print('keyring', call(" + arch.number("keyctl") + ", 0, -3, 1))\n"
                + "print('proc-keys', repr(open('/proc/keys').read()))\n";
        try (Sandbox s = runner.open(SandboxSpec.defaults())) {
            RunResult r = python(s, code);
            assertTrue(r.succeeded(), r + r.stderr());
            for (String name : SeccompFilter.DENIED) {
                assertTrue(r.stdout().contains("\n" + name + " EPERM\n") || r.stdout().startsWith(name + " EPERM\n"),
                        name + " must fail with EPERM:\n" + r.stdout());
            }
            assertTrue(r.stdout().contains("clone3 ENOSYS\n"), r.stdout());
            assertTrue(r.stdout().contains("clone-newuser EPERM\n"), r.stdout());
            assertTrue(r.stdout().contains("clone-newnet EPERM\n"), r.stdout());
            assertTrue(r.stdout().contains("fork 7\n"), "a plain fork (clone without namespace flags) works: " + r.stdout());
            assertTrue(r.stdout().contains("keyring EPERM\n"), "the caller's session keyring is unreachable: " + r.stdout());
            assertTrue(r.stdout().contains("proc-keys ''\n"), "no listing of the caller's keys: " + r.stdout());
        }
    }

    /** Finding 1: 32-bit (int 0x80) and x32 system calls on x86_64 are refused too. */
    /**
     * Issue 27, finding 4: only the families of {@link SeccompFilter#ALLOWED_SOCKET_FAMILIES} open;
     * AF_VSOCK (whose port space is the host's, whatever the network namespace) and the rest fail.
     */
    @Test
    void onlyTheAllowedSocketFamiliesOpen() {
        StringBuilder code = new StringBuilder("import errno, socket\n"
                + "def tryopen(name, fam):\n"
                + "    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_RAW, socket.SOCK_SEQPACKET):\n"
                + "        try:\n"
                + "            socket.socket(fam, kind, 0).close()\n"
                + "            return 'ok'\n"
                + "        except OSError as e:\n"
                + "            if e.errno in (errno.EAFNOSUPPORT,):\n"
                + "                return 'EAFNOSUPPORT'\n"
                + "            last = errno.errorcode.get(e.errno, str(e.errno))\n"
                + "    return last\n");
        SeccompFilter.ALLOWED_SOCKET_FAMILIES.forEach((n, f) -> code.append("print('" + n + "', tryopen('" + n + "', " + f + "))\n"));
        SeccompFilter.EXAMPLE_DENIED_SOCKET_FAMILIES.forEach((n, f) -> code.append("print('" + n + "', tryopen('" + n + "', " + f + "))\n"));
        code.append("try:\n    socket.socketpair(socket.AF_UNIX)\n    print('socketpair AF_UNIX ok')\n"
                + "except OSError as e:\n    print('socketpair AF_UNIX', errno.errorcode[e.errno])\n");
        try (Sandbox s = runner.open(SandboxSpec.defaults())) {
            RunResult r = python(s, code.toString());
            assertTrue(r.succeeded(), r + r.stderr());
            for (String n : SeccompFilter.ALLOWED_SOCKET_FAMILIES.keySet()) {
                assertTrue(r.stdout().contains(n + " ok\n"), n + " opens: " + r.stdout());
            }
            for (String n : SeccompFilter.EXAMPLE_DENIED_SOCKET_FAMILIES.keySet()) {
                assertTrue(r.stdout().contains(n + " EAFNOSUPPORT\n"), n + " is denied: " + r.stdout());
            }
            assertTrue(r.stdout().contains("socketpair AF_UNIX ok\n"), r.stdout());
        }
    }

    @Test
    void foreignAbisAreRefusedOnX8664() {
        assumeTrue(X86_64, "x86_64 only");
        String code = "import ctypes, mmap, errno\n"
                // mov eax, 20 (getpid in the i386 table); int 0x80; ret
                + "m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)\n"
                + "m.write(bytes([0xb8, 20, 0, 0, 0, 0xcd, 0x80, 0xc3]))\n"
                + "f = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))\n"
                + "print('i386', f())\n"
                + "libc = ctypes.CDLL(None, use_errno=True)\n"
                + "r = libc.syscall(ctypes.c_long(0x40000000 | 39))\n"
                + "print('x32', r, errno.errorcode.get(ctypes.get_errno()))\n";
        try (Sandbox s = runner.open(SandboxSpec.defaults())) {
            RunResult r = python(s, code);
            assertTrue(r.succeeded(), r + r.stderr());
            assertTrue(r.stdout().contains("i386 -1\n"), "int 0x80 getpid returns -EPERM: " + r.stdout());
            assertTrue(r.stdout().contains("x32 -1 EPERM\n"), r.stdout());
        }
    }

    /** Finding 2: / and /dev are read-only; /sandbox, /tmp and /dev/shm are writable. */
    @Test
    void rootAndDevAreReadOnly() {
        String code = "import errno\n"
                + "def w(p):\n"
                + "    try:\n"
                + "        open(p, 'wb').write(b'x')\n"
                + "        return 'ok'\n"
                + "    except OSError as e:\n"
                + "        return errno.errorcode[e.errno]\n"
                + "for p in ['/evil', '/etc/evil', '/dev/evil', '/proc/evil', '/sandbox/ok', '/tmp/ok', '/dev/shm/ok']:\n"
                + "    print(p, w(p))\n"
                + "print('null', w('/dev/null'))\n";
        try (Sandbox s = runner.open(SandboxSpec.defaults())) {
            RunResult r = python(s, code);
            assertTrue(r.succeeded(), r + r.stderr());
            for (String p : List.of("/evil", "/etc/evil", "/dev/evil")) {
                assertTrue(r.stdout().contains(p + " EROFS\n"), p + ": " + r.stdout());
            }
            assertFalse(r.stdout().contains("/proc/evil ok"), r.stdout());
            for (String p : List.of("/sandbox/ok", "/tmp/ok", "/dev/shm/ok", "null")) {
                assertTrue(r.stdout().contains(p + " ok\n"), p + ": " + r.stdout());
            }
        }
    }

    /** Finding 7: stdin is empty (end of file at once) for every language, not closed. */
    @Test
    void stdinReadsAsEmptyInEveryLanguage() {
        try (Sandbox s = runner.open(SandboxSpec.defaults())) {
            RunResult py = python(s, "import sys\nprint(repr(sys.stdin.read()))\n"
                    + "try:\n    input()\nexcept EOFError:\n    print('EOFError')\n");
            assertEquals("''\nEOFError\n", py.stdout(), py.stderr());
            RunResult sh = s.exec(Execution.builder("if read -r line; then echo got; else echo eof; fi; cat; echo done")
                    .language(Language.BASH).build());
            assertEquals("eof\ndone\n", sh.stdout(), sh.stderr());
            if (runner.capabilities().supports(Language.JAVASCRIPT)) {
                RunResult js = s.exec(Execution.builder("console.log(require('fs').readFileSync(0).length)")
                        .language(Language.JAVASCRIPT).build());
                assertEquals("0\n", js.stdout(), js.stderr());
            }
            RunResult fds = python(s, "import os\nprint(sorted(os.listdir('/proc/self/fd')))\n");
            assertEquals("['0', '1', '2', '3']\n", fds.stdout(), "only stdin, stdout, stderr (and listdir's own fd): "
                    + fds.stderr());
        }
    }

    /**
     * Finding 3: code swapping a directory and a symlink to a host directory (renameat2 RENAME_EXCHANGE)
     * in a loop while the JVM writes files into that directory never gets a file written on the host.
     */
    @Test
    void concurrentWritesCannotBeRedirectedOutOfTheSandbox() throws Exception {
        assumeTrue(X86_64, "renameat2's number below is x86_64's");
        Path host = Files.createTempDirectory("sandbox4j-host-target-");
        try (LocalSandbox s = runner.openLocal(SandboxSpec.defaults())) {
            String code = "import ctypes, os\n"
                    + "libc = ctypes.CDLL(None, use_errno=True)\n"
                    + "os.mkdir('d')\n"
                    + "os.symlink('" + host + "', 'l')\n"
                    + "open('ready', 'w').close()\n"
                    + "n = 0\n"
                    + "while not os.path.exists('stop'):\n"
                    + "    libc.syscall(316, -100, b'd', -100, b'l', 2)\n" // renameat2(AT_FDCWD, d, AT_FDCWD, l, RENAME_EXCHANGE)
                    + "    n += 1\n"
                    + "print('swaps', n)\n";
            CompletableFuture<RunResult> exec = CompletableFuture.supplyAsync(
                    () -> s.exec(Execution.builder(code).budget(Duration.ofSeconds(120)).build()));
            Path ready = s.workDirectory().resolve("ready");
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!Files.exists(ready) && !exec.isDone() && System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            assertTrue(Files.exists(ready), "the swapping code started");
            int written = 0;
            for (int i = 0; i < 400; i++) {
                try {
                    s.writeFile("d/f" + i, "x".getBytes(StandardCharsets.UTF_8));
                    written++;
                } catch (RuntimeException refused) {
                    // a component was a symlink at that moment: refusing is the contained outcome
                }
            }
            s.writeFile("stop", new byte[0]);
            RunResult r = exec.get(120, TimeUnit.SECONDS);
            assertTrue(r.stdout().startsWith("swaps "), r + r.stderr());
            try (var files = Files.list(host)) {
                assertEquals(List.of(), files.toList(), "files written into the host directory (" + written + " writes)");
            }
        } finally {
            TestDirs.delete(host);
        }
    }

    /** Findings 3 and 4: the work directory, /tmp and /dev/shm share one bounded file system, inodes included. */
    @Test
    void diskAndInodesAreBoundedForTheWholeSandboxAcrossExecs() throws IOException {
        assumeTrue(runner.capabilities().limits().contains(Capabilities.Limit.DISK), "needs root: " + runner.enforcement());
        String fill = "import errno, os\n"
                + "def fill(d, tag):\n"
                + "    n = 0\n"
                + "    try:\n"
                + "        for i in range(64):\n"
                + "            with open('%s/%s%d' % (d, tag, i), 'wb') as f:\n"
                + "                f.write(b'x' * (8 << 20))\n"
                + "            n += 8\n"
                + "    except OSError as e:\n"
                + "        return '%d MiB then %s' % (n, errno.errorcode[e.errno])\n"
                + "    return '%d MiB' % n\n";
        try (LocalSandbox s = runner.openLocal(SandboxSpec.builder().limits(Limits.builder().diskMib(64).build()).build())) {
            FileStore fs = Files.getFileStore(s.workDirectory());
            assertNotEquals(Files.getFileStore(workRoot), fs, "the work directory is not on the host's file system");
            assertEquals(64L << 20, fs.getTotalSpace());
            RunResult first = python(s, fill + "print('work', fill('/sandbox', 'w'))\n");
            assertTrue(first.stdout().matches("work (56|64) MiB then ENOSPC\n"), first + first.stderr());
            RunResult second = python(s, fill + "print('tmp', fill('/tmp', 't'))\nprint('shm', fill('/dev/shm', 's'))\n");
            // the files of the first exec are kept, so nothing is left for /tmp and /dev/shm
            assertTrue(second.stdout().matches("tmp 0 MiB then ENOSPC\nshm 0 MiB then ENOSPC\n"), second + second.stderr());
            RunResult clean = python(s, "import glob, os\nfor f in glob.glob('/sandbox/w*'):\n    os.remove(f)\n"
                    + "n = 0\n"
                    + "try:\n"
                    + "    while n < 200000:\n"
                    + "        open('/tmp/i%d' % n, 'w').close()\n"
                    + "        n += 1\n"
                    + "except OSError as e:\n"
                    + "    print('inodes', n, e.strerror)\n");
            assertTrue(clean.stdout().startsWith("inodes "), clean + clean.stderr());
            int inodes = Integer.parseInt(clean.stdout().split(" ")[1]);
            assertTrue(inodes < 5000, "inode count bounded (4096 for 64 MiB): " + clean.stdout());
        }
    }

    /** Finding 5: memory is bounded for the whole sandbox: three processes cannot together exceed it. */
    @Test
    void memoryIsBoundedAcrossProcesses() throws IOException {
        assumeTrue(runner.capabilities().limits().contains(Capabilities.Limit.MEMORY), "needs root and cgroup v1: "
                + runner.enforcement());
        String name;
        try (LocalSandbox s = runner.openLocal(SandboxSpec.builder().limits(Limits.builder().memoryMib(256).build()).build())) {
            name = s.workDirectory().getParent().getParent().getFileName().toString();
            RunResult r = python(s, ThreeHogs.CODE);
            assertTrue(r.succeeded(), r + r.stderr());
            int held = Integer.parseInt(r.stdout().strip().replace("held ", ""));
            assertTrue(held < 3, "three processes of 150 MiB each under a 256 MiB sandbox: " + r.stdout());
        }
        // this sandbox's own cgroup (other JVMs on the machine may share the parent with theirs)
        try (var found = Files.find(Path.of("/sys/fs/cgroup"), 8, (p, a) -> a.isDirectory()
                && p.getFileName() != null && p.getFileName().toString().equals(name))) {
            assertEquals(List.of(), found.toList(), "the sandbox's cgroup is removed once it is closed");
        }
    }

    /** Limits.vcpus becomes a CFS quota on the sandbox's own cpu cgroup, removed with the sandbox. */
    @Test
    void aVcpuLimitIsACpuQuotaOnTheSandboxsCgroup() throws IOException {
        assumeTrue(runner.capabilities().limits().contains(Capabilities.Limit.VCPUS), "needs root and cgroup v1 cpu: "
                + runner.enforcement());
        Path cgroup;
        try (LocalSandbox s = runner.openLocal(SandboxSpec.builder().limits(Limits.builder().vcpus(1).build()).build())) {
            String name = s.workDirectory().getParent().getParent().getFileName().toString();
            try (var found = Files.find(Path.of("/sys/fs/cgroup/cpu"), 6, (p, a) -> a.isDirectory()
                    && p.getFileName() != null && p.getFileName().toString().equals(name))) {
                cgroup = found.findFirst().orElseThrow();
            }
            assertEquals("100000", Files.readString(cgroup.resolve("cpu.cfs_quota_us")).strip());
            assertEquals("100000", Files.readString(cgroup.resolve("cpu.cfs_period_us")).strip());
            RunResult r = python(s, "import os\nprint(open('/proc/self/cgroup').read().count(':'))\n");
            assertTrue(r.succeeded(), r + r.stderr());
        }
        assertFalse(Files.exists(cgroup), "removed with the sandbox");
    }

    /**
     * Without root (and so without the kernel's whole-sandbox limits) nothing is claimed that is not
     * enforced: the lifetime, and the network allowance its egress proxy counts, which needs no root.
     */
    @Test
    void perProcessLimitsOnlyClaimNothingMore() {
        LocalSandboxRunner plain = LocalSandboxRunner.builder().workRoot(workRoot).kernelLimits(false).build();
        assertEquals(java.util.Set.of(Capabilities.Limit.LIFETIME, Capabilities.Limit.NETWORK), plain.capabilities().limits());
        String all = String.join("\n", plain.enforcement());
        assertTrue(all.contains("disk: not bounded per sandbox") && all.contains("memory: not bounded per sandbox"), all);
        RunResult r = plain.run(dev.sandbox4j.api.RunRequest.python("open('/sandbox/x', 'w').write('y'); print('ok')"));
        assertEquals("ok\n", r.stdout(), r.stderr());
    }

    /** Memory hog code shared with nothing else: three children each hold 150 MiB until the parent lets go. */
    static final class ThreeHogs {
        static final String CODE = "import subprocess, sys\n"
                + "child = ('import sys\\n'\n"
                + "    'b = bytearray(150 << 20)\\n'\n"
                + "    'for i in range(0, len(b), 4096): b[i] = 1\\n'\n"
                + "    'print(\"held\", flush=True)\\n'\n"
                + "    'sys.stdin.read()\\n')\n"
                + "ps = [subprocess.Popen([sys.executable, '-c', child], stdin=subprocess.PIPE, stdout=subprocess.PIPE)"
                + " for _ in range(3)]\n"
                + "lines = [p.stdout.readline().strip() for p in ps]\n"
                // the ones still alive now all hold their 150 MiB at once (they block on stdin)
                + "held = sum(1 for p, l in zip(ps, lines) if l == b'held' and p.poll() is None)\n"
                + "for p in ps:\n"
                + "    try:\n"
                + "        p.stdin.close()\n"
                + "    except OSError:\n"
                + "        pass\n"
                + "    p.wait()\n"
                + "print('held', held)\n";

        private ThreeHogs() {
        }
    }

    static boolean root() {
        return LocalSettings.jvmIsRoot();
    }
}
