package dev.sandbox4j.api.discovery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunners;
import dev.sandbox4j.api.SandboxRunnerProvider;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Discovery through the test-scope providers in src/test/resources/META-INF/services: "scripted" (needs
 * SCRIPTED_API_KEY), a stand-in "local", two modules both claiming "twin", one returning no runner
 * ("nothing"), and one that cannot be instantiated.
 */
class SandboxRunnersTest {
    private static final String CHOICES =
            "[local, nothing, scripted, twin] on the classpath or [daytona, docker, e2b, modal, vercel] with their modules added";

    private static SandboxConfigurationException refused(Map<String, String> env) {
        return assertThrows(SandboxConfigurationException.class, () -> SandboxRunners.fromEnv(env));
    }

    @Test
    void withNothingConfiguredItThrowsAndSaysWhatToSetEvenThoughLocalIsOnTheClasspath() {
        SandboxConfigurationException e = refused(Map.of());
        assertEquals("SANDBOX4J_PROVIDER is not set: set it to the provider to use, one of " + CHOICES
                + ", or call SandboxRunners.local() to use the local bubblewrap runner explicitly"
                + " (SandboxRunners.auto() for bubblewrap or else Docker)", e.getMessage());
        assertFalse(e.isRetriable());
        assertEquals(e.getMessage(), refused(Map.of("SANDBOX4J_PROVIDER", "  ")).getMessage(), "blank is unset");
    }

    @Test
    void credentialsWithoutAProviderNameAreNamedButNotUsed() {
        SandboxConfigurationException e = refused(Map.of(ScriptedProvider.KEY_VARIABLE, "key-value-123"));
        assertEquals("SANDBOX4J_PROVIDER is not set: set it to the provider to use, one of " + CHOICES
                + " (credentials found for [scripted]), or call SandboxRunners.local() to use the local bubblewrap"
                + " runner explicitly (SandboxRunners.auto() for bubblewrap or else Docker)", e.getMessage());
        assertFalse(e.getMessage().contains("key-value-123"));
    }

    @Test
    void theVariableNamesTheProviderWhoseOwnConfigurationIsThenRequired() {
        SandboxConfigurationException e = refused(Map.of("SANDBOX4J_PROVIDER", "scripted"));
        assertEquals("SCRIPTED_API_KEY is not set: the scripted provider needs an API key", e.getMessage());

        SandboxRunner runner = SandboxRunners.fromEnv(Map.of("SANDBOX4J_PROVIDER", " Scripted ",
                ScriptedProvider.KEY_VARIABLE, "key-value-123"));
        assertEquals("scripted", runner.name());
        assertEquals("scripted", runner.run(RunRequest.python("x")).provider());
    }

    /** Appended whenever a provider is not found: the missing one may be the module that failed to load. */
    private static final String LOAD_FAILURE = "; 1 provider(s) failed to load: dev.sandbox4j.api.SandboxRunnerProvider:"
            + " Provider dev.sandbox4j.api.discovery.BrokenProvider could not be instantiated";

    @Test
    void aKnownProviderNotOnTheClasspathNamesTheArtifactToAdd() {
        assertEquals("provider 'e2b' is not on the classpath: add dev.sandbox4j:sandbox-e2b" + LOAD_FAILURE,
                refused(Map.of("SANDBOX4J_PROVIDER", "E2B")).getMessage());
        assertEquals("provider 'modal' is not on the classpath: add dev.sandbox4j:sandbox-modal" + LOAD_FAILURE,
                refused(Map.of("SANDBOX4J_PROVIDER", "modal")).getMessage());
    }

    @Test
    void anUnknownProviderListsTheChoicesAndTheModulesThatFailedToLoad() {
        String message = refused(Map.of("SANDBOX4J_PROVIDER", "dockr")).getMessage();
        assertEquals("unknown provider 'dockr': use one of " + CHOICES + LOAD_FAILURE, message);
        assertFalse(message.contains("secret-in-cause-xyz"), "the cause's message is not repeated");
    }

    @Test
    void aValueThatIsNotANameIsNotEchoed() {
        String pasted = "sk-proj-AbC/123+xyz==";
        String message = refused(Map.of("SANDBOX4J_PROVIDER", pasted)).getMessage();
        assertTrue(message.startsWith("unknown provider named by SANDBOX4J_PROVIDER: use one of"), message);
        assertFalse(message.toLowerCase().contains(pasted.toLowerCase()));
    }

    @Test
    void twoModulesClaimingOneNameIsAnError() {
        assertEquals("provider 'twin' is registered by [dev.sandbox4j.api.discovery.TwinAProvider,"
                        + " dev.sandbox4j.api.discovery.TwinBProvider]: keep only one of their modules on the classpath",
                refused(Map.of("SANDBOX4J_PROVIDER", "twin")).getMessage());
    }

    @Test
    void aProviderReturningNoRunnerIsAnError() {
        assertEquals("provider 'nothing' (dev.sandbox4j.api.discovery.NullProvider) returned no runner",
                refused(Map.of("SANDBOX4J_PROVIDER", "nothing")).getMessage());
    }

    @Test
    void localIsExplicit() {
        SandboxRunner local = SandboxRunners.local();
        assertEquals("local", local.name());
        assertEquals(local.name(), SandboxRunners.byName("LOCAL", Map.of()).name());
    }

    @Test
    void aBrokenModuleDoesNotHideTheOthers() {
        assertEquals(java.util.List.of("scripted", "local", "twin", "twin", "nothing"),
                SandboxRunners.providers().stream().map(SandboxRunnerProvider::name).toList());
        assertTrue(SandboxRunners.provider("SCRIPTED").isPresent());
        assertTrue(SandboxRunners.provider("broken").isEmpty());
        assertEquals("dev.sandbox4j:sandbox-daytona", SandboxRunners.artifactFor("Daytona").orElseThrow());
        assertTrue(SandboxRunners.artifactFor("dockr").isEmpty());
    }
}
