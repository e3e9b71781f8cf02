package dev.sandbox4j.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunners;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import dev.sandbox4j.api.SandboxRunnerProvider;
import dev.sandbox4j.local.internal.LocalDriver;
import dev.sandbox4j.local.internal.LocalHandle;
import dev.sandbox4j.local.internal.LocalSettings;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The local runner's own behaviour, beyond the contract suite: configuration errors, secrets, limits. */
class LocalSandboxRunnerTest {
    /** A Python that is not there: no forwarder, so the runner declares no list. */
    private static final Path NO_PYTHON = Path.of("/usr/bin/sandbox4j-no-python");
    private Path workRoot;

    @BeforeEach
    void createWorkRoot() throws IOException {
        workRoot = TestDirs.workRoot();
    }

    @AfterEach
    void workRootIsEmptyAgain() throws IOException {
        try {
            assertEquals(0, TestDirs.entries(workRoot), "sandbox directories left behind");
        } finally {
            TestDirs.delete(workRoot);
        }
    }

    @Test
    void aMissingBwrapIsAClearConfigurationErrorAndNothingRuns() {
        LocalSandboxRunner runner = LocalSandboxRunner.builder().bwrap(Path.of("/nonexistent/bin/bwrap")).workRoot(workRoot).build();
        SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class,
                () -> runner.run(RunRequest.python("print('must not run')")));
        assertTrue(e.getMessage().contains("/nonexistent/bin/bwrap"), e.getMessage());
        assertTrue(e.getMessage().contains("apt-get install -y bubblewrap"), e.getMessage());
        assertTrue(e.getMessage().contains("sudo apt-get install -y bubblewrap"), e.getMessage());
        assertFalse(e.isRetriable());
        assertFalse(e.codeMayHaveRun());
        assertEquals("local", e.provider());
        assertThrows(SandboxConfigurationException.class, runner::verify);
        assertEquals(0, runner.openSandboxes());
    }

    @Test
    void aBwrapThatCannotSandboxIsRefusedAfterTheSmokeRun() {
        // a binary that exists and exits 1, as bwrap does when user namespaces are not allowed
        LocalSandboxRunner runner = LocalSandboxRunner.builder().bwrap(Path.of("/usr/bin/false")).workRoot(workRoot).build();
        SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class, runner::verify);
        assertTrue(e.getMessage().contains("cannot create a sandbox here (exit 1"), e.getMessage());
        assertTrue(e.getMessage().contains("user namespaces"), e.getMessage());
        assertThrows(SandboxConfigurationException.class, () -> runner.run(RunRequest.python("print(1)")));
    }

    @Test
    void theRunnerIsFoundByNameButNeverChosenSilently() {
        try (SandboxRunner r = SandboxRunners.local()) {
            assertInstanceOf(LocalSandboxRunner.class, r);
            assertEquals("local", r.name());
        }
        try (SandboxRunner r = SandboxRunners.fromEnv(Map.of(SandboxRunners.PROVIDER_VARIABLE, "local"))) {
            assertInstanceOf(LocalSandboxRunner.class, r);
        }
        SandboxRunnerProvider p = SandboxRunners.provider("local").orElseThrow();
        assertEquals("dev.sandbox4j:sandbox-local", p.artifact());
        assertFalse(p.isConfigured(System.getenv()), "the local runner is never picked up from credentials");
        assertThrows(SandboxConfigurationException.class, () -> SandboxRunners.fromEnv(Map.of()));
    }

    @Test
    void capabilitiesAreWhatTheRunnerEnforces() {
        Capabilities c = LocalSandboxRunner.builder().workRoot(workRoot).build().capabilities();
        // lists through the egress proxy; never default allow with denied CIDRs (only HTTP leaves a proxy)
        java.util.EnumSet<Capabilities.Egress> egress = java.util.EnumSet.allOf(Capabilities.Egress.class);
        egress.remove(Capabilities.Egress.DEFAULT_ALLOW_WITH_DENIES);
        assertEquals(egress, c.egress());
        assertEquals(Set.of(Capabilities.Egress.DENY_ALL, Capabilities.Egress.ALLOW_ALL, Capabilities.Egress.LIVE_UPDATE),
                LocalSandboxRunner.builder().python(NO_PYTHON).build().capabilities().egress(),
                "without Python there is no forwarder, so no list");
        // whole-sandbox limits are declared only where the kernel enforces them (as root here: tmpfs and cgroup v1)
        boolean root = LocalSettings.jvmIsRoot();
        // the network allowance is counted by the egress proxy, whoever the JVM runs as
        assertEquals(root ? Set.of(Capabilities.Limit.values()) : Set.of(Capabilities.Limit.LIFETIME, Capabilities.Limit.NETWORK),
                c.limits(), String.join("\n", LocalSandboxRunner.builder().workRoot(workRoot).build().enforcement()));
        Capabilities perProcessOnly = LocalSandboxRunner.builder().workRoot(workRoot).kernelLimits(false).build().capabilities();
        assertEquals(Set.of(Capabilities.Limit.LIFETIME, Capabilities.Limit.NETWORK), perProcessOnly.limits());
        assertFalse(LocalSandboxRunner.builder().python(NO_PYTHON).build().capabilities().limits().contains(Capabilities.Limit.NETWORK),
                "without Python there is no forwarder, so no proxy to count the bytes");
        // every feature, attach among them (within the JVM that made the sandbox)
        assertEquals(java.util.EnumSet.allOf(Capabilities.Feature.class), c.features());
        assertTrue(c.supports(Capabilities.Feature.ATTACH));
        assertTrue(c.supports(Language.PYTHON) && c.supports(Language.BASH));
        assertFalse(LocalSandboxRunner.builder().node(Path.of("/usr/bin/no-such-node")).build().capabilities().supports(Language.JAVASCRIPT),
                "a language is declared only when its interpreter is installed");
    }

    @Test
    void rulesItCannotEnforceAreRefusedBeforeAnythingIsCreated() {
        LocalSandboxRunner runner = LocalSandboxRunner.builder().workRoot(workRoot).build();
        assertThrows(UnsupportedPolicyException.class, () -> runner.open(SandboxSpec.builder().egress(
                EgressPolicy.builder(EgressPolicy.Default.ALLOW).denyCidr("10.0.0.0/8").build()).build()),
                "default allow with a denied CIDR is not what a proxy enforces");
        LocalSandboxRunner noPython = LocalSandboxRunner.builder().workRoot(workRoot).python(NO_PYTHON).build();
        List<SandboxSpec> refused = List.of(
                SandboxSpec.builder().egress(EgressPolicy.allowOnly("pypi.org")).build(),
                SandboxSpec.builder().egress(EgressPolicy.builder().allowCidr("10.0.0.0/8").build()).build(),
                SandboxSpec.builder().setupCommand("true").setupEgress(EgressPolicy.allowOnly("pypi.org")).build());
        for (SandboxSpec spec : refused) {
            assertThrows(UnsupportedPolicyException.class, () -> noPython.open(spec), "without Python: " + spec);
        }
        assertEquals(0, noPython.openSandboxes());
        LocalSandboxRunner perProcessOnly = LocalSandboxRunner.builder().workRoot(workRoot).kernelLimits(false).build();
        for (Limits l : List.of(Limits.builder().memoryMib(256).build(), Limits.builder().diskMib(64).build(),
                Limits.builder().vcpus(1).build())) {
            assertThrows(UnsupportedPolicyException.class, () -> perProcessOnly.open(SandboxSpec.builder().limits(l).build()),
                    "a limit not enforced for the whole sandbox is refused: " + l);
        }
        assertEquals(0, runner.openSandboxes());
    }

    @Test
    void anEnvValueWithANulIsRefused() {
        LocalSandboxRunner runner = LocalSandboxRunner.builder().workRoot(workRoot).build();
        SandboxSpec spec = SandboxSpec.builder().env("BAD", "a\u0000b").build();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> runner.open(spec));
        assertTrue(e.getMessage().contains("BAD"));
    }

    @Test
    void onlyTheSpecsEnvAndNoHostFilesAreVisible() throws IOException {
        LocalSandboxRunner runner = LocalSandboxRunner.builder().workRoot(workRoot).build();
        // (the JDK under /usr/lib/jvm is visible, as all of /usr is: public packages, read-only)
        String code = "import os\n"
                + "print('env', sorted(os.environ))\n"
                + "try:\n    print('pid1env', repr(open('/proc/1/environ', 'rb').read()))\n"
                + "except PermissionError:\n    print('pid1env unreadable')\n"
                + "print('pid1cmd', open('/proc/1/cmdline', 'rb').read().decode().split(chr(0))[:5])\n"
                + "for p in ['/root', '/home', '/etc/shadow', '/etc/ssl/private', '/var', '/run', '" + workRoot + "', '"
                + Path.of("").toAbsolutePath() + "', '" + System.getProperty("user.home") + "']:\n"
                + "    print('exists', p, os.path.exists(p))\n"
                + "print('etc', sorted(os.listdir('/etc')))\n"
                + "print('root', sorted(os.listdir('/')))\n"
                + "print('uid', os.getuid(), os.getgid())\n"
                + "print('caps', [l.split()[1] for l in open('/proc/self/status') if l.startswith('CapEff')])\n"
                + "open('made-inside', 'w').write('x')\n";
        try (Sandbox sandbox = runner.open(SandboxSpec.builder().env("SPEC_VAR", "spec value").build())) {
            RunResult r = sandbox.exec(Execution.python(code));
            assertTrue(r.succeeded(), r + r.stderr());
            String out = r.stdout();
            assertTrue(out.contains("env ['HOME', 'LANG', 'PATH', 'PWD', 'SPEC_VAR', 'TMPDIR']\n"), out);
            // PID 1 is the execute-only init (not dumpable: its environment is not readable); bwrap, whose
            // options (bind paths, env) go by stdin, is outside the sandbox's PID namespace
            assertTrue(out.contains("pid1env unreadable\n"), "PID 1 is not dumpable: " + out);
            assertTrue(out.contains("pid1cmd ['/sandbox4j-init', '-c', '\"$@\"; exit $?', 'sandbox4j-init', '/usr/bin/prlimit']\n"),
                    "PID 1 is the init: " + out);
            for (String line : out.split("\n")) {
                if (line.startsWith("exists")) {
                    assertTrue(line.endsWith("False"), line);
                }
            }
            assertTrue(out.contains("etc ['alternatives', 'group', 'hosts', 'ld.so.cache', 'localtime', 'nsswitch.conf', 'passwd',"
                    + " 'protocols', 'services', 'ssl']"), out);
            assertTrue(out.contains("root ['bin', 'dev', 'etc', 'lib', 'lib64', 'proc', 'sandbox', 'sandbox4j-init', 'sbin', 'tmp', 'usr']"), out);
            assertTrue(out.contains("uid 1000 1000\n"), out);
            assertTrue(out.contains("caps ['0000000000000000']"), out);
            if (runner.toString().contains("dropPrivileges=true")) {
                // as root, the sandbox's user is the host's nobody (else RLIMIT_NPROC would not hold)
                try (var dirs = Files.list(workRoot)) {
                    Path made = dirs.findFirst().orElseThrow().resolve("fs/work/made-inside");
                    assertEquals(65534, Files.getAttribute(made, "unix:uid"));
                }
            }
        }
    }

    @Test
    void limitsAreEnforcedInsideTheSandbox() {
        LocalSandboxRunner runner = LocalSandboxRunner.builder().workRoot(workRoot)
                .maxProcesses(16).maxFileSizeMib(1).tmpSizeMib(8).diskMib(8).build();
        String code = "import os, errno, time\n"
                + "kids = []\n"
                + "try:\n"
                + "    for i in range(64):\n"
                + "        pid = os.fork()\n"
                + "        if pid == 0:\n"
                + "            time.sleep(10)\n"
                + "            os._exit(0)\n"
                + "        kids.append(pid)\n"
                + "    print('forked', len(kids))\n"
                + "except OSError as e:\n"
                + "    print('fork failed after', len(kids), errno.errorcode[e.errno])\n"
                + "for k in kids:\n"
                + "    os.kill(k, 9)\n"
                + "def err(f):\n"
                + "    try:\n"
                + "        f()\n"
                + "        return 'ok'\n"
                + "    except OSError as e:\n"
                + "        return errno.errorcode[e.errno]\n"
                + "print('fsize', err(lambda: open('big', 'wb').write(b'x' * (2 << 20))))\n"
                + "def fill():\n"
                + "    for i in range(16):\n"
                + "        with open('/tmp/fill%d' % i, 'wb') as f:\n"
                + "            f.write(b'x' * ((1 << 20) - 4096))\n"
                + "print('tmp', err(fill))\n"
                + "print('usr', err(lambda: open('/usr/evil', 'w')))\n";
        RunResult r = runner.run(RunRequest.of(SandboxSpec.defaults(), Execution.builder(code).budget(Duration.ofSeconds(30)).build()));
        assertTrue(r.succeeded(), r + r.stderr());
        String out = r.stdout();
        // RLIMIT_NPROC counts this sandbox's processes: it holds as root too (bwrap runs as nobody)
        assertTrue(out.matches("(?s)fork failed after (\\d|1[0-5]) EAGAIN\n.*"), out);
        assertTrue(out.contains("fsize EFBIG\n"), out);
        assertTrue(out.contains("tmp ENOSPC\n"), out);
        assertTrue(out.contains("usr EROFS\n") || out.contains("usr EACCES\n"), out);
    }

    @Test
    void aSandboxWhoseLifetimeElapsesIsDestroyedWithoutClose() throws InterruptedException {
        LocalSandboxRunner runner = LocalSandboxRunner.builder().workRoot(workRoot).build();
        Sandbox sandbox = runner.open(SandboxSpec.builder().limits(Limits.builder().lifetime(Duration.ofMillis(300)).build()).build());
        assertEquals(1, runner.openSandboxes());
        long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (runner.openSandboxes() > 0 && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertEquals(0, runner.openSandboxes(), "the lifetime timer destroys a forgotten sandbox");
        SandboxNotFoundException e = assertThrows(SandboxNotFoundException.class, () -> sandbox.exec(Execution.python("print(1)")));
        assertTrue(e.getMessage().contains("expired"), e.getMessage());
        sandbox.close();
        assertEquals(Teardown.ALREADY_GONE, sandbox.teardown());
    }

    @Test
    void theLifetimeAlsoEndsARunningExecution() {
        LocalSandboxRunner runner = LocalSandboxRunner.builder().workRoot(workRoot).build();
        try (Sandbox sandbox = runner.open(SandboxSpec.builder().limits(Limits.builder().lifetime(Duration.ofMillis(800)).build()).build())) {
            RunResult r = sandbox.exec(Execution.builder("import time\ntime.sleep(30)").budget(Duration.ofSeconds(60)).build());
            assertEquals(RunStatus.KILLED, r.status(), r::toString);
        }
    }

    @Test
    void largeCodeGoesByAFileThatIsRemovedAfterwards() {
        LocalSandboxRunner runner = LocalSandboxRunner.builder().workRoot(workRoot).build();
        try (Sandbox sandbox = runner.open(SandboxSpec.defaults())) {
            String big = "import os\n" + "#".repeat(200_000) + "\nprint(sorted(f.startswith('.sandbox4j-code-') for f in os.listdir('.')))\n";
            RunResult first = sandbox.exec(Execution.python(big));
            assertTrue(first.succeeded(), first + first.stderr());
            assertEquals("[True]\n", first.stdout(), "the code ran from a file in the work dir");
            RunResult second = sandbox.exec(Execution.python("import os\nprint(os.listdir('.'))"));
            assertEquals("[]\n", second.stdout(), "the code file is gone after the execution");
        }
    }

    @Test
    void nonAsciiCodeGoesByFileWhenTheJvmCannotEncodeArgvAsUtf8() {
        LocalDriver driver = new LocalDriver(LocalSettings.builder().workRoot(workRoot).argvIsUtf8(false).build());
        try (ManagedSandboxRunner<LocalHandle> runner = ManagedSandboxRunner.of(driver)) {
            RunResult r = runner.run(RunRequest.python("print('\u00e9\uD83D\uDE00'.encode('utf-8').hex())"));
            assertTrue(r.succeeded(), r + r.stderr());
            assertEquals("c3a9f09f9880\n", r.stdout());
        }
    }

    @Test
    void aSignalDeathIsReportedLikeAShellDoes() {
        LocalSandboxRunner runner = LocalSandboxRunner.builder().workRoot(workRoot).build();
        RunResult r = runner.run(RunRequest.of(SandboxSpec.defaults(), Execution.of(Language.BASH, "kill -9 $$")));
        assertEquals(RunStatus.EXITED, r.status());
        assertEquals(137, r.exitCode().orElse(-1));
    }

    @Test
    void toStringsHoldNoEnvValues() {
        LocalSandboxRunner runner = LocalSandboxRunner.builder().workRoot(workRoot).build();
        Map<String, String> env = new HashMap<>();
        env.put("NOT_A_SECRET_BUT_STILL", "value-that-must-not-be-logged");
        SandboxSpec.Builder b = SandboxSpec.builder();
        env.forEach(b::env);
        try (Sandbox s = runner.open(b.build())) {
            assertFalse(s.toString().contains("value-that-must-not-be-logged"));
            assertFalse(runner.toString().contains("value-that-must-not-be-logged"));
        }
    }

    @Test
    void openLocalTakesFilesAndEgressWhileOpen() {
        LocalSandboxRunner runner = LocalSandboxRunner.builder().workRoot(workRoot).build();
        try (LocalSandbox sandbox = runner.openLocal(SandboxSpec.defaults())) {
            sandbox.writeFile("sub/data.txt", "uploaded".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            assertTrue(Files.isRegularFile(sandbox.workDirectory().resolve("sub/data.txt")));
            RunResult r = sandbox.exec(Execution.of(Language.BASH, "cat /sandbox/sub/data.txt"));
            assertEquals("uploaded", r.stdout());

            assertTrue(sandbox.egress().isDenyAll());
            sandbox.setEgress(EgressPolicy.allowAll());
            assertTrue(sandbox.egress().isAllowAll());
            assertThrows(UnsupportedPolicyException.class, () -> sandbox.setEgress(
                    EgressPolicy.builder(EgressPolicy.Default.ALLOW).denyCidr("10.0.0.0/8").build()));
            assertTrue(sandbox.egress().isAllowAll(), "a refused policy leaves the egress as it was");
            // a list: the next exec goes through the sandbox's egress proxy (no name resolves without it)
            sandbox.setEgress(EgressPolicy.allowOnly("example.com"));
            assertEquals(EgressPolicy.allowOnly("example.com"), sandbox.egress());
            RunResult proxied = sandbox.exec(Execution.of(Language.BASH, "printf '%s' \"$HTTPS_PROXY\""));
            assertEquals("http://127.0.0.1:3128", proxied.stdout(), proxied.stderr());
        }
        assertEquals(0, runner.openSandboxes());
    }
}
