package dev.sandbox4j.local.internal;

import dev.sandbox4j.egress.SandboxForwarder;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BwrapCommandTest {
    private static final Path ROOT = Path.of("/tmp/sandbox4j-abc");
    private final LocalSettings root = LocalSettings.builder().dropPrivileges(true).mergedUsr(true).argvIsUtf8(true).build();
    private final LocalSettings user = LocalSettings.builder().dropPrivileges(false).mergedUsr(true).argvIsUtf8(true).build();

    @Test
    void asRootBwrapStartsThroughSetprivAsNobodyAfterAFixedScript() {
        Path filter = ROOT.resolve("seccomp.bpf");
        List<String> head = List.of("/bin/sh", "-c", BwrapCommand.LAUNCH_SCRIPT, "sandbox4j-launch", filter.toString());
        List<String> bwrap = List.of("/usr/bin/bwrap", "--args", "3", "--seccomp", "4");
        List<String> asRoot = new java.util.ArrayList<>(head);
        asRoot.addAll(List.of("1", "/sys/fs/cgroup/memory/x/tasks", "/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                "--clear-groups", "--no-new-privs", "--"));
        asRoot.addAll(bwrap);
        assertEquals(asRoot, BwrapCommand.launcher(root, filter, List.of(Path.of("/sys/fs/cgroup/memory/x/tasks"))));
        List<String> asUser = new java.util.ArrayList<>(head);
        asUser.add("0");
        asUser.addAll(bwrap);
        assertEquals(asUser, BwrapCommand.launcher(user, filter, List.of()));
        LocalSettings custom = LocalSettings.builder().dropPrivileges(true).dropUser(4242, 4343).build();
        assertTrue(BwrapCommand.launcher(custom, filter, List.of()).containsAll(List.of("--reuid=4242", "--regid=4343")));
        assertThrows(IllegalArgumentException.class, () -> LocalSettings.builder().dropUser(0, 0));
        // the script is a constant: nothing from a request or a path is ever spliced into it
        assertFalse(BwrapCommand.LAUNCH_SCRIPT.replace("/dev/null", "").contains("/"), BwrapCommand.LAUNCH_SCRIPT);
    }

    @Test
    void rootAndDevAreRemountedReadOnlyLastAndBoundedDiskBindsTmpFromTheSandboxFileSystem() {
        List<String> o = BwrapCommand.options(root, ROOT, false, Map.of(), false);
        assertEquals(List.of("--remount-ro", "/dev", "--remount-ro", "/"), o.subList(o.size() - 4, o.size()));
        List<String> bounded = BwrapCommand.options(root, ROOT, false, Map.of(), true);
        assertTriple(bounded, "--bind", "/tmp/sandbox4j-abc/fs/tmp", "/tmp");
        assertTriple(bounded, "--bind", "/tmp/sandbox4j-abc/fs/shm", "/dev/shm");
        assertFalse(bounded.contains("--tmpfs"), "no unbounded-by-the-total tmpfs when the disk is bounded");
        assertTrue(bounded.indexOf("/dev/shm") < bounded.lastIndexOf("--remount-ro"));
    }

    @Test
    void denyAllUnsharesEverythingAndDisablesNestedUserNamespaces() {
        List<String> o = BwrapCommand.options(root, ROOT, false, Map.of(), false);
        assertTrue(o.containsAll(List.of("--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
                "--new-session", "--clearenv", "--as-pid-1")));
        // PID 1 is the execute-only init, not bwrap's reaper (issue 27)
        assertTriple(o, "--ro-bind", "/tmp/sandbox4j-abc/init", "/sandbox4j-init");
        assertFalse(o.contains("--share-net"), "deny-all keeps the network namespace unshared");
        assertPair(o, "--cap-drop", "ALL");
        assertTriple(o, "--ro-bind", "/usr", "/usr");
        assertTriple(o, "--bind", "/tmp/sandbox4j-abc/fs/work", "/sandbox");
        assertPair(o, "--chdir", "/sandbox");
        assertTriple(o, "--ro-bind", "/tmp/sandbox4j-abc/etc/passwd", "/etc/passwd");
        assertTriple(o, "--ro-bind", "/tmp/sandbox4j-abc/etc/hosts", "/etc/hosts");
        assertFalse(o.contains("/etc/resolv.conf"), "no resolver under deny-all");
        assertTrue(Collections.indexOfSubList(o, List.of("--size", "67108864", "--tmpfs", "/tmp")) >= 0, "sized /tmp");
        assertTrue(Collections.indexOfSubList(o, List.of("--size", "67108864", "--tmpfs", "/dev/shm")) >= 0, "sized /dev/shm");
        // nothing of the host's home, /etc or /tmp is bound
        for (int i = 0; i < o.size(); i++) {
            String a = o.get(i);
            assertFalse(a.equals("/") && !o.get(i - 1).equals("--remount-ro") || a.startsWith("/root") || a.startsWith("/home") || a.equals("/etc/shadow")
                    || a.equals("/etc/ssl") || a.equals("/etc") && o.get(i - 1).contains("bind"), "binds " + a);
        }
    }

    @Test
    void allowAllSharesTheHostNetworkAndItsResolver() {
        List<String> o = BwrapCommand.options(root, ROOT, true, Map.of(), false);
        assertTrue(o.contains("--share-net"));
        assertTrue(o.indexOf("--share-net") > o.indexOf("--unshare-all"), "--share-net must follow --unshare-all");
        assertTriple(o, "--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf");
        assertTriple(o, "--ro-bind-try", "/etc/hosts", "/etc/hosts");
    }

    @Test
    void withoutAProxyEgressIsExactlyDenyAllOrAllowAll() {
        LocalDriver d = new LocalDriver(LocalSettings.builder().egressGateways(null).build());
        assertFalse(d.shareNet(EgressPolicy.denyAll()));
        assertTrue(d.shareNet(EgressPolicy.allowAll()));
        assertThrows(UnsupportedPolicyException.class, () -> d.shareNet(EgressPolicy.allowOnly("example.com")));
        assertThrows(UnsupportedPolicyException.class, () -> d.shareNet(
                EgressPolicy.builder(EgressPolicy.Default.ALLOW).denyCidr("10.0.0.0/8").build()));
    }

    @Test
    void withAProxyAListIsItsOwnNetworkAndDefaultAllowWithDeniesIsStillRefused() {
        LocalDriver d = new LocalDriver(LocalSettings.builder().egressGateways((policy, socket, maxBytes) -> {
            throw new java.io.IOException("not started in this test");
        }).build());
        assertFalse(d.shareNet(EgressPolicy.allowOnly("example.com")));
        assertFalse(d.shareNet(EgressPolicy.builder().allowDomain("*.example.com").allowCidr("203.0.113.0/24").build()));
        assertThrows(UnsupportedPolicyException.class, () -> d.shareNet(
                EgressPolicy.builder(EgressPolicy.Default.ALLOW).denyCidr("10.0.0.0/8").build()));
    }

    @Test
    void aProxiedSandboxHasItsOwnNetworkTheSocketDirectoryAndTheProxyVariables() {
        List<String> o = BwrapCommand.options(root, ROOT, false, Map.of("HTTP_PROXY", "mine"), false, ROOT.resolve("egress"), true);
        assertFalse(o.contains("--share-net"));
        assertTriple(o, "--ro-bind", ROOT.resolve("egress").toString(), SandboxForwarder.MOUNT);
        assertTriple(o, "--setenv", "HTTPS_PROXY", SandboxForwarder.PROXY_URL);
        assertTriple(o, "--setenv", "https_proxy", SandboxForwarder.PROXY_URL);
        assertTriple(o, "--setenv", "ALL_PROXY", SandboxForwarder.PROXY_URL);
        assertTriple(o, "--setenv", "NO_PROXY", "");
        assertTriple(o, "--setenv", "SSL_CERT_FILE", SandboxForwarder.MOUNT + "/" + SandboxForwarder.CA_BUNDLE_FILE);
        assertTriple(o, "--setenv", "NODE_EXTRA_CA_CERTS", SandboxForwarder.MOUNT + "/" + SandboxForwarder.CA_BUNDLE_FILE);
        // the spec's own value comes later, so it wins (it only loses the code its route)
        assertTrue(o.lastIndexOf("mine") > o.indexOf(SandboxForwarder.PROXY_URL));
        assertThrows(IllegalArgumentException.class,
                () -> BwrapCommand.options(root, ROOT, true, Map.of(), false, ROOT.resolve("egress"), false));
        List<String> noCa = BwrapCommand.options(root, ROOT, false, Map.of(), false, ROOT.resolve("egress"), false);
        assertFalse(noCa.contains("SSL_CERT_FILE"));
    }

    @Test
    void theSpecsEnvComesAfterTheDefaultsSoItCanOverrideThem() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("GREETING", "h\u00e9llo $(not a shell)");
        env.put("PATH", "/usr/bin");
        List<String> o = BwrapCommand.options(root, ROOT, false, env, false);
        int defaults = indexOfTriple(o, "--setenv", "PATH", BwrapCommand.PATH);
        int spec = indexOfTriple(o, "--setenv", "PATH", "/usr/bin");
        assertTrue(defaults >= 0 && spec > defaults, o.toString());
        assertTrue(o.indexOf("--clearenv") < defaults);
        assertTriple(o, "--setenv", "GREETING", "h\u00e9llo $(not a shell)");
        assertTriple(o, "--setenv", "HOME", "/sandbox");
    }

    @Test
    void nonMergedUsrBindsTheTopLevelDirectoriesInstead() {
        LocalSettings split = LocalSettings.builder().dropPrivileges(false).mergedUsr(false).build();
        List<String> o = BwrapCommand.options(split, ROOT, false, Map.of(), false);
        assertTriple(o, "--ro-bind-try", "/bin", "/bin");
        assertTriple(BwrapCommand.options(root, ROOT, false, Map.of(), false), "--symlink", "usr/bin", "/bin");
    }

    @Test
    void theInitRunsPrlimitInsideWithEveryLimit() {
        LocalSettings s = LocalSettings.builder().addressSpaceBytes(2048L << 20).fileSizeBytes(1 << 20)
                .maxProcesses(32).maxOpenFiles(64).build();
        List<String> c = BwrapCommand.command(s, 7, List.of("/usr/bin/python3", "-c", "print(1)"));
        assertEquals(List.of("/sandbox4j-init", "-c", "\"$@\"; exit $?", "sandbox4j-init", "/usr/bin/prlimit", "--cpu=7:8", "--as=2147483648", "--fsize=1048576", "--nproc=32",
                "--nofile=64", "--core=0", "--", "/usr/bin/python3", "-c", "print(1)"), c);
    }

    @Test
    void cpuLimitIsABackstopBehindTheWallClock() {
        long cpus = Runtime.getRuntime().availableProcessors();
        assertEquals(2 * cpus + 1, LocalDriver.cpuSeconds(Duration.ofMillis(1500)));
        assertEquals(cpus + 1, LocalDriver.cpuSeconds(Duration.ofMillis(10)));
    }

    @Test
    void codeIsOneArgumentToTheInterpreterNeverAShellString() {
        String code = "print(\"$(rm -rf /)\" + '`id`')\n\t# \uD83D\uDE00";
        assertEquals(List.of("/usr/bin/python3", "-c", code), BwrapCommand.inlineCode(root, Language.PYTHON, code));
        assertEquals(List.of("/usr/bin/node", "-e", code), BwrapCommand.inlineCode(root, Language.JAVASCRIPT, code));
        assertEquals(List.of("/usr/bin/bash", "-c", code), BwrapCommand.inlineCode(root, Language.BASH, code));
        assertEquals(List.of("/usr/bin/python3", "/sandbox/.sandbox4j-code-x.py"),
                BwrapCommand.fileCode(root, Language.PYTHON, "/sandbox/" + BwrapCommand.codeFileName(Language.PYTHON, "x")));
        // .cjs: CommonJS like node -e, even if the work dir holds a package.json with "type": "module"
        assertEquals(".sandbox4j-code-x.cjs", BwrapCommand.codeFileName(Language.JAVASCRIPT, "x"));
        assertEquals(".sandbox4j-code-x.sh", BwrapCommand.codeFileName(Language.BASH, "x"));
    }

    @Test
    void codeGoesByFileWhenArgvCannotCarryIt() {
        assertFalse(BwrapCommand.needsFile(root, "print(1)"));
        assertFalse(BwrapCommand.needsFile(root, "print('\uD83D\uDE00')"));
        assertTrue(BwrapCommand.needsFile(root, "s = 'a\u0000b'"), "NUL cannot be in argv");
        String limit = "#" + "x".repeat(BwrapCommand.MAX_ARGV_CODE_BYTES - 1);
        assertFalse(BwrapCommand.needsFile(root, limit));
        assertTrue(BwrapCommand.needsFile(root, limit + "x"));
        // 40,000 three-byte characters: 120,000 bytes in UTF-8
        assertTrue(BwrapCommand.needsFile(root, "\u4e2d".repeat(40_000)));
        assertFalse(BwrapCommand.needsFile(root, "\u4e2d".repeat(30_000)));
        LocalSettings latin = LocalSettings.builder().argvIsUtf8(false).build();
        assertTrue(BwrapCommand.needsFile(latin, "print('\u00e9')"), "a non-UTF-8 JVM would mangle it in argv");
        assertFalse(BwrapCommand.needsFile(latin, "print('ascii')"));
    }

    @Test
    void optionsGoNulSeparatedAndANulInsideOneIsRefused() {
        byte[] b = BwrapCommand.encode(List.of("--setenv", "A", "\u00e9"));
        assertArrayEquals("--setenv\0A\0\u00e9\0".getBytes(StandardCharsets.UTF_8), b);
        assertThrows(IllegalArgumentException.class, () -> BwrapCommand.encode(List.of("--setenv", "A", "x\0y")));
    }

    @Test
    void programsRunInsideMustLiveUnderUsr() {
        assertThrows(IllegalArgumentException.class, () -> LocalSettings.builder().python(Path.of("/root/.pyenv/shims/python3")));
        assertThrows(IllegalArgumentException.class, () -> LocalSettings.builder().node(Path.of("node")));
        assertThrows(IllegalArgumentException.class, () -> LocalSettings.builder().bwrap(Path.of("bwrap")));
        assertEquals(Path.of("/usr/local/bin/python3"), LocalSettings.builder().python(Path.of("/usr/local/bin/python3")).build().python());
    }

    private static void assertPair(List<String> o, String a, String b) {
        assertTrue(Collections.indexOfSubList(o, List.of(a, b)) >= 0, a + " " + b + " in " + o);
    }

    private static void assertTriple(List<String> o, String a, String b, String c) {
        assertTrue(indexOfTriple(o, a, b, c) >= 0, a + " " + b + " " + c + " in " + o);
    }

    private static int indexOfTriple(List<String> o, String a, String b, String c) {
        return Collections.indexOfSubList(o, List.of(a, b, c));
    }
}
