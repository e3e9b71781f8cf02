package dev.sandbox4j.emulators.vercel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class VercelEmulatorMainTest {

    @Test
    void printsItsUrlFirstAndTakesCredentialsFromTheSdkVariables() throws Exception {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        Map<String, String> env = Map.of("VERCEL_TOKEN", "tok-from-env-42", "VERCEL_TEAM_ID", "team_x",
                "VERCEL_PROJECT_ID", "prj_x");
        try (VercelEmulator e = VercelEmulatorMain.start(new String[0], env, new TestMachines(),
                new PrintStream(buf, true, StandardCharsets.UTF_8))) {
            String out = buf.toString(StandardCharsets.UTF_8);
            assertEquals(e.baseUrl(), out.lines().findFirst().orElseThrow());
            assertTrue(e.baseUrl().startsWith("http://127.0.0.1:"));
            assertFalse(out.contains("tok-from-env-42"), "the token is not printed");
            assertEquals("team_x", e.teamId());
            assertEquals("prj_x", e.projectId());
            Wire wire = new Wire(e, "tok-from-env-42", "team_x");
            Wire.Response r = wire.post("/v3/sandboxes", "{\"projectId\":\"prj_x\",\"ports\":[]}");
            assertEquals(200, r.status, r.body);
        }
    }

    @Test
    void refusesAPortThatIsNotANumber() {
        assertThrows(IllegalArgumentException.class, () -> VercelEmulatorMain.start(new String[] {"http"}, Map.of(),
                new TestMachines(), new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)));
    }

    @Test
    void takesInstantAndCreateDelay() throws Exception {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        try (VercelEmulator e = VercelEmulatorMain.start(new String[] {"--instant", "--create-delay-ms", "250", "0"},
                Map.of(), new TestMachines(), new PrintStream(buf, true, StandardCharsets.UTF_8))) {
            assertTrue(e.instant());
            assertEquals(java.time.Duration.ofMillis(250), e.faults().createDelay());
            String out = buf.toString(StandardCharsets.UTF_8);
            assertEquals(e.baseUrl(), out.lines().findFirst().orElseThrow());
            assertTrue(out.contains("instant") && out.contains("/_emulator/requests"), out);
        }
    }
}
