package dev.sandbox4j.emulators.modal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.modal.ModalSandboxRunner;
import dev.sandbox4j.policy.EgressPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * Issue 35: sandboxes on one command router share one connection to it, every router call still
 * carries its own sandbox's JWT (the emulator refuses a call whose JWT is for another task with
 * PERMISSION_DENIED), and closing the runner closes the connection.
 */
class ModalRouterChannelTest {
    private static final int SANDBOXES = 6;

    @Test
    void sandboxesOnOneRouterShareOneConnectionEachWithItsOwnJwt() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(SANDBOXES);
        try (ModalEmulator e = ModalEmulator.builder().instant(true).build()) {
            ModalSandboxRunner runner = ModalSandboxRunner.builder().serverUrl(e.serverUrl()).tokenId(e.tokenId())
                    .tokenSecret(e.tokenSecret()).retryBaseDelay(Duration.ofMillis(100)).build();
            try {
                for (int round = 0; round < 2; round++) {
                    List<Sandbox> open = new ArrayList<>();
                    try {
                        for (int i = 0; i < SANDBOXES; i++) {
                            open.add(runner.open(SandboxSpec.builder().egress(EgressPolicy.denyAll()).build()));
                        }
                        // all of them at once, in the reverse order of their creation, twice each
                        List<Future<RunResult>> results = new ArrayList<>();
                        for (int rep = 0; rep < 2; rep++) {
                            for (int i = SANDBOXES - 1; i >= 0; i--) {
                                Sandbox s = open.get(i);
                                results.add(pool.submit(() -> s.exec(Execution.python("print(1)"))));
                            }
                        }
                        for (Future<RunResult> f : results) {
                            RunResult r = f.get(60, TimeUnit.SECONDS);
                            assertEquals(0, r.exitCode().orElse(-1), r.toString());
                        }
                    } finally {
                        open.forEach(Sandbox::close);
                    }
                    // the second round's sandboxes reuse the first round's idle channel
                    assertEquals(1, e.routerConnections(), "router connections accepted after round " + round);
                    assertEquals(1, e.routerConnectionsOpen());
                }
                int starts = e.callCounts().getOrDefault("modal.task_command_router.TaskCommandRouter/TaskExecStart", 0);
                assertEquals(2 * 2 * SANDBOXES, starts, e.callCounts().toString());
                assertEquals(0, e.ledger().live(), e.ledger().toString());
            } finally {
                runner.close();
            }
            // the server sees the close a moment later: an upper bound, polled
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (e.routerConnectionsOpen() > 0 && System.nanoTime() < until) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
            }
            assertEquals(0, e.routerConnectionsOpen(), "router connections left open after the runner closed");
            assertEquals(1, e.routerConnections());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aClosedRunnerLeavesNoNettyThread() throws Exception {
        try (ModalEmulator e = ModalEmulator.builder().instant(true).build()) {
            ModalSandboxRunner runner = ModalSandboxRunner.builder().serverUrl(e.serverUrl()).tokenId(e.tokenId())
                    .tokenSecret(e.tokenSecret()).build();
            try (Sandbox s = runner.open(SandboxSpec.builder().egress(EgressPolicy.denyAll()).build())) {
                assertEquals(0, s.exec(Execution.python("print(1)")).exitCode().orElse(-1));
            }
            assertTrue(nettyThreads() > 0, "the runner's event loop thread");
            runner.close();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (nettyThreads() > 0 && System.nanoTime() < until) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
            }
            assertEquals(0, nettyThreads(), "sandbox4j-modal-netty threads alive after close");
        }
    }

    private static long nettyThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("sandbox4j-modal-netty-")).count();
    }
}
