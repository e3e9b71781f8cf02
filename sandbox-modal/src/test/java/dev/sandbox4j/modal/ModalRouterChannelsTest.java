package dev.sandbox4j.modal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.policy.EgressPolicy;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Issue 35: one router channel per router address, each call with its own sandbox's JWT. */
class ModalRouterChannelsTest extends ModalTestBase {
    private static final SandboxSpec SPEC = SandboxSpec.builder().egress(EgressPolicy.denyAll()).build();

    @Test
    void manyRunsOpenOneControlChannelAndOneRouterChannel() {
        for (int i = 0; i < 5; i++) {
            runner.run(RunRequest.of(SPEC, Execution.python("print(1)")));
        }
        assertEquals(List.of("127.0.0.1:1 plaintext", "127.0.0.1:43192 plaintext"), List.copyOf(fake.channelTargets));
        assertEquals(1, driver(runner).routerChannels(), "the idle router channel is kept for the next sandbox");
        runner.close();
        assertEquals(0, driver(runner).routerChannels());
    }

    @Test
    void twoSandboxesOnOneChannelEachSendTheirOwnJwt() {
        String jwtA = fake.routerJwt;
        String jwtB = FakeModal.jwt(3600, "router-b");
        try (Sandbox a = runner.open(SPEC)) {
            fake.routerJwt = jwtB; // the next sandbox's router access
            try (Sandbox b = runner.open(SPEC)) {
                assertEquals(List.of("Bearer " + jwtA), authorizations(() -> a.exec(Execution.python("print(1)"))));
                assertEquals(List.of("Bearer " + jwtB), authorizations(() -> b.exec(Execution.python("print(1)"))));
                assertEquals(List.of("Bearer " + jwtA), authorizations(() -> a.exec(Execution.python("print(1)"))));
            }
        }
        assertEquals(2, fake.channelTargets.size(), fake.channelTargets.toString());
        assertFalse(jwtA.equals(jwtB));
    }

    /** The distinct authorization values of the router calls {@code r} made. */
    private List<String> authorizations(Runnable r) {
        int from = fake.calls.size();
        r.run();
        List<String> out = new ArrayList<>();
        for (FakeModal.Call c : new ArrayList<>(fake.calls).subList(from, fake.calls.size())) {
            if (c.method.startsWith("TaskExec")) {
                String auth = c.header("authorization");
                if (!out.contains(auth)) {
                    out.add(auth);
                }
            }
        }
        assertFalse(out.isEmpty(), "no router call");
        return out;
    }
}
