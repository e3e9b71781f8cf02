package dev.sandbox4j.emulators.campaign;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.exception.AttachRefusedException;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.emulators.HttpEmulator;
import dev.sandbox4j.emulators.daytona.DaytonaEmulator;
import dev.sandbox4j.emulators.e2b.E2bEmulator;
import dev.sandbox4j.emulators.vercel.VercelEmulator;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Limits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Attach's read-back on each REST adapter against its emulator (issue 29): a sandbox whose policy label
 * was altered on the provider's side after the create is refused, and so is one whose label was forged
 * to match the expected policy while the provider reports another egress. Each case first attaches the
 * untouched sandbox, so a refusal is the alteration's doing; a refusal leaves the sandbox alone.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AttachForgedLabelTest {
    private static final SandboxSpec DENY = session(EgressPolicy.denyAll());
    private static final SandboxSpec ALLOW = session(EgressPolicy.allowAll());

    private Path workRoot;
    private LocalSandboxRunner local;

    @BeforeAll
    void start() throws IOException {
        workRoot = Files.createTempDirectory("forged-local-");
        Files.setPosixFilePermissions(workRoot, PosixFilePermissions.fromString("rwx--x--x"));
        local = LocalSandboxRunner.builder().workRoot(workRoot).maxAddressSpaceMib(2048).build().verify();
    }

    @AfterAll
    void stop() throws IOException {
        WorkRoots.closeAndDelete(local, workRoot);
    }

    private static SandboxSpec session(EgressPolicy egress) {
        return SandboxSpec.builder().egress(egress).limits(Limits.builder().lifetime(Duration.ofMinutes(2)).build()).build();
    }

    private static String policyLabel(SandboxSpec spec) {
        return CreateRequest.of("x", spec).labels().get(CreateRequest.POLICY_LABEL);
    }

    /** One emulator, the adapter on it (generous deadlines: nothing here is about time) and a label changer. */
    private final class Target implements AutoCloseable {
        final HttpEmulator emulator;
        final SandboxRunner runner;
        final TrackedMachines machines = TrackedMachines.on(local);
        private final String adapter;

        Target(String adapter) throws IOException {
            this.adapter = adapter;
            Duration d = FaultKnobsTest.REQUEST;
            switch (adapter) {
                case "e2b": {
                    E2bEmulator e = E2bEmulator.builder().apiKey(FaultCampaignTest.E2B_KEY).machines(machines).build();
                    emulator = e;
                    runner = FaultCampaignTest.e2bRunner(e, null, d, d);
                    break;
                }
                case "vercel": {
                    VercelEmulator e = VercelEmulator.builder().token(FaultCampaignTest.VERCEL_TOKEN)
                            .teamId(FaultCampaignTest.VERCEL_TEAM).projectId(FaultCampaignTest.VERCEL_PROJECT)
                            .machines(machines).build();
                    emulator = e;
                    runner = FaultCampaignTest.vercelRunner(e, null, d, d);
                    break;
                }
                default: {
                    DaytonaEmulator e = DaytonaEmulator.builder(machines).apiKey(FaultCampaignTest.DAYTONA_KEY).build();
                    emulator = e;
                    runner = FaultCampaignTest.daytonaRunner(e, null, d, d);
                }
            }
        }

        void alterLabel(String id, String key, String value) {
            boolean done = emulator instanceof E2bEmulator e ? e.alterLabel(id, key, value)
                    : emulator instanceof VercelEmulator v ? v.alterLabel(id, key, value)
                    : ((DaytonaEmulator) emulator).alterLabel(id, key, value);
            assertTrue(done, adapter + ": no sandbox " + id + " to relabel");
        }

        /** Opens a sandbox, runs one command in it and detaches: it stays for attach. */
        String detached(SandboxSpec spec) {
            try (Sandbox s = runner.open(spec)) {
                RunResult r = s.exec(Execution.python("print('made')"));
                assertEquals("made\n", r.stdout(), r.toString());
                s.detach();
                return s.id();
            }
        }

        /** Attaches and detaches again: the untouched sandbox is accepted. */
        void attachesUntouched(String id, SandboxSpec spec) {
            try (Sandbox s = runner.attach(id, spec)) {
                assertEquals("again\n", s.exec(Execution.python("print('again')")).stdout());
                s.detach();
            }
        }

        @Override
        public void close() {
            runner.close();
            emulator.close();
            List<String> open = machines.stillOpen(Duration.ofSeconds(30));
            assertTrue(open.isEmpty(), adapter + ": machines left open: " + open);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"e2b", "vercel", "daytona"})
    void aPolicyLabelAlteredToAnotherPolicyIsRefused(String adapter) throws Exception {
        try (Target t = new Target(adapter)) {
            String id = t.detached(DENY);
            t.attachesUntouched(id, DENY);
            t.alterLabel(id, CreateRequest.POLICY_LABEL, policyLabel(ALLOW));
            AttachRefusedException e = assertThrows(AttachRefusedException.class, () -> t.runner.attach(id, DENY));
            assertTrue(e.reasons().stream().anyMatch(r -> r.startsWith("egress: the recorded egress differs")), e.reasons().toString());
            assertTrue(t.emulator.ledger().liveIds().size() == 1, "a refused attach leaves the sandbox alone: " + t.emulator.ledger());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"e2b", "vercel", "daytona"})
    void aPolicyLabelForgedToMatchIsRefusedOnTheEgressTheProviderReports(String adapter) throws Exception {
        try (Target t = new Target(adapter)) {
            String id = t.detached(ALLOW);
            t.attachesUntouched(id, ALLOW);
            // the label now claims deny-all; the sandbox still has the network it was created with
            t.alterLabel(id, CreateRequest.POLICY_LABEL, policyLabel(DENY));
            AttachRefusedException e = assertThrows(AttachRefusedException.class, () -> t.runner.attach(id, DENY));
            assertTrue(e.reasons().stream().anyMatch(r -> r.startsWith("reported by ")), e.reasons().toString());
            assertTrue(e.reasons().stream().noneMatch(r -> r.startsWith("egress: the recorded egress")),
                    "the forged label itself matches: " + e.reasons());
        }
    }
}
