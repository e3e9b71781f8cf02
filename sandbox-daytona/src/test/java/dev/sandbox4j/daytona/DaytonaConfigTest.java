package dev.sandbox4j.daytona;

import static dev.sandbox4j.daytona.DaytonaWireTest.line;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.exception.SandboxAuthenticationException;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunners;
import dev.sandbox4j.api.SandboxSpec;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import mockwebserver3.RecordedRequest;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class DaytonaConfigTest {
    private final DaytonaFake fake = new DaytonaFake();

    @AfterEach
    void stop() {
        fake.close();
    }

    @Test
    void fromEnvUsesDaytonasNames() {
        fake.json(200, fake.sandbox("sbx-1", "started"));
        fake.json(200, fake.sandbox("sbx-1", "started"));
        Map<String, String> env = Map.of("DAYTONA_API_KEY", DaytonaFake.KEY, "DAYTONA_API_URL", fake.apiUrl(),
                "DAYTONA_TARGET", "eu");
        try (DaytonaSandboxRunner runner = DaytonaSandboxRunner.fromEnv(env)) {
            runner.open(SandboxSpec.defaults()).close();
        }
        RecordedRequest create = fake.take();
        assertEquals("Bearer " + DaytonaFake.KEY, create.getHeaders().get("Authorization"));
        assertEquals("eu", DaytonaFake.body(create).path("target").asText());
    }

    @Test
    void aMissingKeyNamesTheVariable() {
        SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class,
                () -> DaytonaSandboxRunner.fromEnv(Map.of("DAYTONA_API_URL", "https://x.example/api")));
        assertTrue(e.getMessage().contains("DAYTONA_API_KEY"), e.getMessage());
        e = assertThrows(SandboxConfigurationException.class, () -> DaytonaSandboxRunner.builder().build());
        assertTrue(e.getMessage().contains("DAYTONA_API_KEY"), e.getMessage());
        assertThrows(SandboxConfigurationException.class, () -> DaytonaSandboxRunner.builder().apiKey(" "));
        assertThrows(SandboxConfigurationException.class,
                () -> DaytonaSandboxRunner.builder().apiKey("k").apiUrl("ftp://x").build());
        assertThrows(IllegalArgumentException.class,
                () -> DaytonaSandboxRunner.builder().apiKey("k").snapshot("s").image("python:3.12").build());
        assertThrows(IllegalArgumentException.class, () -> DaytonaSandboxRunner.builder().image("python\nRUN curl x"));
    }

    @Test
    void foundByServiceLoader() {
        assertTrue(SandboxRunners.provider("daytona").isPresent());
        assertEquals("dev.sandbox4j:sandbox-daytona", SandboxRunners.provider("daytona").get().artifact());
        assertFalse(SandboxRunners.provider("daytona").get().isConfigured(Map.of()));
        try (SandboxRunner r = SandboxRunners.byName("daytona", Map.of("DAYTONA_API_KEY", DaytonaFake.KEY))) {
            assertInstanceOf(DaytonaSandboxRunner.class, r);
            assertEquals("daytona", r.name());
        }
        SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class,
                () -> SandboxRunners.byName("daytona", Map.of()));
        assertTrue(e.getMessage().contains("DAYTONA_API_KEY"));
    }

    @Test
    void anInjectedClientIsUsed() {
        fake.json(200, fake.sandbox("sbx-1", "started"));
        fake.json(200, fake.sandbox("sbx-1", "started"));
        OkHttpClient client = new OkHttpClient.Builder()
                .addInterceptor(chain -> chain.proceed(chain.request().newBuilder().header("X-Injected", "yes").build()))
                .build();
        try (DaytonaSandboxRunner runner = fake.runner().httpClient(client).build()) {
            runner.open(SandboxSpec.defaults()).close();
        }
        assertEquals("yes", fake.take().getHeaders().get("X-Injected"));
        assertEquals("DELETE /api/sandbox/sbx-1", line(fake.take()));
    }

    @Test
    void theKeyIsInNoLogMessageOrToString() {
        // an API that echoes the key in its error bodies, on create and on an exec
        fake.json(401, "{\"statusCode\":401,\"message\":\"invalid key " + DaytonaFake.KEY + "\"}");
        fake.json(200, fake.sandbox("sbx-1", "started"));
        fake.json(200, "{\"files\":[]}");
        fake.enqueue(new mockwebserver3.MockResponse.Builder().code(201).build());
        fake.json(500, "{\"statusCode\":500,\"message\":\"boom, Bearer " + DaytonaFake.KEY + "\"}"); // the session exec
        fake.json(409, "{\"statusCode\":409,\"message\":\"busy " + DaytonaFake.KEY + "\"}"); // the session's delete
        fake.json(409, "{\"statusCode\":409,\"message\":\"busy " + DaytonaFake.KEY + "\"}");
        fake.json(200, fake.sandbox("sbx-1", "started"));
        PrintStream original = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        StringBuilder seen = new StringBuilder();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            seen.append(runner).append(runner.capabilities());
            SandboxException e = assertThrows(SandboxAuthenticationException.class,
                    () -> runner.run(RunRequest.python("print(1)")));
            seen.append(e.getMessage()).append(e);
            e = assertThrows(SandboxException.class, () -> runner.run(RunRequest.python("print(1)")));
            assertTrue(e.codeMayHaveRun());
            seen.append(e.getMessage()).append(e);
        } finally {
            System.setErr(original);
        }
        String log = captured.toString(StandardCharsets.UTF_8);
        assertTrue(log.contains("DEBUG"), "debug logging was captured");
        assertTrue(seen.toString().contains("***"), seen.toString());
        assertFalse(log.contains(DaytonaFake.KEY), log);
        assertFalse(seen.toString().contains(DaytonaFake.KEY), seen.toString());
        assertFalse(DaytonaSandboxRunner.builder().apiKey(DaytonaFake.KEY).toString().contains(DaytonaFake.KEY));
        // and it went where it belongs, in the Authorization header only
        RecordedRequest first = fake.take();
        assertNotNull(first.getHeaders().get("Authorization"));
        assertFalse(first.getBody().utf8().contains(DaytonaFake.KEY));
    }
}
