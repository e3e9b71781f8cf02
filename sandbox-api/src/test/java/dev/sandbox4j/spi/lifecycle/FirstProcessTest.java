package dev.sandbox4j.spi.lifecycle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.InputFile;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.spi.ExecOutcome;
import dev.sandbox4j.spi.OutputSink;
import dev.sandbox4j.spi.SandboxDriver;
import dev.sandbox4j.spi.SandboxHandle;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link SandboxDriver#runsAsFirstProcess}: a one-shot {@code run()} asks the driver only when nothing runs
 * between the create and the code (no files, setup or lock-down), and then creates with the execution in
 * the request ({@link CreateRequest#firstProcess()}) and execs that same execution once; a session never
 * asks, and a driver that says no gets the create as before.
 */
class FirstProcessTest {
    static final class H implements SandboxHandle {
        final String id;

        H(String id) {
            this.id = id;
        }

        @Override
        public String id() {
            return id;
        }
    }

    static final class Driver implements SandboxDriver<H> {
        final boolean yes;
        final AtomicInteger asked = new AtomicInteger();
        final List<CreateRequest> creates = new CopyOnWriteArrayList<>();
        final List<Execution> execs = new CopyOnWriteArrayList<>();
        final AtomicInteger destroyed = new AtomicInteger();

        Driver(boolean yes) {
            this.yes = yes;
        }

        @Override
        public String provider() {
            return "fp";
        }

        @Override
        public Capabilities capabilities() {
            return ScriptedDriver.everything("fp");
        }

        @Override
        public boolean runsAsFirstProcess(SandboxSpec spec, Execution execution) {
            asked.incrementAndGet();
            return yes;
        }

        @Override
        public H create(CreateRequest request) {
            creates.add(request);
            return new H("s" + creates.size());
        }

        @Override
        public void writeFiles(H sandbox, List<InputFile> files) {
        }

        @Override
        public void updateEgress(H sandbox, EgressPolicy egress) {
        }

        @Override
        public ExecOutcome exec(H sandbox, Execution execution, OutputSink sink) {
            execs.add(execution);
            byte[] b = "ok\n".getBytes(StandardCharsets.UTF_8);
            sink.stdout(b, 0, b.length);
            return ExecOutcome.exited(0);
        }

        @Override
        public boolean destroy(H sandbox) {
            destroyed.incrementAndGet();
            return true;
        }
    }

    @Test
    void aOneShotTheDriverTakesIsCreatedWithItsExecutionAndExecedOnce() {
        Driver d = new Driver(true);
        Execution e = Execution.python("print(1)");
        try (ManagedSandboxRunner<H> r = ManagedSandboxRunner.of(d)) {
            RunResult result = r.run(RunRequest.of(SandboxSpec.defaults(), e));
            assertEquals("ok\n", result.stdout());
        }
        assertEquals(1, d.asked.get());
        assertEquals(1, d.creates.size());
        assertSame(e, d.creates.get(0).firstProcess().orElseThrow());
        assertEquals(List.of(e), d.execs);
        assertEquals(1, d.destroyed.get());
    }

    @Test
    void aDriverThatSaysNoGetsTheCreateAsBefore() {
        Driver d = new Driver(false);
        try (ManagedSandboxRunner<H> r = ManagedSandboxRunner.of(d)) {
            r.run(RunRequest.python("print(1)"));
        }
        assertEquals(1, d.asked.get());
        assertTrue(d.creates.get(0).firstProcess().isEmpty());
        assertEquals(1, d.execs.size());
    }

    @Test
    void filesSetupOrALockDownMeanTheDriverIsNeverAsked() {
        // a lock-down is setup commands under a wider egress (SandboxSpec.needsLockDown)
        Driver d = new Driver(true);
        EgressPolicy domains = EgressPolicy.builder().allowDomain("example.com").build();
        List<SandboxSpec> specs = List.of(
                SandboxSpec.builder().file("in.txt", "x").build(),
                SandboxSpec.builder().setupCommand("true").build(),
                SandboxSpec.builder().setupCommand("true").setupEgress(domains).egress(EgressPolicy.denyAll()).build());
        try (ManagedSandboxRunner<H> r = ManagedSandboxRunner.of(d)) {
            for (SandboxSpec s : specs) {
                r.run(RunRequest.of(s, Execution.python("print(1)")));
            }
        }
        assertEquals(0, d.asked.get());
        assertEquals(3, d.creates.size());
        d.creates.forEach(c -> assertTrue(c.firstProcess().isEmpty(), c.toString()));
    }

    @Test
    void aSessionNeverAsks() {
        Driver d = new Driver(true);
        try (ManagedSandboxRunner<H> r = ManagedSandboxRunner.of(d); Sandbox s = r.open(SandboxSpec.defaults())) {
            s.exec(Execution.python("print(1)"));
            s.exec(Execution.python("print(2)"));
        }
        assertEquals(0, d.asked.get());
        assertTrue(d.creates.get(0).firstProcess().isEmpty());
        assertEquals(2, d.execs.size());
    }
}
