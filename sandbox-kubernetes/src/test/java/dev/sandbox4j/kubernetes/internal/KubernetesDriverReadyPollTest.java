package dev.sandbox4j.kubernetes.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.emulators.kubernetes.AgentSandboxEmulator;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.spi.Backoff;
import dev.sandbox4j.spi.CreateRequest;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The driver's Ready polls ({@code awaitReady} for a Sandbox, {@code awaitClaimed} for a SandboxClaim) go
 * through its {@link Backoff#poll}, here on a fake clock that only the (recording) sleeper moves: the
 * bound is exact and no real time is waited. The cluster is the agent-sandbox emulator, which holds the
 * pods of Sandboxes Pending ({@link AgentSandboxEmulator#holdPending}) until the test releases them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KubernetesDriverReadyPollTest {
    private static final String NS = "sandboxes";
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration READY_POLL = Duration.ofMillis(250);
    private static final long START = 1_000_000_000L;
    /** From 20 ms, each 1.5 times the last plus 1 ms, up to the 250 ms ready poll. */
    private static final List<Duration> FIRST_DELAYS = List.of(Duration.ofMillis(20), Duration.ofMillis(31),
            Duration.ofNanos(47_500_000L), Duration.ofNanos(72_250_000L), Duration.ofNanos(109_375_000L),
            Duration.ofNanos(165_062_500L), Duration.ofNanos(248_593_750L), READY_POLL);
    /** Those up to the cap, then 250 ms, until the next would pass 10 s: 44 delays, 45 looks. */
    private static final long NEVER_READY_SLEEPS = 44;
    private static final long NEVER_READY_ELAPSED = 693_781_250L + 37 * 250_000_000L;
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private LocalSandboxRunner local;
    private AgentSandboxEmulator emulator;
    private KubernetesClient client;
    private final AtomicLong now = new AtomicLong(START);
    private final List<Duration> slept = new CopyOnWriteArrayList<>();
    /** Run by the sleeper at its n-th delay (from 1), before the fake clock moves on. */
    private volatile java.util.function.IntConsumer atSleep = n -> { };

    @BeforeAll
    void start() throws IOException, InterruptedException {
        local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048).build();
        emulator = AgentSandboxEmulator.start(local);
        Config c = Config.empty();
        c.setMasterUrl(emulator.url());
        c.setNamespace(NS);
        c.setRequestRetryBackoffLimit(0);
        c.setRequestTimeout(20_000);
        client = new KubernetesClientBuilder().withConfig(c).withHttpClientFactory(new JdkHttpClientFactory()).build();
        // the claim path's pool: cold starts only (no replicas), so each claim's Sandbox starts when claimed
        post("sandboxtemplates", driver(true).sandboxTemplateJson("deny", SandboxSpec.defaults()));
        post("sandboxwarmpools", "{\"apiVersion\":\"extensions.agents.x-k8s.io/v1beta1\",\"kind\":\"SandboxWarmPool\","
                + "\"metadata\":{\"name\":\"deny-pool\"},\"spec\":{\"replicas\":0,\"sandboxTemplateRef\":{\"name\":\"deny\"}}}");
        await("the template's NetworkPolicy", () -> emulator.object("networkpolicies", NS, "deny-network-policy") != null);
    }

    @AfterAll
    void stop() {
        if (client != null) {
            client.close();
        }
        if (emulator != null) {
            emulator.close();
        }
        if (local != null) {
            local.close();
        }
    }

    @BeforeEach
    void reset() {
        now.set(START);
        slept.clear();
        atSleep = n -> { };
        emulator.clearCalls();
    }

    @AfterEach
    void nothingLeft() throws InterruptedException {
        emulator.releasePending(); // a failed test leaves no hold for the next
        await("nothing left", () -> emulator.leaksOutsidePools() == 0);
        assertEquals(0, local.openSandboxes(), "local sandboxes open");
    }

    private KubernetesDriver driver(boolean claims) {
        List<Map.Entry<EgressPolicy, String>> pools = claims ? List.of(Map.entry(EgressPolicy.denyAll(), "deny-pool")) : List.of();
        KubernetesSettings s = new KubernetesSettings(NS, "img:1", null, 1000, 1000, "/sandbox", 1024, 512, "1",
                Duration.ofSeconds(20), READY_TIMEOUT, Duration.ofSeconds(5), 32 * 1024, pools, READY_POLL);
        Backoff fake = Backoff.builder().nanoClock(now::get).sleeper(d -> {
            slept.add(d);
            atSleep.accept(slept.size());
            now.addAndGet(d.toNanos());
        }).build();
        return new KubernetesDriver(s, client, Clock.systemUTC(), fake);
    }

    /** The GETs of one object the emulator answered (the looks of a poll). */
    private long gets(String resource, String name) {
        String group = resource.equals("sandboxes") ? "agents.x-k8s.io" : "extensions.agents.x-k8s.io";
        String path = "GET /apis/" + group + "/v1beta1/namespaces/" + NS + "/" + resource + "/" + name;
        return emulator.calls().stream().filter(c -> c.equals(path) || c.startsWith(path + " ")).count();
    }

    /** At the sleeper's {@code n}-th delay: once the Sandbox is held Pending, start its pod, and wait for {@code ready}. */
    private void releaseAt(int n, BooleanSupplier ready) {
        atSleep = k -> {
            if (k == n) {
                try {
                    await("a held Sandbox", () -> emulator.heldPending() == 1);
                    assertEquals(1, emulator.releasePending());
                    await("Ready after the release", ready);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError(e);
                }
            }
        };
    }

    private boolean readyTrue(String resource, String name) {
        var o = emulator.object(resource, NS, name);
        if (o == null) {
            return false;
        }
        for (var c : o.path("status").path("conditions")) {
            if (c.path("type").asText().equals("Ready")) {
                return c.path("status").asText().equals("True");
            }
        }
        return false;
    }

    private void assertNeverReadyBound(long looks) {
        assertEquals(NEVER_READY_SLEEPS, slept.size(), "delays: " + slept);
        assertEquals(FIRST_DELAYS, slept.subList(0, FIRST_DELAYS.size()), "delays: " + slept);
        assertTrue(slept.subList(FIRST_DELAYS.size(), slept.size()).stream().allMatch(READY_POLL::equals), "delays: " + slept);
        long elapsed = now.get() - START;
        assertEquals(NEVER_READY_ELAPSED, elapsed, "the fake clock at the timeout");
        assertTrue(elapsed <= READY_TIMEOUT.toNanos() && elapsed + READY_POLL.toNanos() > READY_TIMEOUT.toNanos(),
                "the last look is the last one that starts within the ready timeout: " + elapsed);
        assertEquals(NEVER_READY_SLEEPS + 1, looks, "one look at once, then one after each delay");
    }

    @Test
    void aSandboxNeverReadyFailsTheCreateAtTheReadyTimeoutOnTheFakeClock() throws Exception {
        KubernetesDriver driver = driver(false);
        emulator.holdPending(1);
        long real = System.nanoTime();
        SandboxException e = assertThrows(SandboxException.class, () -> driver.create(CreateRequest.of("never1", SandboxSpec.defaults())));
        long realElapsed = System.nanoTime() - real;
        String name = PodSpecs.name("never1");
        assertEquals("kubernetes: Sandbox " + name + " was not Ready within PT10S (DependenciesNotReady: Pod exists with phase: Pending)",
                e.getMessage());
        assertTrue(e.isRetriable());
        assertNeverReadyBound(gets("sandboxes", name));
        assertTrue(realElapsed < READY_TIMEOUT.toNanos(), "no real wait for the bound: " + Duration.ofNanos(realElapsed));
        // the failed create removed what it made
        assertEquals(0, emulator.objects("sandboxes"));
        assertEquals(null, emulator.object("networkpolicies", NS, PodSpecs.policyName("never1")));
        assertEquals(0, driver.openSandboxes());
    }

    @Test
    void aSandboxReadyOnTheFourthLookIsReturnedAfterThreeDelays() throws Exception {
        KubernetesDriver driver = driver(false);
        String name = PodSpecs.name("late1");
        emulator.holdPending(1);
        releaseAt(3, () -> readyTrue("sandboxes", name));
        KubernetesHandle h = driver.create(CreateRequest.of("late1", SandboxSpec.defaults()));
        try {
            assertEquals(name, h.id());
            assertEquals(name, h.podName());
            assertEquals(4, gets("sandboxes", name), "calls: " + emulator.calls());
            assertEquals(FIRST_DELAYS.subList(0, 3), slept);
            assertEquals(98_500_000L, now.get() - START);
        } finally {
            driver.destroy(h);
        }
    }

    @Test
    void aSandboxDeletedWhileStartingFailsAtTheNextLook() throws Exception {
        KubernetesDriver driver = driver(false);
        String name = PodSpecs.name("gone1");
        emulator.holdPending(1);
        atSleep = n -> {
            if (n == 2) {
                send("DELETE", "/apis/agents.x-k8s.io/v1beta1/namespaces/" + NS + "/sandboxes/" + name, null, 200);
            }
        };
        SandboxException e = assertThrows(SandboxException.class, () -> driver.create(CreateRequest.of("gone1", SandboxSpec.defaults())));
        assertEquals("kubernetes: Sandbox " + name + " disappeared while starting", e.getMessage());
        assertTrue(e.isRetriable());
        assertEquals(3, gets("sandboxes", name));
        assertEquals(FIRST_DELAYS.subList(0, 2), slept);
    }

    @Test
    void aClaimNeverReadyFailsTheCreateAtTheReadyTimeoutOnTheFakeClock() throws Exception {
        KubernetesDriver driver = driver(true);
        emulator.holdPending(1);
        long real = System.nanoTime();
        SandboxException e = assertThrows(SandboxException.class, () -> driver.create(CreateRequest.of("never2", SandboxSpec.defaults())));
        long realElapsed = System.nanoTime() - real;
        String name = PodSpecs.name("never2");
        assertEquals("kubernetes: SandboxClaim " + name + " was not Ready within PT10S (DependenciesNotReady: Pod exists with phase:"
                + " Pending)", e.getMessage());
        assertTrue(e.isRetriable());
        assertNeverReadyBound(gets("sandboxclaims", name));
        assertTrue(realElapsed < READY_TIMEOUT.toNanos(), "no real wait for the bound: " + Duration.ofNanos(realElapsed));
        assertEquals(0, emulator.objects("sandboxclaims"), "the failed create deleted its claim");
        assertEquals(0, driver.openSandboxes());
    }

    @Test
    void aClaimReadyOnTheFourthLookIsReturnedAfterThreeDelays() throws Exception {
        KubernetesDriver driver = driver(true);
        String name = PodSpecs.name("late2");
        emulator.holdPending(1);
        releaseAt(3, () -> readyTrue("sandboxclaims", name));
        KubernetesHandle h = driver.create(CreateRequest.of("late2", SandboxSpec.defaults()));
        try {
            assertTrue(h.claim());
            assertEquals(name, h.sandboxName(), "a cold start: the Sandbox is named after the claim");
            assertEquals(name, h.podName());
            assertEquals(4, gets("sandboxclaims", name), "calls: " + emulator.calls());
            assertEquals(FIRST_DELAYS.subList(0, 3), slept);
        } finally {
            driver.destroy(h);
        }
    }

    private void post(String resource, String json) {
        send("POST", "/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/" + NS + "/" + resource, json, 201);
    }

    /** One request to the emulator as a client (kubectl) would send it; the status must be {@code expected}. */
    private void send(String method, String path, String body, int expected) {
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(emulator.url() + path)).method(method,
                    body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(expected, r.statusCode(), method + " " + path + ": " + r.body());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Waits (real time, bounded at 30 s) for the emulator to reach a state. */
    private static void await(String what, BooleanSupplier done) throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > until) {
                throw new AssertionError("not reached within 30 s: " + what);
            }
            Thread.sleep(5);
        }
    }
}
