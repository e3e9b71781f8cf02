package dev.sandbox4j.emulators.secrets;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.emulators.LocalMachines;
import dev.sandbox4j.emulators.daytona.DaytonaEmulator;
import dev.sandbox4j.emulators.e2b.E2bEmulator;
import dev.sandbox4j.emulators.vercel.VercelEmulator;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.testlogging.TraceJvm;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Issue 28 item 8 for the REST adapters: each in a child JVM with every logger at TRACE (OkHttp's
 * java.util.logging loggers, sandbox4j's own), against its emulator over loopback HTTP. No key, wrong
 * key, brokered header value, JWT or E2B envd access token may appear in anything the child writes.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RestTraceSecretsTest {
    private static final String WRONG_KEY = "wrong-key-" + "d83b1f6e0c9a2745";
    private static final String HEADER_SECRET = "sk-brokered-" + "0be6d2f91c7a8354";
    private LocalSandboxRunner local;

    @BeforeAll
    void start() {
        local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048).build();
    }

    @AfterAll
    void stop() {
        local.close();
    }

    private TraceJvm.Result run(String provider, String url, String key) {
        TraceJvm.Result r = TraceJvm.run(provider, RestTraceMain.class, Map.of("TRACE_URL", url, "TRACE_KEY", key,
                "TRACE_WRONG_KEY", WRONG_KEY, "TRACE_HEADER_SECRET", HEADER_SECRET), List.of(provider), Duration.ofMinutes(3));
        System.err.println(provider + " at TRACE: " + r);
        r.assertClean(List.of(key, WRONG_KEY, HEADER_SECRET))
                .assertContains("trace main done")
                .assertContains("hello from " + provider)
                .assertContains("refused: "); // the wrong key at least
        // OkHttp ran with its loggers at FINEST (java.util.logging): its lines are in the capture
        assertTrue(r.linesWith("] okhttp3.") > 0, "no OkHttp line at FINEST");
        assertTrue(Pattern.compile("(TRACE|DEBUG) dev\\.sandbox4j\\.").matcher(r.output()).find(), "no sandbox4j line");
        return r;
    }

    @Test
    void e2b() throws Exception {
        String key = "e2b_" + "trace4c1a9e7d3b5f20864a1c";
        try (E2bEmulator emulator = E2bEmulator.builder().apiKey(key).localRunner(local).build()) {
            run("e2b", emulator.baseUrl(), key)
                    .assertContains("brokered run")
                    // the envd access tokens the emulator minted (ControlPlane: "ea_" and 36 characters)
                    .assertNoMatch(Pattern.compile("ea_[a-z0-9]{36}"), "an envd access token");
        }
    }

    @Test
    void vercel() throws Exception {
        String key = "vercel-trace-" + "7e2d9b0c4a1f6385";
        try (VercelEmulator emulator = VercelEmulator.builder().token(key).teamId("team_trace").projectId("prj_trace")
                .machines(LocalMachines.using(local)).build()) {
            run("vercel", emulator.baseUrl(), key).assertContains("brokered run");
        }
    }

    @Test
    void daytona() throws Exception {
        String key = "daytona-trace-" + "5a0f3c8e1d7b9264";
        try (DaytonaEmulator emulator = DaytonaEmulator.builder(LocalMachines.using(local)).apiKey(key).build()) {
            run("daytona", emulator.apiUrl(), key);
        }
    }
}
