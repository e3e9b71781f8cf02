package dev.sandbox4j.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.InputFile;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxInterruptedException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The contract every {@link SandboxRunner} passes. A runner's test extends this class and supplies the
 * runner; cases skip only when the runner's {@link Capabilities} say it cannot do what they need, with
 * an assumption naming the capability.
 *
 * <pre>{@code
 * class LocalSandboxRunnerContractTest extends SandboxRunnerContract {
 *     protected SandboxRunner createRunner() { return LocalSandboxRunner.create(); }
 * }
 * }</pre>
 *
 * <p>Hooks a subclass may override: {@link #liveResources()} (a leak count, checked to return to its
 * value after every test), {@link #canaryReachingPolicy()} (the egress under which the sandbox reaches
 * the host's canary listener, for the control run that shows the canary can fail), {@link #canaryHost()}
 * and {@link #canaryBindAddress()} (where the listener is and how the sandbox addresses it; an emulator
 * in another process reaches the same loopback), and {@link #timeoutGrace()}.
 *
 * <p>The test JVM's environment must hold {@value #HOST_SECRET_VARIABLE} (set it in Surefire's
 * {@code environmentVariables}): the suite checks that its value is nowhere in the sandbox.
 *
 * <p>All code runs as Python unless a case is about another language; output is checked through
 * markers and hashes, so it does not depend on the sandbox's locale or its other files.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class SandboxRunnerContract {
    /** A host environment variable whose value must never be visible in a sandbox. */
    public static final String HOST_SECRET_VARIABLE = "SANDBOX4J_TCK_HOST_SECRET";

    private SandboxRunner runner;
    private OptionalLong baseline = OptionalLong.empty();

    /** Creates the runner under test, once for the class; it is closed after the last test. */
    protected abstract SandboxRunner createRunner();

    /**
     * How many sandboxes (or processes, or remote resources) the runner holds right now, or empty
     * when it cannot tell. After every test the count must be back to its value before the test.
     */
    protected OptionalLong liveResources() {
        return OptionalLong.empty();
    }

    /**
     * An egress under which code in the sandbox reaches the canary listener, for the control run. The
     * default is allow-all when the runner declares {@link Capabilities.Egress#ALLOW_ALL}.
     */
    protected Optional<EgressPolicy> canaryReachingPolicy() {
        return runner.capabilities().supports(Capabilities.Egress.ALLOW_ALL)
                ? Optional.of(EgressPolicy.allowAll()) : Optional.empty();
    }

    /** The address code in the sandbox connects to, to reach the canary listener. Default {@code 127.0.0.1}. */
    protected String canaryHost() {
        return "127.0.0.1";
    }

    /** The address the canary listener binds to (on an ephemeral port). Default the loopback address. */
    protected InetAddress canaryBindAddress() {
        return InetAddress.getLoopbackAddress();
    }

    /**
     * A name the machine running the tests can resolve (the DNS case checks that it cannot be resolved
     * under deny-all). Default {@code repo.maven.apache.org}, which the build itself resolved.
     */
    protected String dnsProbeName() {
        return "repo.maven.apache.org";
    }

    /** How long after the budget a timed-out run may take to come back. Default 2 s. */
    protected Duration timeoutGrace() {
        return Duration.ofSeconds(2);
    }

    /** The runner under test. */
    protected final SandboxRunner runner() {
        return runner;
    }

    @BeforeAll
    final void createTheRunner() {
        runner = createRunner();
        assertNotNull(runner, "createRunner() returned null");
    }

    @AfterAll
    final void closeTheRunner() {
        if (runner != null) {
            runner.close();
        }
    }

    @BeforeEach
    final void recordLiveResources() {
        baseline = liveResources();
    }

    @AfterEach
    final void nothingLeaked() throws InterruptedException {
        if (baseline.isEmpty()) {
            return;
        }
        long expected = baseline.getAsLong();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        OptionalLong now = liveResources();
        // teardown is synchronous for most runners; allow a remote one a moment to report it
        while (now.isPresent() && now.getAsLong() != expected && System.nanoTime() < until) {
            Thread.sleep(20);
            now = liveResources();
        }
        assertEquals(expected, now.orElse(expected), "live resources after the test (leak)");
    }

    // ---------------------------------------------------------------- basics

    @Test
    void helloPython() {
        requireLanguage(Language.PYTHON);
        RunResult r = run(SandboxSpec.defaults(), Execution.python("print('hello from python', 6 * 7)"));
        assertExited(r, 0);
        assertEquals("hello from python 42\n", r.stdout());
        assertEquals(runner.name(), r.provider());
        assertFalse(r.sandboxId().isEmpty(), "sandbox id");
        assertTrue(r.teardown() == Teardown.DESTROYED || r.teardown() == Teardown.ALREADY_GONE, "teardown " + r.teardown());
    }

    @Test
    void helloJavaScript() {
        requireLanguage(Language.JAVASCRIPT);
        RunResult r = run(SandboxSpec.defaults(), Execution.of(Language.JAVASCRIPT, "console.log('hello from node', 6 * 7)"));
        assertExited(r, 0);
        assertEquals("hello from node 42\n", r.stdout());
    }

    @Test
    void helloBash() {
        requireLanguage(Language.BASH);
        RunResult r = run(SandboxSpec.defaults(), Execution.of(Language.BASH, "x=42; echo \"hello from bash $x\""));
        assertExited(r, 0);
        assertEquals("hello from bash 42\n", r.stdout());
    }

    @Test
    void stderrAndNonZeroExit() {
        requireLanguage(Language.PYTHON);
        RunResult r = run(SandboxSpec.defaults(), Execution.python(
                "import sys\nprint('to stdout', flush=True)\nprint('to stderr', file=sys.stderr, flush=True)\nsys.exit(3)"));
        assertExited(r, 3);
        assertFalse(r.succeeded());
        if (runner.capabilities().supports(Capabilities.Feature.SEPARATE_STDERR)) {
            assertEquals("to stdout\n", r.stdout());
            assertEquals("to stderr\n", r.stderr());
        } else {
            assertTrue(r.stdout().contains("to stdout") && r.stdout().contains("to stderr"), r.stdout());
        }
    }

    @Test
    void anExceptionIsAResultNotAnError() {
        requireLanguage(Language.PYTHON);
        RunResult r = run(SandboxSpec.defaults(), Execution.python("raise ValueError('boom from the sandbox')"));
        assertEquals(RunStatus.EXITED, r.status());
        assertEquals(1, r.exitCode().orElse(-1));
        String err = runner.capabilities().supports(Capabilities.Feature.SEPARATE_STDERR) ? r.stderr() : r.stdout();
        assertTrue(err.contains("ValueError: boom from the sandbox"), err);
    }

    // ---------------------------------------------------------------- time

    @Test
    void infiniteLoopTimesOutWithinBudgetAndLeavesNothing() {
        requireLanguage(Language.PYTHON);
        Duration budget = Duration.ofSeconds(2);
        // a double-forked setsid() daemon must die with the loop
        String code = "import os, sys, time\n"
                + "print('started', flush=True)\n"
                + "if os.fork() == 0:\n"
                + "    os.setsid()\n"
                + "    if os.fork() == 0:\n"
                + "        while True:\n"
                + "            time.sleep(0.2)\n"
                + "    os._exit(0)\n"
                + "while True:\n"
                + "    pass\n";
        long t0 = System.nanoTime();
        RunResult r = run(SandboxSpec.defaults(), Execution.builder(code).budget(budget).build());
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertEquals(RunStatus.TIMED_OUT, r.status(), r::toString);
        assertTrue(r.exitCode().isEmpty(), "no exit code after a kill");
        if (runner().capabilities().supports(Capabilities.Feature.OUTPUT_ON_TIMEOUT)) {
            assertEquals("started\n", r.stdout(), "partial output is kept");
        } else {
            assertTrue(r.stdout().isEmpty() || r.stdout().equals("started\n"), "output of a timed-out run: " + r.stdout());
        }
        assertTrue(took.compareTo(budget.plus(timeoutGrace())) <= 0,
                "came back after " + took.toMillis() + " ms; budget " + budget.toMillis() + " ms + grace " + timeoutGrace().toMillis());
        assertLeakCountBackToBaseline();
    }

    // ---------------------------------------------------------------- egress

    @Test
    void denyAllKeepsTheCanaryAtZeroBytesWhileTheControlReachesIt() throws Exception {
        requireEgress(Capabilities.Egress.DENY_ALL);
        EgressPolicy reaching = requireCanaryReachingPolicy();
        try (CanaryListener canary = CanaryListener.start(canaryBindAddress())) {
            RunResult denied = run(SandboxSpec.builder().egress(EgressPolicy.denyAll()).build(),
                    Execution.builder(canaryCode("deny-all", canary)).budget(Duration.ofSeconds(30)).build());
            RunResult control = run(SandboxSpec.builder().egress(reaching).build(),
                    Execution.builder(canaryCode("control", canary)).budget(Duration.ofSeconds(30)).build());
            String where = canaryHost() + " (TCP " + canary.port() + ", UDP " + canary.udpPort() + ")";
            assertTrue(canary.awaitBytes("control", 10_000), "the control run (" + reaching + ") sent nothing over TCP to "
                    + where + ", so a zero under deny-all would prove nothing; control said: " + control.stdout() + control.stderr());
            assertTrue(canary.awaitUdpBytes("control", 10_000), "the control run (" + reaching + ") sent no datagram to "
                    + where + "; control said: " + control.stdout() + control.stderr());
            // the deny-all run ended before the control started: its bytes would have arrived by now
            assertEquals(0, canary.bytes("deny-all"), "TCP bytes reached the host under deny-all; the sandbox said: " + denied.stdout());
            assertEquals(0, canary.udpBytes("deny-all"), "UDP bytes reached the host under deny-all; the sandbox said: " + denied.stdout());
        }
    }

    @Test
    void setupEgressIsLockedDownBeforeTheCodeRuns() throws Exception {
        requireEgress(Capabilities.Egress.DENY_ALL);
        requireEgress(Capabilities.Egress.LIVE_UPDATE);
        requireFeature(Capabilities.Feature.SETUP_COMMANDS);
        EgressPolicy reaching = requireCanaryReachingPolicy();
        try (CanaryListener canary = CanaryListener.start(canaryBindAddress())) {
            // bash's /dev/tcp: the trusted setup command reaches the canary under the setup egress
            String setup = "exec 3<>/dev/tcp/" + canaryHost() + "/" + canary.port()
                    + " && printf 'setup\\nsetup-bytes' >&3 && exec 3>&-";
            SandboxSpec spec = SandboxSpec.builder().egress(EgressPolicy.denyAll()).setupEgress(reaching)
                    .setupCommand(setup).setupBudget(Duration.ofSeconds(30)).build();
            RunResult r = run(spec, Execution.builder(canaryCode("after-lockdown", canary))
                    .budget(Duration.ofSeconds(30)).build());
            assertTrue(canary.awaitBytes("setup", 10_000), "the setup command did not reach the canary under " + reaching);
            assertEquals(0, canary.bytes("after-lockdown"), "the code reached the host after the lock-down; it said: " + r.stdout());
            assertEquals(0, canary.udpBytes("after-lockdown"), "the code reached the host after the lock-down; it said: " + r.stdout());
        }
    }

    @Test
    void dnsFailsUnderDenyAll() {
        requireEgress(Capabilities.Egress.DENY_ALL);
        String code = "import socket\n"
                + "try:\n"
                + "    print('RESOLVED', socket.getaddrinfo('" + dnsProbeName() + "', 443)[0][4])\n"
                + "except Exception as e:\n"
                + "    print('NO-DNS', type(e).__name__)\n";
        RunResult r = run(SandboxSpec.builder().egress(EgressPolicy.denyAll()).build(),
                Execution.builder(code).budget(Duration.ofSeconds(30)).build());
        assertExited(r, 0);
        assertTrue(r.stdout().startsWith("NO-DNS"), "DNS under deny-all: " + r.stdout());
        // where this machine has DNS, the control shows the lookup itself works (so the check above can fail);
        // without DNS the UDP canary in the egress case covers the same ground
        Optional<EgressPolicy> reaching = canaryReachingPolicy();
        if (reaching.isPresent()) {
            RunResult control = run(SandboxSpec.builder().egress(reaching.get()).build(),
                    Execution.builder(code).budget(Duration.ofSeconds(30)).build());
            assertExited(control, 0);
        }
    }

    @Test
    void refusesAPolicyItCannotEnforceBeforeAnythingRuns() {
        Capabilities caps = runner.capabilities();
        Map<String, SandboxSpec> candidates = new LinkedHashMap<>();
        candidates.put("an allowed domain", SandboxSpec.builder().egress(EgressPolicy.allowOnly("example.com")).build());
        candidates.put("an allowed CIDR", SandboxSpec.builder().egress(EgressPolicy.builder().allowCidr("192.0.2.0/24").build()).build());
        candidates.put("a denied CIDR", SandboxSpec.builder().egress(
                EgressPolicy.builder(EgressPolicy.Default.ALLOW).denyCidr("192.0.2.0/24").build()).build());
        candidates.put("a memory limit", SandboxSpec.builder().limits(Limits.builder().memoryMib(512).build()).build());
        candidates.put("a vCPU limit", SandboxSpec.builder().limits(Limits.builder().vcpus(1).build()).build());
        candidates.put("a disk limit", SandboxSpec.builder().limits(Limits.builder().diskMib(1024).build()).build());
        String chosen = null;
        for (Map.Entry<String, SandboxSpec> c : candidates.entrySet()) {
            SandboxSpec spec = c.getValue();
            if (!caps.violations(spec.egress(), spec.limits()).isEmpty()) {
                chosen = c.getKey();
                UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class, () -> runner.open(spec).close(),
                        "a spec with " + c.getKey() + ", which " + caps + " cannot enforce, must be refused");
                assertFalse(e.getMessage().isEmpty());
            }
        }
        assumeTrue(chosen != null, "the runner declares every candidate rule (domains, CIDRs, memory, vCPU, disk)");
    }

    // ---------------------------------------------------------------- output

    @Test
    void tenMegabytesOfOutputAreCountedAndTruncatedToTheLimit() {
        requireLanguage(Language.PYTHON);
        int limit = 1_000;
        long size = 10L * 1024 * 1024;
        RunResult r = run(SandboxSpec.defaults(), Execution.builder(
                "import sys\nchunk = 'x' * 65536\nfor _ in range(160):\n    sys.stdout.write(chunk)\nsys.stdout.flush()\n")
                .outputLimit(limit).budget(Duration.ofSeconds(60)).build());
        assertExited(r, 0);
        assertTrue(r.stdoutTruncated(), "truncated flag");
        assertEquals(size, r.stdoutBytes(), "bytes counted");
        assertEquals(limit, r.stdout().length(), "kept characters");
        assertEquals("x".repeat(limit), r.stdout());
        assertFalse(r.stderrTruncated());
    }

    @Test
    void aFloodIsKilledAtTheHardCap() {
        requireLanguage(Language.PYTHON);
        long cap = 1024 * 1024;
        RunResult r = run(SandboxSpec.defaults(), Execution.builder(
                "import sys\nchunk = 'y' * 65536\nwhile True:\n    sys.stdout.write(chunk)\n")
                .outputLimit(500).hardCapBytes(cap).budget(Duration.ofSeconds(60)).build());
        assertEquals(RunStatus.OUTPUT_LIMIT, r.status(), r::toString);
        assertEquals(cap, r.stdoutBytes(), "bytes read stop at the hard cap");
        assertEquals(500, r.stdout().length());
        assertTrue(r.stdoutTruncated());
        assertLeakCountBackToBaseline();
    }

    // ---------------------------------------------------------------- secrets and code integrity

    @Test
    void theHostEnvironmentIsNotVisible() {
        requireLanguage(Language.PYTHON);
        Map<String, String> secrets = hostSecrets();
        assertFalse(secrets.isEmpty(), "set " + HOST_SECRET_VARIABLE + " in the test JVM's environment (Surefire"
                + " environmentVariables): the suite checks that its value is nowhere in the sandbox");
        boolean env = runner.capabilities().supports(Capabilities.Feature.ENV);
        SandboxSpec.Builder spec = SandboxSpec.builder();
        if (env) {
            spec.env("SANDBOX4J_TCK_SPEC_VAR", "spec-value-7d1e");
        }
        RunResult r = run(spec.build(), Execution.builder(
                "import os\n"
                        + "parts = ['ENVIRON ' + repr(sorted(os.environ.items()))]\n"
                        + "for pid in ['self', '1'] + [p for p in os.listdir('/proc') if p.isdigit()]:\n"
                        + "    try:\n"
                        + "        parts.append(pid + ' ' + open('/proc/%s/environ' % pid, 'rb').read().decode('utf-8', 'replace'))\n"
                        + "    except Exception as e:\n"
                        + "        parts.append(pid + ' unreadable ' + type(e).__name__)\n"
                        + "print('\\n'.join(parts))\n").outputLimit(1_000_000).build());
        assertExited(r, 0);
        assertFalse(r.stdoutTruncated(), "the dump must be complete to be checked");
        for (Map.Entry<String, String> s : secrets.entrySet()) {
            assertFalse(r.stdout().contains(s.getValue()), "the host's " + s.getKey() + " is visible in the sandbox");
        }
        if (env) {
            assertTrue(r.stdout().contains("('SANDBOX4J_TCK_SPEC_VAR', 'spec-value-7d1e')"), "the spec's env reaches the code");
        }
    }

    @Test
    void quotesSubstitutionsNewlinesAndEmojiReachTheInterpreterByteForByte() throws Exception {
        requireLanguage(Language.PYTHON);
        RunResult r = run(SandboxSpec.defaults(), Execution.python(hashingCode(TRICKY)));
        assertExited(r, 0);
        assertEquals(sha256(TRICKY) + " " + TRICKY.codePointCount(0, TRICKY.length()) + "\n", r.stdout(),
                "the code was changed on its way (a shell, an encoding): stderr " + r.stderr());
    }

    @Test
    void codeLargerThanOneArgumentCanHoldReachesTheInterpreter() throws Exception {
        requireLanguage(Language.PYTHON);
        // 128 KiB is the kernel's limit for one argv string: this code cannot go as `python3 -c CODE`
        String big = TRICKY.repeat(160 * 1024 / TRICKY.getBytes(StandardCharsets.UTF_8).length + 1);
        String code = hashingCode(big);
        assertTrue(code.getBytes(StandardCharsets.UTF_8).length > 160 * 1024);
        RunResult r = run(SandboxSpec.defaults(), Execution.python(code));
        assertExited(r, 0);
        assertEquals(sha256(big) + " " + big.codePointCount(0, big.length()) + "\n", r.stdout(), "stderr " + r.stderr());
    }

    @Test
    void codeWithANulCharacterReachesTheInterpreter() {
        requireLanguage(Language.JAVASCRIPT);
        // JavaScript allows a raw NUL inside a string literal; argv cannot carry it
        String code = "const s = \"a\u0000b\u00e9\uD83D\uDE00\";\nconsole.log(s.length, s.charCodeAt(1), Buffer.from(s).toString('hex'));";
        RunResult r = run(SandboxSpec.defaults(), Execution.of(Language.JAVASCRIPT, code));
        assertExited(r, 0);
        assertEquals("6 0 610062c3a9f09f9880\n", r.stdout(), "stderr " + r.stderr());
    }

    // ---------------------------------------------------------------- containment

    @Test
    void aForkBombIsContained() {
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

    @Test
    void aMemoryHogIsContained() {
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

    // ---------------------------------------------------------------- containment (issue 17)

    /** Python that calls a system call by name through ctypes, with the numbers of x86_64 and aarch64. */
    private static final String SYSCALLS = "import ctypes, errno, platform\n"
            + "NR = {'x86_64': {'add_key': 248, 'keyctl': 250}, 'aarch64': {'add_key': 217, 'keyctl': 219}}[platform.machine()]\n"
            + "libc = ctypes.CDLL(None, use_errno=True)\n"
            + "libc.syscall.restype = ctypes.c_long\n"
            + "def call(name, *args):\n"
            + "    r = libc.syscall(ctypes.c_long(NR[name]), *[a if isinstance(a, bytes) else ctypes.c_long(a) for a in args])\n"
            + "    return r if r >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))\n";

    @Test
    void aKeyPlantedInOneSandboxIsNotInTheNext() {
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

    @Test
    void rootAndDevAreNotWritable() {
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

    @Test
    void stdinReadsAsEmpty() {
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

    @Test
    void writingPastTheDiskBoundFails() {
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

    @Test
    void memoryIsBoundedAcrossThreeProcesses() {
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

    // ---------------------------------------------------------------- files and sessions

    @Test
    void inputFilesAreVisible() throws Exception {
        requireFeature(Capabilities.Feature.INPUT_FILES);
        requireLanguage(Language.PYTHON);
        byte[] binary = new byte[256];
        for (int i = 0; i < binary.length; i++) {
            binary[i] = (byte) i;
        }
        SandboxSpec spec = SandboxSpec.builder()
                .file("data/nested/input.txt", "h\u00e9llo from the host \uD83D\uDE00\n")
                .file(InputFile.of("top.bin", binary))
                .build();
        RunResult r = run(spec, Execution.python(
                "import hashlib\n"
                        + "print(open('data/nested/input.txt', encoding='utf-8').read(), end='')\n"
                        + "print(hashlib.sha256(open('top.bin', 'rb').read()).hexdigest())\n"));
        assertExited(r, 0);
        assertEquals("h\u00e9llo from the host \uD83D\uDE00\n" + sha256(binary) + "\n", r.stdout());
    }

    @Test
    void twoExecCallsInOneSandboxShareFiles() {
        requireFeature(Capabilities.Feature.SESSIONS);
        requireLanguage(Language.PYTHON);
        Sandbox sandbox = runner.open(SandboxSpec.defaults());
        try {
            RunResult first = sandbox.exec(Execution.python("open('state.txt', 'w').write('from the first call')"));
            assertExited(first, 0);
            RunResult second = sandbox.exec(Execution.python("print(open('state.txt').read())"));
            assertExited(second, 0);
            assertEquals("from the first call\n", second.stdout());
            assertEquals(Teardown.OPEN, sandbox.teardown());
        } finally {
            sandbox.close();
        }
        assertTrue(sandbox.isClosed());
        assertNotEquals(Teardown.OPEN, sandbox.teardown());
        sandbox.close(); // idempotent
        assertThrows(IllegalStateException.class, () -> sandbox.exec(Execution.python("print(1)")));
    }

    @Test
    void eightConcurrentRunsAreIsolated() throws Exception {
        requireLanguage(Language.PYTHON);
        int n = 8;
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Future<RunResult>> futures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int id = i;
                futures.add(pool.submit(() -> run(SandboxSpec.defaults(), Execution.builder(
                        "import os, glob\n"
                                + "open('own-" + id + "', 'w').write('x')\n"
                                + "open('/tmp/own-" + id + "', 'w').write('x')\n"
                                + "print(sorted(glob.glob('own-*')), sorted(glob.glob('/tmp/own-*')))\n")
                        .budget(Duration.ofSeconds(60)).build())));
            }
            for (int i = 0; i < n; i++) {
                RunResult r = futures.get(i).get(120, TimeUnit.SECONDS);
                assertExited(r, 0);
                assertEquals("['own-" + i + "'] ['/tmp/own-" + i + "']\n", r.stdout(), "run " + i + " saw another run's files");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    // ---------------------------------------------------------------- interrupts

    @Test
    void interruptingTheCallerMidRunThrowsAndTearsDown() throws Exception {
        requireLanguage(Language.PYTHON);
        Sandbox sandbox = runner.open(SandboxSpec.defaults());
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicBoolean flagSet = new AtomicBoolean();
        Thread worker = new Thread(() -> {
            try {
                sandbox.exec(Execution.builder("import time\ntime.sleep(60)").budget(Duration.ofSeconds(90)).build());
            } catch (Throwable t) {
                thrown.set(t);
                flagSet.set(Thread.currentThread().isInterrupted());
            }
        }, "tck-interrupt-worker");
        long t0 = System.nanoTime();
        boolean closedByInterrupt;
        try {
            worker.start();
            // interrupt once the worker blocks inside exec (or after 2 s, whatever it is doing then)
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            while (System.nanoTime() < until
                    && (worker.getState() == Thread.State.NEW || worker.getState() == Thread.State.RUNNABLE)) {
                Thread.sleep(5);
            }
            worker.interrupt();
            worker.join(TimeUnit.SECONDS.toMillis(60));
            assertFalse(worker.isAlive(), "exec did not return after the interrupt");
            closedByInterrupt = sandbox.isClosed();
        } finally {
            sandbox.close();
        }
        assertTrue(Duration.ofNanos(System.nanoTime() - t0).toSeconds() < 45, "exec waited for the code instead of the interrupt");
        assertInstanceOf(SandboxInterruptedException.class, thrown.get(), "exec must throw SandboxInterruptedException");
        assertTrue(flagSet.get(), "the interrupt flag must be set again");
        assertTrue(closedByInterrupt, "the sandbox must be torn down by the interrupt, before anyone calls close()");
        assertTrue(sandbox.teardown() == Teardown.DESTROYED || sandbox.teardown() == Teardown.ALREADY_GONE,
                "teardown " + sandbox.teardown());
        assertLeakCountBackToBaseline();
    }

    // ---------------------------------------------------------------- helpers

    /** Quotes, shell substitutions, a tab, newlines and non-ASCII; no backslash and no triple quote (it sits in r'''...'''). */
    static final String TRICKY = "He said \"hi\" & 'bye'; echo $(id -u) `uname -a` ${HOME} $((6*7)) !! ~ * ? [a] {b,c}"
            + " | > < ; # %s %n\n\tindented\twith tabs\n\uD83D\uDE00 \u00fcn\u00efc\u00f6d\u00e9 \u4e2d\u6587 \u00a0 -c -e -- $";

    private static String hashingCode(String payload) {
        return "import hashlib\ns = r'''" + payload + "'''\nprint(hashlib.sha256(s.encode('utf-8')).hexdigest(), len(s))\n";
    }

    /** Sends a tagged TCP stream and three tagged datagrams to the canary; reports what the sandbox saw. */
    private String canaryCode(String tag, CanaryListener canary) {
        return "import socket\n"
                + "host = '" + canaryHost() + "'\n"
                + "said = []\n"
                + "try:\n"
                + "    s = socket.create_connection((host, " + canary.port() + "), timeout=5)\n"
                + "    s.sendall(b'" + tag + "\\n' + b'x' * 4096)\n"
                + "    s.close()\n"
                + "    said.append('TCP-SENT')\n"
                + "except Exception as e:\n"
                + "    said.append('TCP-BLOCKED ' + type(e).__name__)\n"
                + "try:\n"
                + "    family, kind, proto, _, addr = socket.getaddrinfo(host, " + canary.udpPort() + ", type=socket.SOCK_DGRAM)[0]\n"
                + "    u = socket.socket(family, kind, proto)\n"
                + "    for _ in range(3):\n"
                + "        u.sendto(b'" + tag + "\\n' + b'y' * 512, addr)\n"
                + "    said.append('UDP-SENT')\n"
                + "except Exception as e:\n"
                + "    said.append('UDP-BLOCKED ' + type(e).__name__)\n"
                + "print(' '.join(said))\n";
    }

    /** Host environment values that must not appear in a sandbox: the TCK's marker, credentials, the JDK's home. */
    private static Map<String, String> hostSecrets() {
        Map<String, String> s = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : System.getenv().entrySet()) {
            String k = e.getKey().toUpperCase(Locale.ROOT);
            boolean sensitive = k.equals(HOST_SECRET_VARIABLE) || k.equals("JAVA_HOME") || k.startsWith("MAVEN_")
                    || k.contains("SECRET") || k.contains("TOKEN") || k.contains("PASSWORD") || k.contains("API_KEY")
                    || k.contains("CREDENTIAL");
            if (sensitive && e.getValue().length() >= 8) {
                s.put(e.getKey(), e.getValue());
            }
        }
        return s;
    }

    private RunResult run(SandboxSpec spec, Execution execution) {
        return runner.run(RunRequest.of(spec, execution));
    }

    private void assertLeakCountBackToBaseline() {
        if (baseline.isPresent()) {
            assertEquals(baseline.getAsLong(), liveResources().orElse(baseline.getAsLong()),
                    "live resources right after the run (leak)");
        }
    }

    private static void assertExited(RunResult r, int code) {
        if (r.status() != RunStatus.EXITED || r.exitCode().orElse(Integer.MIN_VALUE) != code) {
            fail("expected EXITED(" + code + "), got " + r + "\nstdout: " + abbreviate(r.stdout()) + "\nstderr: " + abbreviate(r.stderr()));
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 2_000 ? s : s.substring(0, 2_000) + "...";
    }

    private void requireLanguage(Language l) {
        assumeTrue(runner.capabilities().supports(l), () -> runner.name() + " does not declare language " + l);
    }

    private void requireFeature(Capabilities.Feature f) {
        assumeTrue(runner.capabilities().supports(f), () -> runner.name() + " does not declare feature " + f);
    }

    private void requireLimit(Capabilities.Limit l) {
        assumeTrue(runner.capabilities().limits().contains(l), () -> runner.name() + " does not declare limit " + l);
    }

    private void requireEgress(Capabilities.Egress e) {
        assumeTrue(runner.capabilities().supports(e), () -> runner.name() + " does not declare egress " + e);
    }

    private EgressPolicy requireCanaryReachingPolicy() {
        Optional<EgressPolicy> p = canaryReachingPolicy();
        assumeTrue(p.isPresent(), () -> runner.name() + " does not declare egress " + Capabilities.Egress.ALLOW_ALL
                + " and the test supplies no other canary-reaching policy");
        return p.get();
    }

    private static String sha256(String s) throws NoSuchAlgorithmException {
        return sha256(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String sha256(byte[] b) throws NoSuchAlgorithmException {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }
}
