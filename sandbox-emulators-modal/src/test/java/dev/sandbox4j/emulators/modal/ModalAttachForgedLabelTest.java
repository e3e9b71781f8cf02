package dev.sandbox4j.emulators.modal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.exception.AttachRefusedException;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.modal.ModalSandboxRunner;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Limits;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Attach's read-back on the Modal adapter against the emulator (issue 29): a sandbox whose policy tag
 * was altered after the create is refused, and left alone. The Modal adapter reads no egress back (its
 * attach compares tags only), so a tag forged to match the expected policy cannot be caught here: that
 * case is tested on the REST adapters only ({@code AttachForgedLabelTest}).
 */
class ModalAttachForgedLabelTest {
    private static SandboxSpec session(EgressPolicy egress) {
        return SandboxSpec.builder().egress(egress).limits(Limits.builder().lifetime(Duration.ofMinutes(2)).build()).build();
    }

    @Test
    void aPolicyTagAlteredToAnotherPolicyIsRefused() throws Exception {
        SandboxSpec deny = session(EgressPolicy.denyAll());
        SandboxSpec allow = session(EgressPolicy.allowAll());
        try (LocalSandboxRunner local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048).build();
                ModalEmulator emulator = ModalEmulator.builder().runner(local).build();
                SandboxRunner runner = ModalSandboxRunner.builder().serverUrl(emulator.serverUrl())
                        .tokenId(emulator.tokenId()).tokenSecret(emulator.tokenSecret())
                        .retryBaseDelay(Duration.ofMillis(100)).build()) {
            String id;
            try (Sandbox s = runner.open(deny)) {
                assertEquals("made\n", s.exec(Execution.python("print('made')")).stdout());
                s.detach();
                id = s.id();
            }
            try (Sandbox s = runner.attach(id, deny)) {
                assertEquals("again\n", s.exec(Execution.python("print('again')")).stdout(), "the untouched sandbox attaches");
                s.detach();
            }
            assertTrue(emulator.alterLabel(id, CreateRequest.POLICY_LABEL,
                    CreateRequest.of("x", allow).labels().get(CreateRequest.POLICY_LABEL)));
            AttachRefusedException e = assertThrows(AttachRefusedException.class, () -> runner.attach(id, deny));
            assertTrue(e.reasons().stream().anyMatch(r -> r.startsWith("egress: the recorded egress differs")), e.reasons().toString());
            assertEquals(1, emulator.ledger().live(), "a refused attach leaves the sandbox alone");
        }
    }
}
