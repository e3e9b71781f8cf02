package dev.sandbox4j.e2b;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunners;
import dev.sandbox4j.api.SandboxRunnerProvider;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.Test;

class E2bConfigTest extends WireTestBase {

    @Test
    void fromEnvNeedsTheKeyAndNamesIt() {
        SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class,
                () -> E2bSandboxRunner.fromEnv(Map.of("E2B_DOMAIN", "e2b.dev")));
        assertTrue(e.getMessage().contains("E2B_API_KEY"), e.getMessage());
        assertThrows(SandboxConfigurationException.class, () -> E2bSandboxRunner.fromEnv(Map.of("E2B_API_KEY", " ")));
    }

    @Test
    void fromEnvReadsE2bsVariables() {
        assertEquals("E2bSandboxRunner[https://api.e2b.app/, template=base]",
                E2bSandboxRunner.fromEnv(Map.of("E2B_API_KEY", KEY)).toString());
        assertEquals("E2bSandboxRunner[https://api.example.dev/, template=base]",
                E2bSandboxRunner.fromEnv(Map.of("E2B_API_KEY", KEY, "E2B_DOMAIN", "example.dev")).toString());
        assertEquals("E2bSandboxRunner[http://127.0.0.1:3000/, template=my-tpl:v2, code interpreter, sandboxUrl=http://127.0.0.1:49983/]",
                E2bSandboxRunner.fromEnv(Map.of("E2B_API_KEY", KEY, "E2B_API_URL", "http://127.0.0.1:3000",
                        "E2B_SANDBOX_URL", "http://127.0.0.1:49983", "SANDBOX4J_E2B_TEMPLATE", "my-tpl:v2",
                        "SANDBOX4J_E2B_CODE_INTERPRETER", "true")).toString());
        assertTrue(E2bSandboxRunner.fromEnv(Map.of("E2B_API_KEY", KEY, "SANDBOX4J_E2B_CODE_INTERPRETER", "true"))
                .toString().contains("template=code-interpreter-v1"));
        SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class,
                () -> E2bSandboxRunner.fromEnv(Map.of("E2B_API_KEY", KEY, "E2B_API_URL", "ftp://nope")));
        assertTrue(e.getMessage().contains("E2B_API_URL"), e.getMessage());
    }

    @Test
    void discoveredThroughServiceLoader() {
        SandboxRunnerProvider p = SandboxRunners.provider("e2b").orElseThrow();
        assertEquals("dev.sandbox4j:sandbox-e2b", p.artifact());
        assertTrue(p.isConfigured(Map.of("E2B_API_KEY", KEY)));
        assertTrue(!p.isConfigured(Map.of()));
        SandboxRunner r = SandboxRunners.fromEnv(Map.of("SANDBOX4J_PROVIDER", "e2b", "E2B_API_KEY", KEY));
        assertInstanceOf(E2bSandboxRunner.class, r);
        assertEquals("e2b", r.name());
    }

    @Test
    void anInjectedOkHttpClientCarriesEveryCall() {
        AtomicInteger seen = new AtomicInteger();
        OkHttpClient client = new OkHttpClient.Builder()
                .addInterceptor(chain -> {
                    seen.incrementAndGet();
                    return chain.proceed(chain.request());
                })
                .build();
        builder().httpClient(client).build().run(RunRequest.python("print(1)"));
        assertEquals(3, seen.get(), "create, start and kill all went through the caller's client");
    }
}
