package dev.sandbox4j.kubernetes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.SandboxRunners;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** Faults of the API server (on the emulator) and refusals before any call; nothing is left behind. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KubernetesFaultTest {
    private EmulatedCluster cluster;
    private KubernetesSandboxRunner runner;

    @BeforeAll
    void start() {
        cluster = new EmulatedCluster();
        runner = cluster.runner().build();
    }

    @AfterAll
    void stop() {
        runner.close();
        cluster.close();
    }

    @BeforeEach
    void clean() {
        cluster.emulator.faults().reset();
        cluster.emulator.clearCalls();
    }

    /** Teardown and the lookup of an ambiguous create may end just after the call returns: wait, bounded. */
    @AfterEach
    void nothingLeft() throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (cluster.leaks() != 0 && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertEquals(0, cluster.leaks(), "pods, objects and local sandboxes left: " + cluster.emulator.calls());
    }

    private List<String> writes() {
        return cluster.emulator.calls().stream().filter(c -> !c.startsWith("GET")).toList();
    }

    /**
     * A Sandbox create whose connection drops and which the API server stores only later: the first
     * lookup finds the run's NetworkPolicy alone. That is not the sandbox (the old driver took it for one,
     * deleted the policy and stopped looking, and the Sandbox stored afterwards was left running): the
     * lookup goes on, and the late Sandbox is deleted too (checked after each test: nothing left).
     */
    @Test
    void aLateSandboxCreateIsFoundAfterItsPolicyAlone() {
        // the driver reads a create with no answer back (not sent again): a late one is not there yet, so
        // the create stays ambiguous (were it stored within the read's round trip, it would be adopted and
        // the run go on: a few milliseconds of up to 3 s, so the scenario is tried up to three times)
        int before = cluster.emulator.sandboxesCreated();
        try (KubernetesSandboxRunner r = cluster.runner().lostCreateWindow(Duration.ofSeconds(6)).build()) {
            SandboxException e = null;
            for (int i = 0; i < 3 && e == null; i++) {
                before = cluster.emulator.sandboxesCreated();
                int fired = cluster.emulator.faults().fired(dev.sandbox4j.emulators.Faults.Fault.LATE_CREATE);
                cluster.emulator.faults().lateCreate(1, Duration.ofMillis(3000));
                try {
                    r.run(RunRequest.python("print(1)"));
                } catch (SandboxException x) {
                    e = x;
                }
                assertEquals(1, cluster.emulator.faults().fired(dev.sandbox4j.emulators.Faults.Fault.LATE_CREATE) - fired);
            }
            assertTrue(e != null && e.requestMayHaveSucceeded(), String.valueOf(e));
            long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (cluster.emulator.sandboxesCreated() == before && System.nanoTime() < until) {
                LockSupport.parkNanos(Duration.ofMillis(20).toNanos()); // the late Sandbox is stored within 3 s
            }
            assertEquals(before + 1, cluster.emulator.sandboxesCreated());
            until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (cluster.emulator.objects("sandboxes") != 0 && System.nanoTime() < until) {
                LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
            }
            assertEquals(0, cluster.emulator.objects("sandboxes"), "the late Sandbox was left: " + cluster.emulator.calls());
        }
    }

    /**
     * The exec's connection drops before its upgrade is answered, after the command started: the JDK's
     * HTTP client re-sends the upgrade (a GET) once. The code runs once (the old driver ran it twice and
     * returned the second run's result), and the run says the code may have run.
     */
    @Test
    void aLostExecAnswerRunsTheCodeOnceAndSaysItMayHaveRun() {
        cluster.emulator.faults().loseExecResponse(1);
        SandboxException e = assertThrows(SandboxException.class, () -> runner.run(RunRequest.python("print('ran-' + 'once')")));
        assertTrue(e.codeMayHaveRun(), e.toString());
        long ran = cluster.emulator.printedLedger().sandboxes().stream().flatMap(s -> s.execs().stream())
                .filter(x -> x.code().contains("ran-once")).count();
        assertEquals(1, ran, "the code's runs: " + cluster.emulator.calls());
    }

    @Test
    void oneRunIsTheseWritesInThisOrder() {
        RunResult r = runner.run(RunRequest.python("print(1)"));
        assertEquals("1\n", r.stdout());
        List<String> w = writes();
        assertEquals(4, w.size(), w.toString());
        assertTrue(w.get(0).startsWith("POST /apis/networking.k8s.io/v1/namespaces/sandboxes/networkpolicies"), w.toString());
        assertTrue(w.get(1).startsWith("POST /apis/agents.x-k8s.io/v1beta1/namespaces/sandboxes/sandboxes"), w.toString());
        assertTrue(w.get(2).startsWith("DELETE /apis/agents.x-k8s.io/v1beta1/namespaces/sandboxes/sandboxes/sandbox4j-"), w.toString());
        assertTrue(w.get(3).startsWith("DELETE /apis/networking.k8s.io/v1/namespaces/sandboxes/networkpolicies/sandbox4j-"), w.toString());
        long execs = cluster.emulator.calls().stream().filter(c -> c.endsWith("/exec")).count();
        assertEquals(1, execs, "one exec for one run: " + cluster.emulator.calls());
    }

    @Test
    void anExecInASessionIsTheseCalls() throws Exception {
        try (dev.sandbox4j.api.Sandbox s = runner.open(SandboxSpec.defaults())) {
            cluster.emulator.clearCalls();
            assertEquals("1\n", s.exec(dev.sandbox4j.api.Execution.python("print(1)")).stdout());
            List<String> calls = cluster.emulator.calls();
            // fabric8 8.0.0 lists the pod by name for its ready check before every exec, whatever
            // withReadyWaitTimeout says (PodOperationsImpl.getURL always calls waitUntilReadyOrTerminal);
            // then the upgrade. Two calls, no pod GET.
            // the emulator records a call as its handler starts, and the list and the upgrade can be recorded
            // in either order (a clean-clone run recorded the upgrade first): the two, in any order
            assertEquals(2, calls.size(), calls.toString());
            assertEquals(1, calls.stream().filter(c -> c.startsWith(
                    "GET /api/v1/namespaces/sandboxes/pods {fieldSelector=[metadata.name=")).count(), calls.toString());
            assertEquals(1, calls.stream().filter(c -> c.endsWith("/exec")).count(), calls.toString());
        }
    }

    @Test
    void attachReadsTheNetworkPolicyBackAndRefusesAWiderOne() throws Exception {
        SandboxSpec spec = SandboxSpec.defaults();
        dev.sandbox4j.api.Sandbox first = runner.open(spec);
        String id = first.id();
        first.detach();
        // someone widens the sandbox's NetworkPolicy behind the runner's back (same name and labels)
        String base = cluster.emulator.url() + "/apis/networking.k8s.io/v1/namespaces/sandboxes/networkpolicies";
        java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder().version(java.net.http.HttpClient.Version.HTTP_1_1).build();
        String policy = cluster.emulator.object("networkpolicies", "sandboxes", id).toString()
                .replace("\"egress\":[]", "\"egress\":[{}]");
        assertEquals(200, http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(base + "/" + id)).DELETE().build(),
                java.net.http.HttpResponse.BodyHandlers.ofString()).statusCode());
        assertEquals(201, http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(base))
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(policy.replaceAll("\"(uid|resourceVersion|creationTimestamp)\":\"[^\"]*\",?", "")))
                .build(), java.net.http.HttpResponse.BodyHandlers.ofString()).statusCode());
        dev.sandbox4j.api.exception.AttachRefusedException e = assertThrows(dev.sandbox4j.api.exception.AttachRefusedException.class,
                () -> runner.attach(id, spec));
        assertTrue(e.reasons().stream().anyMatch(r -> r.contains("NetworkPolicy.spec")), e.reasons().toString());
        // the sandbox was left alone by the refusal: attach with a fresh policy check is the only way back, so remove it here
        http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(cluster.emulator.url()
                + "/apis/agents.x-k8s.io/v1beta1/namespaces/sandboxes/sandboxes/" + id)).DELETE().build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(base + "/" + id)).DELETE().build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theSweepFindsAnOrphanAndTheNetworkPolicyOfAnExpiredSandbox() throws Exception {
        try (KubernetesSandboxRunner crashed = cluster.runner().owner("replica-a").build();
             KubernetesSandboxRunner other = cluster.runner().owner("replica-b").build()) {
            dev.sandbox4j.api.Sandbox orphan = crashed.open(SandboxSpec.defaults());
            dev.sandbox4j.api.Sandbox expired = crashed.open(SandboxSpec.defaults());
            dev.sandbox4j.api.Sandbox siblings = other.open(SandboxSpec.defaults());
            // the controller expired one Sandbox after the JVM was gone: its NetworkPolicy stays
            java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder()
                    .version(java.net.http.HttpClient.Version.HTTP_1_1).build();
            assertEquals(200, http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(cluster.emulator.url()
                    + "/apis/agents.x-k8s.io/v1beta1/namespaces/sandboxes/sandboxes/" + expired.id())).DELETE().build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString()).statusCode());
            try (KubernetesSandboxRunner restarted = cluster.runner().owner("replica-a").build()) {
                dev.sandbox4j.api.SweepResult r = restarted.sweep(dev.sandbox4j.api.SweepRequest.builder().allOfOwner().build());
                assertEquals(java.util.Set.of(orphan.id(), expired.id()), java.util.Set.copyOf(r.destroyed()), r.toString());
            }
            assertEquals(null, cluster.emulator.object("networkpolicies", "sandboxes", expired.id()));
            assertTrue(cluster.emulator.object("sandboxes", "sandboxes", siblings.id()) != null, "a sibling's was swept");
            siblings.close();
            orphan.close();
            expired.close();
        }
    }

    @Test
    void domainsAndHeaderRulesAreRefusedBeforeAnyCall() {
        SandboxSpec domains = SandboxSpec.builder().egress(EgressPolicy.allowOnly("pypi.org")).build();
        assertThrows(UnsupportedPolicyException.class, () -> runner.run(RunRequest.of(domains, dev.sandbox4j.api.Execution.python("1"))));
        SandboxSpec disk = SandboxSpec.builder().limits(dev.sandbox4j.policy.Limits.builder().diskMib(64).build()).build();
        assertThrows(UnsupportedPolicyException.class, () -> runner.run(RunRequest.of(disk, dev.sandbox4j.api.Execution.python("1"))));
        assertEquals(List.of(), cluster.emulator.calls());
    }

    @Test
    void aScopedHeaderRuleIsRefusedBeforeAnyCall() {
        // a domain and a header rule are refused anyway; the scope gets its own sentence, naming the host only
        SandboxSpec scoped = SandboxSpec.builder().egress(EgressPolicy.builder().allowDomain("api.example.com")
                .headerRule(dev.sandbox4j.policy.HeaderRule.builder("api.example.com", "Authorization",
                        dev.sandbox4j.policy.SecretRef.of("key", () -> "sk-never-sent")).methods("GET").build())
                .build()).build();
        UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class,
                () -> runner.run(RunRequest.of(scoped, dev.sandbox4j.api.Execution.python("1"))));
        assertTrue(e.violations().contains("header rule for 'api.example.com' scoped to methods [GET] (kubernetes cannot"
                + " enforce HEADER_RULE_SCOPES: the header would go on every request to the host)"), e.violations().toString());
        assertEquals(List.of(), cluster.emulator.calls());
    }

    @Test
    void aLockedDownPodIsWhatTheClusterGets() {
        // the emulator refuses (as Pod Security "restricted" does) any pod that is not locked down
        RunResult r = runner.run(RunRequest.python("import os; print(os.getuid() != 0)"));
        assertEquals("True\n", r.stdout());
    }

    private List<String> sandboxCreates() {
        return cluster.emulator.createsReceived().stream().filter(c -> c.startsWith("sandboxes/")).toList();
    }

    /**
     * A 503 on the Sandbox create: the driver sends the same create again (the name is the run id's, so a
     * second send cannot make a second Sandbox), and the run goes on. The old driver took the 503 for a
     * create that may have succeeded and failed the run (looking the run id up to delete what it made).
     */
    @Test
    void a503OnTheSandboxCreateIsSentAgainAndTheRunSucceeds() {
        int fired = cluster.emulator.faults().fired(dev.sandbox4j.emulators.Faults.Fault.FAIL_CREATE);
        cluster.emulator.faults().failCreate(503, 1);
        RunResult r = runner.run(RunRequest.python("print(1)"));
        assertEquals("1\n", r.stdout());
        assertEquals(1, cluster.emulator.faults().fired(dev.sandbox4j.emulators.Faults.Fault.FAIL_CREATE) - fired);
        assertEquals(1, cluster.emulator.sandboxesCreated() - createdBefore, "one Sandbox");
        assertEquals(List.of("sandboxes/" + r.sandboxId(), "sandboxes/" + r.sandboxId()), sandboxCreates(),
                "the create was sent twice, with the same name");
    }

    /**
     * A lost answer to the Sandbox create (it was stored): the driver reads the Sandbox back by name (a
     * create with no answer is not sent again: it may still be stored later), adopts it as this run's, and
     * the run succeeds on it; one Sandbox. The old driver failed the run as ambiguous.
     */
    @Test
    void aLostCreateAnswerIsReadBackAndTheStoredSandboxAdopted() {
        int fired = cluster.emulator.faults().fired(dev.sandbox4j.emulators.Faults.Fault.LOSE_CREATE_RESPONSE);
        cluster.emulator.faults().loseCreateResponse(1);
        RunResult r = runner.run(RunRequest.python("print(1)"));
        assertEquals("1\n", r.stdout());
        assertEquals(1, cluster.emulator.faults().fired(dev.sandbox4j.emulators.Faults.Fault.LOSE_CREATE_RESPONSE) - fired);
        assertEquals(1, cluster.emulator.sandboxesCreated() - createdBefore, "the Sandbox was created server-side, once");
        assertEquals(List.of("sandboxes/" + r.sandboxId()), sandboxCreates());
    }

    /**
     * When every send of the Sandbox create is answered 503, the re-sends run out and the create is
     * ambiguous, as it was before: the lifecycle looks the run id up and deletes what it made (checked
     * after the test: nothing left).
     */
    @Test
    void whenTheCreateResendsRunOutTheCreateIsAmbiguousAndNothingIsLeft() {
        cluster.emulator.faults().failCreate(503, 64);
        try (KubernetesSandboxRunner r = cluster.runner().retryBaseDelay(Duration.ofMillis(5)).build()) {
            SandboxException e = assertThrows(SandboxException.class, () -> r.run(RunRequest.python("print(1)")));
            assertEquals(503, e.httpStatus().getAsInt());
            assertFalse(e.codeMayHaveRun());
            assertTrue(e.requestMayHaveSucceeded(), e.toString());
            assertEquals(4, sandboxCreates().size(), "a send and three re-sends: " + sandboxCreates());
            assertEquals(1, sandboxCreates().stream().distinct().count(), sandboxCreates().toString());
            assertEquals(0, cluster.emulator.sandboxesCreated() - createdBefore);
        }
    }

    private int createdBefore;

    @BeforeEach
    void countCreated() {
        createdBefore = cluster.emulator.sandboxesCreated();
    }

    @Test
    void aTeardownThatFailsTwiceIsRetried() {
        cluster.emulator.faults().failTeardown(500, 2);
        RunResult r = runner.run(RunRequest.python("print(1)"));
        assertEquals(Teardown.DESTROYED, r.teardown());
    }

    /**
     * KNOWN WEAKNESS, cause found, not fixed: when the server closes the exec connection in order (a FIN,
     * no WebSocket close frame), the JDK's own java.net.http WebSocket (17.0.15 here) reports it to its
     * listener in only some runs (a standalone JDK client without fabric8 saw onClose 1006 in about 1 run
     * in 3, nothing at all in the others); fabric8 only forwards what the JDK reports, so neither its exit
     * future nor its listener completes, and the exec ends at its budget. Only a write would reveal the
     * dead connection (a ping), and fabric8's WebSocket abstraction has none to send. So the bound asserted
     * here is: an error saying the code may have run, or TIMED_OUT within the budget; either way the code
     * is killed and nothing is left. (The same standalone client always reported a reset connection.)
     */
    @Test
    void aStreamDroppedMidRunIsAnErrorOrEndsAtTheBudgetAndTheSandboxGoes() {
        cluster.emulator.faults().dropStream(1);
        RunRequest req = RunRequest.of(SandboxSpec.defaults(),
                dev.sandbox4j.api.Execution.builder("print('a'); print('b')").budget(Duration.ofSeconds(3)).build());
        try {
            RunResult r = runner.run(req);
            assertEquals(dev.sandbox4j.api.RunStatus.TIMED_OUT, r.status(), "a dropped stream never passes as a success: " + r);
        } catch (SandboxException e) {
            assertTrue(e.codeMayHaveRun(), e.toString());
        }
    }

    @Test
    void theBuilderRefusesWithoutTheNetworkPolicyAcknowledgement() {
        SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class,
                () -> cluster.runner().networkPolicyEnforced(false).build());
        assertTrue(e.getMessage().contains("networkPolicyEnforced(true)"), e.getMessage());
        assertThrows(SandboxConfigurationException.class, () -> KubernetesSandboxRunner.fromEnv(Map.of()));
    }

    @Test
    void discoveredAsKubernetesOnlyWithTheAcknowledgement() {
        assertTrue(SandboxRunners.providers().stream().anyMatch(p -> p.name().equals("kubernetes")));
        assertFalse(new dev.sandbox4j.kubernetes.internal.KubernetesSandboxRunnerProvider().isConfigured(Map.of("KUBECONFIG", "/x")));
        assertTrue(new dev.sandbox4j.kubernetes.internal.KubernetesSandboxRunnerProvider()
                .isConfigured(Map.of(KubernetesSandboxRunner.NETWORK_POLICY_ENFORCED_VARIABLE, "true")));
    }
}
