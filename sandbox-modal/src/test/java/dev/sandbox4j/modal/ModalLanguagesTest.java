package dev.sandbox4j.modal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.modal.internal.proto.ModalApi;
import dev.sandbox4j.modal.internal.proto.ModalRouterApi;
import dev.sandbox4j.policy.Language;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Issue 30 item 3: the languages a runner declares, configured or found in its image once per runner. */
class ModalLanguagesTest extends ModalTestBase {

    private List<ModalRouterApi.TaskExecStartRequest> starts() {
        return fake.calls("TaskExecStart").stream().map(c -> (ModalRouterApi.TaskExecStartRequest) c.request).toList();
    }

    @Test
    void withoutTheProbeTheDeclaredLanguagesAreTheConfiguredOnesAndBuildCallsNothing() {
        assertEquals(Set.of(Language.PYTHON, Language.BASH), runner.capabilities().languages());
        assertTrue(fake.calls.isEmpty(), fake.methods().toString());
        try (ModalSandboxRunner js = builder().languages(Language.PYTHON, Language.JAVASCRIPT, Language.BASH).build()) {
            assertTrue(js.capabilities().supports(Language.JAVASCRIPT));
        }
        assertTrue(fake.calls.isEmpty(), fake.methods().toString());
    }

    @Test
    void theProbeDeclaresWhatTheImageHasOnceAndTerminatesItsSandbox() {
        fake.probeStdout = "python3\nnode\nbash\n";
        try (ModalSandboxRunner probed = builder().probeLanguages(true).build()) {
            assertEquals(Set.of(Language.PYTHON, Language.JAVASCRIPT, Language.BASH), probed.capabilities().languages());
            assertEquals(1, fake.calls("SandboxCreateV2").size());
            ModalApi.SandboxCreateV2Request create = (ModalApi.SandboxCreateV2Request) fake.calls("SandboxCreateV2").get(0).request;
            assertEquals(ModalApi.NetworkAccess.NetworkAccessType.BLOCKED, create.getDefinition().getNetworkAccess().getNetworkAccessType());
            assertTrue(create.getDefinition().getTimeoutSecs() <= 300, "a short lifetime: " + create.getDefinition().getTimeoutSecs());
            assertEquals(1, starts().size());
            ModalRouterApi.TaskExecStartRequest probe = starts().get(0);
            assertEquals(List.of("/bin/sh", "-c"), probe.getCommandArgsList().subList(0, 2));
            assertTrue(probe.getCommandArgs(2).contains("python3 node bash"), probe.getCommandArgs(2));
            assertTrue(probe.getEnvMap().isEmpty(), "no marker, no env: " + probe.getEnvMap());
            assertEquals(1, fake.calls("SandboxTerminateV2").size());
            fake.calls.clear();
            fake.script.code = 0;
            probed.run(RunRequest.of(SandboxSpec.defaults(), Execution.builder("console.log(1)").language(Language.JAVASCRIPT).build()));
            assertEquals(List.of("node", "-e", "console.log(1)"), starts().get(0).getCommandArgsList());
            assertFalse(starts().stream().anyMatch(s -> s.getCommandArgsCount() == 3 && s.getCommandArgs(2).contains("command -v")),
                    "probed once per runner, not per sandbox");
        }
    }

    @Test
    void theProbeWinsOverTheConfiguredLanguages() {
        fake.probeStdout = "bash\n";
        try (ModalSandboxRunner probed = builder().languages(Language.PYTHON, Language.JAVASCRIPT, Language.BASH)
                .probeLanguages(true).build()) {
            assertEquals(Set.of(Language.BASH), probed.capabilities().languages());
        }
    }

    @Test
    void theEnvironmentSetsAListOrTheProbe() {
        java.util.Map<String, String> env = new java.util.HashMap<>(java.util.Map.of("MODAL_TOKEN_ID", TOKEN_ID,
                "MODAL_TOKEN_SECRET", TOKEN_SECRET, "MODAL_SERVER_URL", "http://127.0.0.1:1",
                "MODAL_CONFIG_PATH", "/nonexistent/.modal.toml", "SANDBOX4J_MODAL_LANGUAGES", "python, js"));
        try (ModalSandboxRunner listed = ModalSandboxRunner.builderFromEnv(env).channels(fake::channel).build()) {
            assertEquals(Set.of(Language.PYTHON, Language.JAVASCRIPT), listed.capabilities().languages());
        }
        assertTrue(fake.calls.isEmpty(), fake.methods().toString());
        env.put("SANDBOX4J_MODAL_LANGUAGES", "probe");
        fake.probeStdout = "node\n";
        try (ModalSandboxRunner probed = ModalSandboxRunner.builderFromEnv(env).channels(fake::channel).build()) {
            assertEquals(Set.of(Language.JAVASCRIPT), probed.capabilities().languages());
        }
        env.put("SANDBOX4J_MODAL_LANGUAGES", "python,cobol");
        assertThrows(dev.sandbox4j.api.exception.SandboxConfigurationException.class, () -> ModalSandboxRunner.builderFromEnv(env));
    }

    @Test
    void aFailedProbeFailsTheBuildAndLeavesNoSandbox() {
        fake.probeCode = 1;
        SandboxException e = assertThrows(SandboxException.class, () -> builder().probeLanguages(true).build());
        assertTrue(e.getMessage().contains("language probe"), e.getMessage());
        assertEquals(1, fake.calls("SandboxTerminateV2").size());
        fake.probeCode = 0;
        fake.probeStdout = "\n";
        e = assertThrows(SandboxException.class, () -> builder().probeLanguages(true).build());
        assertTrue(e.getMessage().contains("none of python3, node and bash"), e.getMessage());
        assertEquals(2, fake.calls("SandboxTerminateV2").size());
    }
}
