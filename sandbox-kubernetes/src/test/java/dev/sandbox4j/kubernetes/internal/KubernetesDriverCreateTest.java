package dev.sandbox4j.kubernetes.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.emulators.Faults.Fault;
import dev.sandbox4j.emulators.kubernetes.AgentSandboxEmulator;
import dev.sandbox4j.local.LocalSandboxRunner;
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
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The driver's creates are idempotent by name: a create answered 500/503 is sent again with the same
 * name and body, and a 409 then adopts what an earlier send stored when it is this run's, and refuses
 * (leaving it alone) when it is not; a create with no readable answer (lost, garbled) is read back by
 * name and adopted, never sent again. On the agent-sandbox
 * emulator's fault knobs, with a backoff on a fake clock whose (recorded) sleeps wait a little real time
 * only, so that a pod started for real is seen Ready.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KubernetesDriverCreateTest {
    private static final String NS = "sandboxes";
    private static final Duration BASE = Duration.ofMillis(100);
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(20);
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private LocalSandboxRunner local;
    private AgentSandboxEmulator emulator;
    private KubernetesClient client;
    private KubernetesDriver driver;
    private KubernetesSettings settings;
    private Backoff backoff;
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final List<Duration> slept = new CopyOnWriteArrayList<>();
    private volatile Runnable atFirstSleep = () -> { };

    @BeforeAll
    void start() throws IOException {
        local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048).build();
        emulator = AgentSandboxEmulator.start(local);
        Config c = Config.empty();
        c.setMasterUrl(emulator.url());
        c.setNamespace(NS);
        c.setRequestRetryBackoffLimit(0);
        c.setRequestTimeout((int) REQUEST_TIMEOUT.toMillis());
        client = new KubernetesClientBuilder().withConfig(c).withHttpClientFactory(new JdkHttpClientFactory()).build();
        KubernetesSettings s = settings = new KubernetesSettings(NS, "img:1", null, 1000, 1000, "/sandbox", 1024, 512, "1",
                REQUEST_TIMEOUT, Duration.ofSeconds(60), Duration.ofSeconds(5), 32 * 1024, List.of(), Duration.ofMillis(20));
        Backoff fake = backoff = Backoff.builder().base(BASE).jitter(0).nanoClock(now::get).sleeper(d -> {
            slept.add(d);
            if (slept.size() == 1) {
                atFirstSleep.run();
            }
            now.addAndGet(d.toNanos());
            Thread.sleep(Math.min(20, d.toMillis())); // the pod starts in real time
        }).build();
        driver = new KubernetesDriver(s, client, Clock.systemUTC(), fake);
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
        emulator.faults().reset();
        emulator.clearCalls();
        slept.clear();
        atFirstSleep = () -> { };
    }

    @AfterEach
    void nothingLeft() throws InterruptedException {
        emulator.faults().reset();
        long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while ((emulator.objects() != 0 || local.openSandboxes() != 0) && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertEquals(0, emulator.objects(), "objects left: " + emulator.calls());
        assertEquals(0, local.openSandboxes(), "local sandboxes open");
    }

    private long posts(String resource) {
        return emulator.calls().stream().filter(c -> c.startsWith("POST ") && c.contains("/" + resource)).count();
    }

    private List<String> sandboxCreates() {
        return emulator.createsReceived().stream().filter(c -> c.startsWith("sandboxes/")).toList();
    }

    @Test
    void a503OnTheSandboxCreateIsSentAgainWithTheSameNameAndOneSandboxStarts() throws Exception {
        emulator.faults().failCreate(503, 1);
        int before = emulator.sandboxesCreated();
        int fired = emulator.faults().fired(Fault.FAIL_CREATE);
        KubernetesHandle h = driver.create(CreateRequest.of("resend503", SandboxSpec.defaults()));
        try {
            String name = PodSpecs.name("resend503");
            assertEquals(name, h.id());
            assertEquals(1, emulator.faults().fired(Fault.FAIL_CREATE) - fired);
            assertEquals(List.of("sandboxes/" + name, "sandboxes/" + name), sandboxCreates(), "the same create, twice");
            assertEquals(1, emulator.sandboxesCreated() - before, "one Sandbox");
            assertEquals(1, posts("networkpolicies"), "the policy's create was answered: sent once");
            assertEquals(BASE, slept.get(0), "the re-send waited the driver's first backoff delay: " + slept);
            assertNotNull(emulator.object("sandboxes", NS, name));
        } finally {
            driver.destroy(h);
        }
    }

    /**
     * A lost answer (the create was stored): not sent again (it might still be stored later, and two writes
     * in flight could store a second Sandbox after the first was deleted) but read back by name, and adopted.
     */
    @Test
    void aLostCreateAnswerIsReadBackAndTheSandboxTheSendStoredAdopted() throws Exception {
        emulator.faults().loseCreateResponse(1);
        int before = emulator.sandboxesCreated();
        int fired = emulator.faults().fired(Fault.LOSE_CREATE_RESPONSE);
        KubernetesHandle h = driver.create(CreateRequest.of("lostanswer", SandboxSpec.defaults()));
        try {
            String name = PodSpecs.name("lostanswer");
            assertEquals(name, h.id());
            assertEquals(1, emulator.faults().fired(Fault.LOSE_CREATE_RESPONSE) - fired);
            assertEquals(List.of("sandboxes/" + name), sandboxCreates(), "sent once");
            assertEquals(1, emulator.sandboxesCreated() - before, "the send's Sandbox, adopted: " + emulator.calls());
            assertTrue(emulator.calls().contains("GET /apis/agents.x-k8s.io/v1beta1/namespaces/sandboxes/sandboxes/" + name),
                    "read back by name: " + emulator.calls());
        } finally {
            driver.destroy(h);
        }
    }

    /** A lost answer to a create that was not stored: read back, not there, so ambiguous (no second write in flight). */
    @Test
    void aLostCreateNotStoredIsAmbiguousAndNotSentAgain() throws Exception {
        emulator.faults().lateCreate(1, Duration.ofSeconds(3));
        SandboxException e = assertThrows(SandboxException.class, () -> driver.create(CreateRequest.of("latewrite", SandboxSpec.defaults())));
        assertTrue(e.requestMayHaveSucceeded(), e.toString());
        assertEquals(1, sandboxCreates().size(), "sent once: " + emulator.calls());
        long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (emulator.object("sandboxes", NS, PodSpecs.name("latewrite")) == null && System.nanoTime() < until) {
            Thread.sleep(20); // stored within 3 s of the request
        }
        // what the lifecycle's lookup does: it finds the late Sandbox, and destroy removes it and its policy
        List<KubernetesHandle> found = driver.findByRunId("latewrite");
        assertEquals(1, found.size(), emulator.calls().toString());
        driver.destroy(found.get(0));
    }

    @Test
    void aGarbledCreateAnswerIsReadBackAndAdopted() throws Exception {
        emulator.faults().garbleCreate(1);
        int before = emulator.sandboxesCreated();
        int fired = emulator.faults().fired(Fault.GARBLE_CREATE);
        KubernetesHandle h = driver.create(CreateRequest.of("garbledcreate", SandboxSpec.defaults()));
        try {
            assertEquals(1, emulator.faults().fired(Fault.GARBLE_CREATE) - fired);
            assertEquals(1, sandboxCreates().size(), "sent once: " + emulator.calls());
            assertEquals(1, emulator.sandboxesCreated() - before);
            assertTrue(emulator.calls().contains("GET /apis/agents.x-k8s.io/v1beta1/namespaces/sandboxes/sandboxes/"
                    + PodSpecs.name("garbledcreate")), "read back by name: " + emulator.calls());
        } finally {
            driver.destroy(h);
        }
    }

    /** A 429 after a send in doubt is sent again too, after the Retry-After the API server asked for. */
    @Test
    void a429AfterA500IsSentAgainAfterItsRetryAfter() throws Exception {
        emulator.faults().failCreate(500, 1);
        atFirstSleep = () -> emulator.faults().rateLimitCreate(1, 3);
        int fired = emulator.faults().fired(Fault.RATE_LIMIT_CREATE);
        KubernetesHandle h = driver.create(CreateRequest.of("ratelimited", SandboxSpec.defaults()));
        try {
            assertEquals(1, emulator.faults().fired(Fault.RATE_LIMIT_CREATE) - fired);
            assertEquals(3, sandboxCreates().size(), emulator.calls().toString());
            assertEquals(List.of(BASE, Duration.ofSeconds(3)), slept.subList(0, 2), "delays: " + slept);
        } finally {
            driver.destroy(h);
        }
    }

    @Test
    void aNameTakenByAnotherRunsSandboxIsRefusedAndItIsLeftAlone() throws Exception {
        String name = PodSpecs.name("takenname");
        // another run's Sandbox under this name (a forged or colliding one): its run-id label is not ours
        post("agents.x-k8s.io/v1beta1", "sandboxes", "{\"apiVersion\":\"agents.x-k8s.io/v1beta1\",\"kind\":\"Sandbox\","
                + "\"metadata\":{\"name\":\"" + name + "\",\"labels\":{\"" + CreateRequest.RUN_ID_LABEL + "\":\"someoneelse\"}},"
                + "\"spec\":{\"podTemplate\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}}}");
        emulator.faults().failCreate(503, 1); // the first send in doubt, then the re-send meets the other's 409
        emulator.clearCalls();
        try {
            SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class,
                    () -> driver.create(CreateRequest.of("takenname", SandboxSpec.defaults())));
            assertEquals("kubernetes: create Sandbox " + name + " failed: HTTP 409 AlreadyExists, and the Sandbox of that name"
                    + " is not this run's (its " + CreateRequest.RUN_ID_LABEL + " label is 'someoneelse', not this request's);"
                    + " it is left alone", e.getMessage());
            assertFalse(e.requestMayHaveSucceeded());
            assertFalse(e.isRetriable());
            assertEquals(409, e.httpStatus().getAsInt());
            assertEquals("someoneelse", emulator.object("sandboxes", NS, name).path("metadata").path("labels")
                    .path(CreateRequest.RUN_ID_LABEL).asText(), "the other's Sandbox is still there");
            assertTrue(emulator.calls().stream().noneMatch(c -> c.startsWith("DELETE") && c.contains("/sandboxes/sandboxes/")),
                    "nothing of the other's deleted: " + emulator.calls());
            assertNull(emulator.object("networkpolicies", NS, PodSpecs.policyName("takenname")), "this run's policy went");
            assertEquals(0, driver.openSandboxes());
        } finally {
            delete("agents.x-k8s.io/v1beta1", "sandboxes", name);
        }
    }

    @Test
    void aNetworkPolicyOfThisRunWithAnotherSpecIsNotAdopted() throws Exception {
        String name = PodSpecs.policyName("widerpolicy");
        // this run's labels, but egress allowed to everything: never taken for the deny-all policy this create sends
        post("networking.k8s.io/v1", "networkpolicies", "{\"apiVersion\":\"networking.k8s.io/v1\",\"kind\":\"NetworkPolicy\","
                + "\"metadata\":{\"name\":\"" + name + "\",\"labels\":{\"" + CreateRequest.RUN_ID_LABEL + "\":\"widerpolicy\"}},"
                + "\"spec\":{\"podSelector\":{},\"policyTypes\":[\"Egress\"],\"egress\":[{}]}}");
        try {
            SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class,
                    () -> driver.create(CreateRequest.of("widerpolicy", SandboxSpec.defaults())));
            assertTrue(e.getMessage().contains("its spec differs from this run's policy"), e.getMessage());
            assertEquals(0, sandboxCreates().size(), "no Sandbox without its policy");
            assertNotNull(emulator.object("networkpolicies", NS, name), "left alone");
        } finally {
            delete("networking.k8s.io/v1", "networkpolicies", name);
        }
    }

    @Test
    void whenTheResendsRunOutTheCreateIsAmbiguousAsBefore() throws Exception {
        emulator.faults().failCreate(503, 1 + KubernetesDriver.CREATE_RESENDS);
        String runId = "exhausted";
        SandboxException e = assertThrows(SandboxException.class, () -> driver.create(CreateRequest.of(runId, SandboxSpec.defaults())));
        assertTrue(e.requestMayHaveSucceeded(), e.toString());
        assertFalse(e.isRetriable());
        assertEquals(503, e.httpStatus().getAsInt());
        assertEquals(Collections.nCopies(1 + KubernetesDriver.CREATE_RESENDS, "sandboxes/" + PodSpecs.name(runId)), sandboxCreates());
        assertEquals(List.of(BASE, BASE.multipliedBy(2), BASE.multipliedBy(4)), slept);
        // what the lifecycle's lookup by run id does next: it finds the run (its policy) and destroy removes it
        List<KubernetesHandle> found = driver.findByRunId(runId);
        assertEquals(0, found.size(), "the Sandbox create is in doubt: the policy alone is deleted, the lookup goes on");
        assertNull(emulator.object("networkpolicies", NS, PodSpecs.policyName(runId)));
    }

    /** The policy's create answer garbled (the emulator's garbled-answer knob acts on it): read back, and adopted. */
    @Test
    void aGarbledNetworkPolicyCreateAnswerIsReadBackAndAdopted() throws Exception {
        emulator.faults().garbleAnswer(1);
        int fired = emulator.faults().fired(Fault.GARBLE_ANSWER);
        KubernetesHandle h = driver.create(CreateRequest.of("garbledpolicy", SandboxSpec.defaults()));
        try {
            assertEquals(1, emulator.faults().fired(Fault.GARBLE_ANSWER) - fired);
            String name = PodSpecs.policyName("garbledpolicy");
            assertEquals(List.of("networkpolicies/" + name, "sandboxes/" + PodSpecs.name("garbledpolicy")),
                    emulator.createsReceived());
            assertTrue(emulator.calls().contains("GET /apis/networking.k8s.io/v1/namespaces/sandboxes/networkpolicies/" + name),
                    emulator.calls().toString());
        } finally {
            driver.destroy(h);
        }
    }

    /** A garbled answer to a GET of the Ready poll is read again at the next look, not a failed create. */
    @Test
    void aGarbledReadyPollAnswerIsReadAgain() throws Exception {
        emulator.holdPending(1);
        int fired = emulator.faults().fired(Fault.GARBLE_ANSWER);
        atFirstSleep = () -> {
            long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (emulator.heldPending() != 1 && System.nanoTime() < until) {
                java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
            }
            emulator.faults().garbleAnswer(1); // the next look's answer
            emulator.releasePending();
        };
        KubernetesHandle h = driver.create(CreateRequest.of("garbledget", SandboxSpec.defaults()));
        try {
            assertEquals(1, emulator.faults().fired(Fault.GARBLE_ANSWER) - fired);
            assertEquals(1, sandboxCreates().size(), "the create itself was answered: " + emulator.calls());
            assertTrue(emulator.calls().stream().noneMatch(c -> c.startsWith("DELETE")), emulator.calls().toString());
        } finally {
            driver.destroy(h);
        }
    }

    private void post(String group, String resource, String json) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(emulator.url() + "/apis/" + group + "/namespaces/" + NS
                + "/" + resource)).POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(201, r.statusCode(), r.body());
    }

    private void delete(String group, String resource, String name) throws Exception {
        HTTP.send(HttpRequest.newBuilder(URI.create(emulator.url() + "/apis/" + group + "/namespaces/" + NS + "/" + resource + "/"
                + name)).DELETE().build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * A run id stays in doubt (a lookup that finds only its policy goes on looking) for {@code IN_DOUBT_FOR}
     * after its create went unanswered; the first create after that drops it, so a long-lived runner that
     * meets many lost creates does not keep them all.
     */
    @Test
    void aRunIdInDoubtIsDroppedAtTheFirstCreateAfterAnHour() throws Exception {
        AtomicReference<Instant> at = new AtomicReference<>(Instant.now()); // the Sandbox's shutdown time comes from it: not in the past
        Clock clock = new Clock() {
            @Override
            public ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return at.get();
            }
        };
        KubernetesDriver d = new KubernetesDriver(settings, client, clock, backoff);
        emulator.faults().lateCreate(1, Duration.ofSeconds(3));
        assertThrows(SandboxException.class, () -> d.create(CreateRequest.of("doubt1", SandboxSpec.defaults())));
        assertEquals(1, d.createsInDoubt());
        String name = PodSpecs.name("doubt1");
        long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (emulator.object("sandboxes", NS, name) == null && System.nanoTime() < until) {
            Thread.sleep(20); // stored within 3 s of the request
        }
        d.destroy(new KubernetesHandle(name, "doubt1", name)); // removed behind the lookup's back: still in doubt
        assertEquals(1, d.createsInDoubt());

        at.set(at.get().plus(KubernetesDriver.IN_DOUBT_FOR).minusSeconds(60));
        KubernetesHandle second = d.create(CreateRequest.of("doubt2", SandboxSpec.defaults()));
        try {
            assertEquals(1, d.createsInDoubt(), "59 minutes on, doubt1 is still in doubt");
            at.set(at.get().plusSeconds(120));
            KubernetesHandle third = d.create(CreateRequest.of("doubt3", SandboxSpec.defaults()));
            try {
                assertEquals(0, d.createsInDoubt(), "61 minutes on, the next create dropped doubt1");
            } finally {
                d.destroy(third);
            }
        } finally {
            d.destroy(second);
        }
    }
}
