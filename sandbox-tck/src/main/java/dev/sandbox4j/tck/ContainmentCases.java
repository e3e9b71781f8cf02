package dev.sandbox4j.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Contract cases. Containment: fork bombs, memory, the keyring, read-only roots, stdin, the disk bound. Part of {@link SandboxRunnerContract}.
 *
 * @since 0.1.0
 */
public interface ContainmentCases extends ContractContext {
    /**
     * Bash runs the fork bomb {@code :(){ :|:& };:} and then an endless loop, under a 3 s budget and an
     * output limit of 2,000. Fails when the run succeeds (the loop never ends, so it cannot exit 0), when
     * it comes back later than the budget plus {@link #timeoutGrace()} plus 8 s, when the leak count is not
     * back to its baseline right after it, or when a following {@code echo still here} in a fresh sandbox
     * does not exit 0. Skipped without {@code Language.BASH}.
     */
    @Test
    default void aForkBombIsContained() {
        requireLanguage(Language.BASH);
        Duration budget = Duration.ofSeconds(3);
        long t0 = System.nanoTime();
        RunResult r = run(SandboxSpec.defaults(), Execution.builder(":(){ :|:& };:\nwhile :; do :; done")
                .language(Language.BASH).budget(budget).outputLimit(2_000).build());
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertFalse(r.succeeded(), "a fork bomb cannot finish normally: " + r);
        assertTrue(took.compareTo(budget.plus(timeoutGrace()).plusSeconds(8)) <= 0, "took " + took.toMillis() + " ms");
        assertLeakCountBackToBaseline();
        assertExited(run(SandboxSpec.defaults(), Execution.of(Language.BASH, "echo still here")), 0);
    }

    /**
     * Python appends 64 MiB byte strings up to 128 times (8 GiB), printing {@code ALLOCATED} when all are held
     * and {@code MEMORY-ERROR} on a {@code MemoryError}, under the default spec and a 30 s budget. Fails when
     * stdout contains {@code ALLOCATED}; any other end (a {@code MemoryError}, a kill, the budget) passes. The
     * leak count must then be back to its baseline and a fresh {@code print('still here')} must exit 0.
     * Skipped without {@code Language.PYTHON}.
     */
    @Test
    default void aMemoryHogIsContained() {
        requireLanguage(Language.PYTHON);
        // touches up to 8 GiB in 64 MiB steps; a contained sandbox stops it well before
        String code = "chunks = []\n"
                + "try:\n"
                + "    for i in range(128):\n"
                + "        chunks.append(b'x' * (64 << 20))\n"
                + "    print('ALLOCATED', len(chunks))\n"
                + "except MemoryError:\n"
                + "    print('MEMORY-ERROR', len(chunks))\n";
        RunResult r = run(SandboxSpec.defaults(), Execution.builder(code).budget(Duration.ofSeconds(30)).build());
        assertFalse(r.stdout().contains("ALLOCATED"), "8 GiB were allocated in the sandbox: " + r);
        assertLeakCountBackToBaseline();
        assertExited(run(SandboxSpec.defaults(), Execution.python("print('still here')")), 0);
    }


    /** Python that calls a system call by name through ctypes, with the numbers of x86_64 and aarch64. */
    String SYSCALLS = "import ctypes, errno, platform\n"
            + "NR = {'x86_64': {'add_key': 248, 'keyctl': 250}, 'aarch64': {'add_key': 217, 'keyctl': 219}}[platform.machine()]\n"
            + "libc = ctypes.CDLL(None, use_errno=True)\n"
            + "libc.syscall.restype = ctypes.c_long\n"
            + "def call(name, *args):\n"
            + "    r = libc.syscall(ctypes.c_long(NR[name]), *[a if isinstance(a, bytes) else ctypes.c_long(a) for a in args])\n"
            + "    return r if r >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))\n";

    /**
     * A first sandbox adds a {@code user} key under a fresh name to its session keyring ({@code add_key}
     * called by number through ctypes, {@link #SYSCALLS}); a second searches its session keyring for that name
     * ({@code keyctl(KEYCTL_SEARCH)}). Fails unless both exit 0 and the search prints an error name (stdout
     * matches {@code search [A-Z]+}) rather than a key's serial. Whether the plant succeeded is not asserted
     * (its output is only quoted in the message): a sandbox that refuses {@code add_key} passes too. The
     * system-call numbers are those of x86_64 and aarch64; on another machine the code fails and so does the
     * case. Skipped without {@code Language.PYTHON}.
     */
    @Test
    default void aKeyPlantedInOneSandboxIsNotInTheNext() {
        requireLanguage(Language.PYTHON);
        String name = "sandbox4j-tck-" + Long.toHexString(System.nanoTime());
        // KEY_SPEC_SESSION_KEYRING = -3; KEYCTL_SEARCH = 10
        RunResult plant = run(SandboxSpec.defaults(), Execution.python(SYSCALLS
                + "print('add', call('add_key', b'user', b'" + name + "', b'planted', 7, -3))\n"));
        assertExited(plant, 0);
        RunResult look = run(SandboxSpec.defaults(), Execution.python(SYSCALLS
                + "print('search', call('keyctl', 10, -3, b'user', b'" + name + "', 0))\n"));
        assertExited(look, 0);
        assertTrue(look.stdout().matches("search [A-Z]+\n"), "the key planted by the first sandbox ("
                + plant.stdout().strip() + ") was found by the second: " + look.stdout());
    }

