package dev.sandbox4j.emulators.daytona;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.emulators.Machine;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Each fault knob, seen from a plain HTTP client: where it strikes and what it leaves behind. */
class DaytonaEmulatorFaultTest {
    private final ProcessMachine.Factory machines = new ProcessMachine.Factory();
    private DaytonaEmulator emulator;
    private Wire wire;

    @BeforeEach
    void start() throws Exception {
        emulator = DaytonaEmulator.builder(machines).minute(Duration.ofMillis(200)).build();
        wire = new Wire(emulator);
    }

    @AfterEach
    void stop() {
        emulator.close();
        assertEquals(0, emulator.ledger().live());
        for (ProcessMachine m : machines.opened) {
            assertTrue(m.isClosed(), "a machine outlived the emulator");
        }
    }

    @Test
    void aFailedCreateCreatesNothing() throws Exception {
        emulator.faults().failCreate(503, 1);
        DaytonaEmulatorWireTest.assertApiError(wire.create("{}"), 503, "Service Unavailable",
                "An unexpected error occurred.", "/api/sandbox");
        assertEquals(0, emulator.ledger().created());
        String id = wire.createOk("{}");
        assertEquals(200, wire.delete(id).status);
    }

    /**
     * The create records the sandbox (listed by its labels) before its machine opens; a client resolving a
     * lost create finds it there and deletes it. The machine that opens afterwards must be closed, not
     * handed to the deleted record: the campaign's leak of a local machine whose sandbox the ledger
     * counted destroyed (issue 29).
     */
    @Test
    void aSandboxDeletedWhileItsMachineOpensLeavesNoMachineOpen() throws Exception {
        java.util.concurrent.CountDownLatch opening = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        Machine.Factory gated = (host, env, lifetime) -> {
            opening.countDown();
            assertTrue(release.await(30, java.util.concurrent.TimeUnit.SECONDS), "never released");
            return machines.open(host, env, lifetime);
        };
        try (DaytonaEmulator gatedEmulator = DaytonaEmulator.builder(gated).build()) {
            Wire w = new Wire(gatedEmulator);
            java.util.concurrent.CompletableFuture<Wire.Answer> create = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return w.create("{\"labels\":{\"sandbox4j-run-id\":\"race1\"}}");
                } catch (IOException | InterruptedException e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            });
            assertTrue(opening.await(30, java.util.concurrent.TimeUnit.SECONDS), "the machine never began to open");
            Wire.Answer found = w.get("/sandbox?labels=" + Wire.encode("{\"sandbox4j-run-id\":\"race1\"}"));
            assertEquals(1, found.json.get("items").size(), "listed while its machine opens: " + found);
            assertEquals(200, w.delete(found.json.get("items").get(0).get("id").asText()).status);
            release.countDown();
            create.get(30, java.util.concurrent.TimeUnit.SECONDS);
            assertEquals(0, gatedEmulator.ledger().live());
            assertEquals(1, machines.opened.size());
            assertTrue(machines.last().isClosed(), "the machine opened for a deleted sandbox is still open");
        }
    }

    @Test
    void aRateLimitedCreateSaysWhenToComeBack() throws Exception {
        emulator.faults().rateLimitCreate(1, 7);
        Wire.Answer a = wire.create("{}");
        DaytonaEmulatorWireTest.assertApiError(a, 429, "Too Many Requests", "ThrottlerException: Too Many Requests", "/api/sandbox");
        assertEquals("7", a.raw.headers().firstValue("Retry-After").orElse(null));
        assertEquals(0, emulator.ledger().created());
    }

    @Test
    void aLostCreateLeavesASandboxThatTheRunLabelFinds() throws Exception {
        emulator.faults().loseCreateResponse(1);
        assertThrows(IOException.class, () -> wire.create("{\"labels\":{\"sandbox4j-run-id\":\"lost1\"}}"));
        assertEquals(1, emulator.ledger().live(), "the sandbox was created");
        Wire.Answer found = wire.get("/sandbox?labels=" + Wire.encode("{\"sandbox4j-run-id\":\"lost1\"}"));
        assertEquals(1, found.json.get("items").size());
        assertEquals(200, wire.delete(found.json.get("items").get(0).get("id").asText()).status);
        assertEquals(0, emulator.ledger().live());
    }

    @Test
    void aFailedStartIsA400AfterTheSandboxExists() throws Exception {
        emulator.failStart(1);
        DaytonaEmulatorWireTest.assertApiError(wire.create("{\"labels\":{\"sandbox4j-run-id\":\"fs1\"}}"), 400, "Bad Request",
                "Sandbox failed to start: emulated start failure", "/api/sandbox");
        Wire.Answer found = wire.get("/sandbox?labels=" + Wire.encode("{\"sandbox4j-run-id\":\"fs1\"}"));
        assertEquals("error", found.json.get("items").get(0).get("state").asText());
        assertEquals(1, emulator.ledger().live());
        assertEquals(200, wire.delete(found.json.get("items").get(0).get("id").asText()).status);
    }

    @Test
    void aDroppedStreamCutsTheAnswerMidBodyWhileTheCommandRunsOn() throws Exception {
        String id = wire.createOk("{}");
        emulator.faults().dropStream(1);
        HttpResponse<InputStream> r = wire.client.send(wire.toolbox(id, "/process/execute")
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"command\":\"echo ran > marker.txt; sleep 1\",\"timeout\":10}")).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, r.statusCode(), "the headers came");
        try (InputStream in = r.body()) {
            assertThrows(IOException.class, in::readAllBytes, "the body must end without its terminator");
        }
        ProcessMachine m = machines.last();
        long until = System.nanoTime() + 20_000_000_000L;
        while (!Files.exists(m.dir.resolve("marker.txt")) && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertTrue(Files.exists(m.dir.resolve("marker.txt")), "the command ran");
        // the next exec waits for the orphaned command, then works
        assertEquals("ran\n", wire.execute(id, "{\"command\":\"cat marker.txt\",\"timeout\":10}").json.get("result").asText());
        assertEquals(200, wire.delete(id).status);
    }

    @Test
    void aFailingTeardownLeavesTheSandboxUntilItSucceeds() throws Exception {
        String id = wire.createOk("{}");
        emulator.faults().failTeardown(500, 2);
        DaytonaEmulatorWireTest.assertApiError(wire.delete(id), 500, "Internal Server Error",
                "An unexpected error occurred.", "/api/sandbox/" + id);
        emulator.faults().failTeardown(409, 1);
        DaytonaEmulatorWireTest.assertApiError(wire.delete(id), 409, "Conflict",
                "Sandbox state change in progress", "/api/sandbox/" + id);
        assertEquals(1, emulator.ledger().live());
        assertEquals(200, wire.delete(id).status);
        assertEquals(0, emulator.ledger().live());
    }

    @Test
    void hostileFramingStreamsAnEndlessResultTheClientCanWalkAwayFrom() throws Exception {
        String id = wire.createOk("{}");
        emulator.faults().hostileFraming(true);
        HttpResponse<InputStream> r = wire.client.send(wire.toolbox(id, "/process/code-run")
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"code\":\"print(1)\",\"language\":\"python\",\"timeout\":10}")).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, r.statusCode());
        long read = 0;
        byte[] buf = new byte[64 * 1024];
        try (InputStream in = r.body()) {
            byte[] head = in.readNBytes(11);
            assertEquals("{\"result\":\"", new String(head, java.nio.charset.StandardCharsets.US_ASCII));
            while (read < 8L * 1024 * 1024) {
                int n = in.read(buf);
                assertTrue(n > 0, "the result string ended after " + read + " bytes");
                for (int i = 0; i < n; i++) {
                    if (buf[i] != 'A') {
                        throw new AssertionError("unexpected byte " + buf[i] + " at " + (read + i));
                    }
                }
                read += n;
            }
        }
        assertTrue(machines.last().scripts.isEmpty(), "no command ran for the hostile answer");
        emulator.faults().hostileFraming(false);
        assertEquals("1\n", wire.codeRun(id, "{\"code\":\"print(1)\",\"language\":\"python\",\"timeout\":10}").json.get("result").asText());
        assertEquals(200, wire.delete(id).status);
    }

    @Test
    void slowAnswersStillArrive() throws Exception {
        emulator.faults().slow(Duration.ofMillis(50));
        String id = wire.createOk("{}");
        assertEquals(200, wire.get("/sandbox/" + id).status);
        assertEquals(200, wire.delete(id).status);
    }

    @Test
    void anIdleEphemeralSandboxIsStoppedAndDeletedByItsOwnClock() throws Exception {
        // a minute lasts 200 ms here: autoStopInterval 1 => stopped after ~200 ms idle, then deleted at once
        String id = wire.createOk("{\"autoStopInterval\":1,\"autoDeleteInterval\":0,\"labels\":{\"k\":\"v\"}}");
        String kept = wire.createOk("{\"autoStopInterval\":0}");
        long until = System.nanoTime() + 20_000_000_000L;
        while (emulator.sandboxIds().contains(id) && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertEquals(java.util.Set.of(kept), emulator.sandboxIds(), "the crashed client's sandbox went away by itself");
        assertEquals(404, wire.get("/sandbox/" + id).status);
        assertEquals("started", wire.get("/sandbox/" + kept).json.get("state").asText(), "autoStopInterval 0 disables it");
        assertEquals(200, wire.delete(kept).status);
    }

    @Test
    void knobsOverHttpForTheConformanceRun() throws Exception {
        Wire.Answer ok = wire.send(HttpRequest.newBuilder(URI.create(emulator.baseUrl() + "/_emulator/faults"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"failCreate\":{\"status\":500,\"times\":1},\"startingPolls\":1}")).build());
        assertEquals(200, ok.status);
        assertEquals(500, wire.create("{}").status);
        Wire.Answer a = wire.create("{}");
        assertEquals("starting", a.json.get("state").asText());
        wire.send(HttpRequest.newBuilder(URI.create(emulator.baseUrl() + "/_emulator/faults"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"reset\":true}")).build());
        assertEquals("started", wire.create("{}").json.get("state").asText());
        for (String id : emulator.sandboxIds()) {
            wire.get("/sandbox/" + id);
            assertEquals(200, wire.delete(id).status);
        }
    }
}
