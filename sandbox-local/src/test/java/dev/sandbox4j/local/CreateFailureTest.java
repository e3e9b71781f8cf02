package dev.sandbox4j.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Limits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 29: a create that fails half way undoes every side effect it made. The failure is injected at
 * the last step, the egress proxy's start, when the sandbox's directory, its size-limited mount and
 * its cgroup all exist (the test sees them there at that moment); afterwards none is left, whether the
 * failure is an exception or an {@link Error}.
 */
class CreateFailureTest {
    private Path workRoot;
    private final List<String> atFailure = new ArrayList<>();

    @BeforeEach
    void dirs() throws Exception {
        workRoot = TestDirs.workRoot();
    }

    @AfterEach
    void clean() throws Exception {
        TestDirs.delete(workRoot);
    }

    @Test
    void aProxyThatCannotStartLeavesNothing() throws Exception {
        try (LocalSandboxRunner runner = runner(() -> new IllegalStateException("injected: the proxy cannot start"))) {
            SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class, () -> runner.open(spec()));
            assertTrue(e.getMessage().contains("could not start the egress proxy"), e.getMessage());
            assertFalse(e.sandboxMayExist(), e.getMessage());
            assertNothingLeft(runner);
        }
    }

    @Test
    void anErrorHalfWayLeavesNothing() throws Exception {
        try (LocalSandboxRunner runner = runner(() -> new LinkageError("injected: a class the proxy needs is missing"))) {
            LinkageError e = assertThrows(LinkageError.class, () -> runner.open(spec()));
            assertTrue(e.getMessage().contains("injected"), e.getMessage());
            assertNothingLeft(runner);
        }
    }

    private LocalSandboxRunner runner(Supplier<Throwable> failure) {
        LocalSandboxRunner runner = LocalSandboxRunner.builder().workRoot(workRoot).egressProxy(b -> {
            // what the create has made by now, then the failure
            snapshot();
            Throwable t = failure.get();
            if (t instanceof Error) {
                throw (Error) t;
            }
            throw (RuntimeException) t;
        }).build();
        org.junit.jupiter.api.Assumptions.assumeTrue(runner.capabilities().supports(Capabilities.Egress.ALLOW_DOMAINS),
                "needs Python for the egress forwarder: " + runner.capabilities());
        return runner;
    }

    /** An allow list goes through the proxy; a short lifetime bounds the runner's lookup after an Error. */
    private static SandboxSpec spec() {
        return SandboxSpec.builder().egress(EgressPolicy.allowOnly("example.com"))
                .limits(Limits.builder().lifetime(Duration.ofSeconds(2)).build()).build();
    }

    private void assertNothingLeft(LocalSandboxRunner runner) throws IOException {
        assertEquals(1, atFailure.size(), "the create had made its directory when it failed: " + atFailure);
        String name = atFailure.get(0);
        boolean kernelLimits = runner.capabilities().limits().contains(Capabilities.Limit.DISK);
        assertEquals(0, runner.openSandboxes(), "open sandboxes");
        assertEquals(List.of(), sandboxDirs(), "sandbox directories under the work root");
        assertEquals(List.of(), mountsUnder(workRoot), "mounts under the work root");
        assertEquals(List.of(), cgroupsNamed(name), "the sandbox's cgroups");
        if (kernelLimits) {
            assertTrue(mountedAtFailure, "the sandbox's file system was mounted when the create failed");
            assertTrue(cgroupAtFailure, "the sandbox's cgroup existed when the create failed");
        }
    }

    private boolean mountedAtFailure;
    private boolean cgroupAtFailure;

    /** What the create has made when the failure is injected. */
    private void snapshot() {
        atFailure.clear();
        atFailure.addAll(sandboxDirs());
        try {
            mountedAtFailure = !mountsUnder(workRoot).isEmpty();
            cgroupAtFailure = atFailure.size() == 1 && !cgroupsNamed(atFailure.get(0)).isEmpty();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private List<String> sandboxDirs() {
        try (Stream<Path> s = Files.list(workRoot)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("sandbox4j-"))
                    .sorted().collect(Collectors.toList());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static List<String> mountsUnder(Path root) throws IOException {
        String prefix = root.toAbsolutePath().normalize() + "/";
        return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
                .filter(l -> l.split(" ")[4].startsWith(prefix)).collect(Collectors.toList());
    }

    private static List<Path> cgroupsNamed(String name) throws IOException {
        Path base = Path.of("/sys/fs/cgroup");
        if (!Files.isDirectory(base)) {
            return List.of();
        }
        for (int attempt = 1; ; attempt++) {
            try (Stream<Path> s = Files.find(base, 10, (p, a) -> a.isDirectory() && p.getFileName() != null
                    && p.getFileName().toString().equals(name) && p.getParent().getFileName() != null
                    && p.getParent().getFileName().toString().equals("sandbox4j"))) {
                return s.collect(Collectors.toList());
            } catch (java.io.UncheckedIOException e) {
                // another JVM's cgroup removed while walking: walk again
                if (attempt == 5) {
                    throw e;
                }
            }
        }
    }
}