    /**
     * Python tries to create (then remove) {@code /sandbox4j-tck-probe} and {@code /dev/sandbox4j-tck-probe}.
     * Fails unless the run exits 0 with stdout exactly each path followed by {@code refused}, one a line: a
     * path that can be created prints {@code WRITABLE} instead. Skipped without {@code Language.PYTHON}.
     */
    @Test
    default void rootAndDevAreNotWritable() {
        requireLanguage(Language.PYTHON);
        RunResult r = run(SandboxSpec.defaults(), Execution.python("import os\n"
                + "for p in ['/sandbox4j-tck-probe', '/dev/sandbox4j-tck-probe']:\n"
                + "    try:\n"
                + "        open(p, 'w').close()\n"
                + "        os.remove(p)\n"
                + "        print(p, 'WRITABLE')\n"
                + "    except OSError as e:\n"
                + "        print(p, 'refused')\n"));
        assertExited(r, 0);
        assertEquals("/sandbox4j-tck-probe refused\n/dev/sandbox4j-tck-probe refused\n", r.stdout());
    }

    /**
     * Python prints the {@code repr} of all of stdin, then calls {@code input()}. Fails unless the run exits 0
     * with stdout exactly {@code ''} and {@code EOF}, one a line: stdin is empty and at its end (a stdin that
     * blocks runs into the default budget, so the run does not exit). Skipped without {@code Language.PYTHON}.
     */
    @Test
    default void stdinReadsAsEmpty() {
        requireLanguage(Language.PYTHON);
        RunResult r = run(SandboxSpec.defaults(), Execution.python("import sys\n"
                + "print(repr(sys.stdin.read()))\n"
                + "try:\n"
                + "    input()\n"
                + "except EOFError:\n"
                + "    print('EOF')\n"));
        assertExited(r, 0);
        assertEquals("''\nEOF\n", r.stdout());
    }

    /**
     * Under a disk limit of 128 MiB, Python writes 8 MiB files alternately into the working directory and
     * {@code /tmp}, up to twice the bound (32 files, a 60 s budget), and at the first {@code OSError} prints
     * {@code refused after N} and the error's name, N being the MiB of files completed. Fails unless the run
     * exits 0, stdout starts with {@code refused after } (all 256 MiB written fails it) and N is at most 128.
     * Skipped without {@code Limit.DISK} or {@code Language.PYTHON}.
     */
    @Test
    default void writingPastTheDiskBoundFails() {
        requireLimit(Capabilities.Limit.DISK);
        requireLanguage(Language.PYTHON);
        int mib = 128;
        // up to twice the bound, in 8 MiB files, spread over the working directory and /tmp
        RunResult r = run(SandboxSpec.builder().limits(Limits.builder().diskMib(mib).build()).build(),
                Execution.builder("import errno, os\n"
                        + "n = 0\n"
                        + "try:\n"
                        + "    for i in range(" + 2 * mib / 8 + "):\n"
                        + "        d = '.' if i % 2 == 0 else '/tmp'\n"
                        + "        with open('%s/tck-fill-%d' % (d, i), 'wb') as f:\n"
                        + "            f.write(b'x' * (8 << 20))\n"
                        + "        n += 8\n"
                        + "    print('WROTE', n)\n"
                        + "except OSError as e:\n"
                        + "    print('refused after', n, errno.errorcode[e.errno])\n").budget(Duration.ofSeconds(60)).build());
        assertExited(r, 0);
        assertTrue(r.stdout().startsWith("refused after "), "wrote twice the disk bound of " + mib + " MiB: " + r.stdout());
        int wrote = Integer.parseInt(r.stdout().split(" ")[2]);
        assertTrue(wrote <= mib, "wrote " + wrote + " MiB under a bound of " + mib);
    }

    /**
     * Under a memory limit of 512 MiB, Python starts three children that each touch 250 MiB, print
     * {@code held} and wait on stdin; it counts those that printed {@code held} and are still alive, then lets
     * them go. Fails unless the run exits 0 printing {@code held 0}, {@code held 1} or {@code held 2} (all
     * three holding 750 MiB fails it), and the leak count is back to its baseline right after. Skipped without
     * {@code Limit.MEMORY} or {@code Language.PYTHON}.
     */
    @Test
    default void memoryIsBoundedAcrossThreeProcesses() {
        requireLimit(Capabilities.Limit.MEMORY);
        requireLanguage(Language.PYTHON);
        // three children touch 250 MiB each and hold it until the parent lets go: under 512 MiB at most two survive
        String code = "import subprocess, sys\n"
                + "child = ('import sys\\n'\n"
                + "    'b = bytearray(250 << 20)\\n'\n"
                + "    'for i in range(0, len(b), 4096): b[i] = 1\\n'\n"
                + "    'print(\"held\", flush=True)\\n'\n"
                + "    'sys.stdin.read()\\n')\n"
                + "ps = [subprocess.Popen([sys.executable, '-c', child], stdin=subprocess.PIPE, stdout=subprocess.PIPE,"
                + " stderr=subprocess.DEVNULL) for _ in range(3)]\n"
                + "lines = [p.stdout.readline().strip() for p in ps]\n"
                + "held = sum(1 for p, l in zip(ps, lines) if l == b'held' and p.poll() is None)\n"
                + "for p in ps:\n"
                + "    try:\n"
                + "        p.stdin.close()\n"
                + "    except OSError:\n"
                + "        pass\n"
                + "    p.wait()\n"
                + "print('held', held)\n";
        RunResult r = run(SandboxSpec.builder().limits(Limits.builder().memoryMib(512).build()).build(),
                Execution.builder(code).budget(Duration.ofSeconds(60)).build());
        assertExited(r, 0);
        assertTrue(r.stdout().matches("held [012]\n"), "three processes held 750 MiB under a 512 MiB sandbox: " + r.stdout());
        assertLeakCountBackToBaseline();
    }
}
