package dev.sandbox4j.emulators.campaign;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.docker.DockerSandboxRunner;
import dev.sandbox4j.docker.EngineFaultProxy;
import dev.sandbox4j.docker.TestEngine;
import dev.sandbox4j.docker.internal.EngineCheck;
import dev.sandbox4j.emulators.Faults;
import dev.sandbox4j.emulators.Faults.Fault;
import dev.sandbox4j.emulators.Ledger;
import dev.sandbox4j.spi.CreateRequest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 13's three causes (as {@code LifecycleCausesTest} reproduces them on the REST adapters) on the
 * Docker runner, against the real engine through {@link EngineFaultProxy} with one fixed campaign knob
 * each (issue 29). The runner takes no caller's transport client, so cause A is its own engine client:
 * a container create whose answer is lost goes out once, and the container it made is found by run id
 * and removed. Cause B: a create that reaches the engine after the client gave up is found by the
 * lifecycle's lookup and removed. Cause C: an interrupt while that lookup hangs does not abandon it.
 * Each ends with nothing of its owner label on the engine (containers and volumes).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(180)
class DockerLifecycleCausesTest {
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(3);
    private Path dir;
    private DockerSandboxRunner direct;
    /** What the last cause's proxy was asked, for the failure messages. */
    private List<String> requests = List.of();

    @BeforeAll
    void start() throws IOException {
        direct = TestEngine.runner(b -> b); // skipped (failed in CI) without an engine and the image
        dir = Files.createTempDirectory("causes-docker-");
    }

    @AfterAll
    void stop() throws IOException {
        if (direct != null) {
            direct.close();
        }
        if (dir != null) {
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    private interface Case {
        void run(EngineFaultProxy proxy, Faults faults, SandboxRunner runner) throws Exception;
    }

    /** One cause: a proxy with its own ledger, a runner under its own owner label, then the engine's word. */
    private Ledger cause(String name, Case c) throws Exception {
        Faults faults = new Faults();
        Ledger ledger = new Ledger();
        String owner = "causes-" + name + Long.toHexString(System.nanoTime() & 0xffffff);
        try (EngineFaultProxy proxy = new EngineFaultProxy(dir.resolve(name + ".sock"), Path.of("/var/run/docker.sock"),
                faults, ledger)) {
            SandboxRunner runner = TestEngine.builder().dockerHost("unix://" + proxy.socket()).owner(owner)
                    .requestTimeout(REQUEST_TIMEOUT).teardownTimeout(Duration.ofSeconds(8))
                    .lostCreateWindow(Duration.ofSeconds(12)).build();
            try {
                c.run(proxy, faults, runner);
            } finally {
                runner.close(); // drains the search for a late container
            }
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (proxy.inFlight() > 0 && System.nanoTime() < until) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
            }
            requests = proxy.requests();
        }
        List<String> left = EngineCheck.labelled(TestEngine.driver(direct), CreateRequest.OWNER_LABEL, owner);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!left.isEmpty() && System.nanoTime() < until) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200)); // a removal still going on: bounded
            left = EngineCheck.labelled(TestEngine.driver(direct), CreateRequest.OWNER_LABEL, owner);
        }
        assertEquals(List.of(), left, name + ": left on the engine");
        assertEquals(0, ledger.live(), name + ": live in the proxy's ledger: " + ledger.liveIds());
        return ledger;
    }

    private static RunRequest nonce(String n) {
        return RunRequest.of(SandboxSpec.defaults(), Execution.builder("print('" + n + "')").budget(Duration.ofSeconds(20)).build());
    }

    /** Cause A: a create whose answer was lost is not sent again; the container it made is found and removed. */
    @Test
    void aCreateWhoseAnswerWasLostGoesOutOnce() throws Exception {
        Ledger ledger = cause("lost", (proxy, faults, runner) -> {
            faults.loseCreateResponse(1);
            assertInstanceOf(SandboxException.class, LifecycleCausesTest.catching(() -> runner.run(nonce("lost-answer"))));
            assertEquals(1, faults.fired(Fault.LOSE_CREATE_RESPONSE));
        });
        assertEquals(1, ledger.created(), "the create went out once: " + requests);
    }

    /** Cause B: a create that takes effect after the client gave up is still found and removed. */
    @Test
    void aCreateThatLandsAfterTheClientGaveUpIsRemoved() throws Exception {
        Ledger ledger = cause("late", (proxy, faults, runner) -> {
            faults.lateCreate(1, Duration.ofMillis(1500));
            assertInstanceOf(SandboxException.class, LifecycleCausesTest.catching(() -> runner.run(nonce("late"))));
            assertEquals(1, faults.fired(Fault.LATE_CREATE));
        });
        assertEquals(1, ledger.created(), "the late create landed: " + requests);
    }

    /** Cause C: an interrupt while the run id is being looked up does not abandon the lookup. */
    @Test
    void anInterruptDuringTheLookupDoesNotAbandonIt() throws Exception {
        Ledger ledger = cause("hung", (proxy, faults, runner) -> {
            // a first run makes the runner's own listing at its first use (the gone-owner sweep), which the hang
            // would otherwise catch instead of the lookup by run id
            runner.run(nonce("warm"));
            faults.lateCreate(1, Duration.ofMillis(1500)).hangLookup(1, Duration.ofSeconds(3));
            assertInstanceOf(SandboxException.class, LifecycleCausesTest.interruptedOnceTheLookupHangs(faults,
                    () -> runner.run(nonce("hung")), proxy::inFlightRequests));
            assertEquals(1, faults.fired(Fault.LATE_CREATE));
        });
        assertEquals(2, ledger.created(), "the warm-up's create and the late one landed: " + requests);
    }
}
