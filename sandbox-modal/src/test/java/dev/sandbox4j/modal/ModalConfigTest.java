package dev.sandbox4j.modal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunners;
import dev.sandbox4j.modal.internal.ModalSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Configuration as the Modal SDKs resolve it: environment first, then the active ~/.modal.toml profile, then defaults. */
class ModalConfigTest {
    static final String TOML = "# written by `modal token new`\n"
            + "[default]\n"
            + "token_id = \"ak-DEFAULTID\"\n"
            + "token_secret = \"as-DEFAULTSECRET\"\n"
            + "\n"
            + "[work]\n"
            + "token_id = 'ak-WORKID'\n"
            + "token_secret = \"as-WORKSECRET\"\n"
            + "server_url = \"http://127.0.0.1:9999\"\n"
            + "environment = \"staging\"\n"
            + "active = true # the profile in use\n";

    @TempDir
    Path dir;

    private Map<String, String> env(String... kv) throws IOException {
        Path file = dir.resolve("modal.toml");
        Files.writeString(file, TOML);
        Map<String, String> env = new HashMap<>();
        env.put("MODAL_CONFIG_PATH", file.toString());
        for (int i = 0; i < kv.length; i += 2) {
            env.put(kv[i], kv[i + 1]);
        }
        return env;
    }

    @Test
    void theActiveProfileIsUsedAndTheEnvironmentWins() throws IOException {
        Map<String, String> profile = ModalSettings.profile(env());
        assertEquals("ak-WORKID", profile.get("token_id"));
        assertEquals("http://127.0.0.1:9999", profile.get("server_url"));
        assertEquals("staging", profile.get("environment"));
        assertEquals("ak-DEFAULTID", ModalSettings.profile(env("MODAL_PROFILE", "default")).get("token_id"));
        try (ModalSandboxRunner r = ModalSandboxRunner.fromEnv(env("MODAL_ENVIRONMENT", "prod", "MODAL_SERVER_URL", "http://127.0.0.1:7"))) {
            String d = r.toString();
            assertTrue(d.contains("http://127.0.0.1:7"), d);
            assertTrue(d.contains("environment=prod"), d);
            assertTrue(d.contains("V2"), d);
            assertFalse(d.contains("WORKSECRET") || d.contains("WORKID"), d);
        }
        try (ModalSandboxRunner r = ModalSandboxRunner.fromEnv(env("MODAL_SANDBOX_V2", "false", "SANDBOX4J_MODAL_IMAGE", "python:3.12-slim"))) {
            assertTrue(r.toString().contains("V1"));
            assertTrue(r.toString().contains("python:3.12-slim"));
            assertTrue(r.toString().contains("environment=staging"), r.toString());
        }
    }

    @Test
    void withoutATokenTheMessageSaysWhatToSet() {
        Map<String, String> env = Map.of("MODAL_CONFIG_PATH", dir.resolve("missing.toml").toString(), "MODAL_TOKEN_ID", "ak-x");
        SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class, () -> ModalSandboxRunner.fromEnv(env));
        assertTrue(e.getMessage().contains("MODAL_TOKEN_ID") && e.getMessage().contains("MODAL_TOKEN_SECRET"));
        assertFalse(e.getMessage().contains("ak-x"));
    }

    @Test
    void sandboxRunnersFindsModalByName() throws IOException {
        try (SandboxRunner r = SandboxRunners.fromEnv(env("SANDBOX4J_PROVIDER", "modal"))) {
            assertInstanceOf(ModalSandboxRunner.class, r);
            assertEquals("modal", r.capabilities().runner());
        }
    }

    @Test
    void onlyHttpAndHttpsServerUrlsAndNoTrustAllSwitch() {
        ModalSandboxRunner.Builder b = ModalSandboxRunner.builder().tokenId("ak-1234").tokenSecret("as-5678").serverUrl("grpc://x");
        assertThrows(SandboxConfigurationException.class, b::build);
        assertThrows(SandboxConfigurationException.class, () -> ModalSandboxRunner.builder().runtime("runc"));
        assertTrue(java.util.Arrays.stream(ModalSandboxRunner.Builder.class.getMethods())
                .noneMatch(m -> m.getName().toLowerCase().contains("trust") || m.getName().toLowerCase().contains("insecure")));
    }
}
