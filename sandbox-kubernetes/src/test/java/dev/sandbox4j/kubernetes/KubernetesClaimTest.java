package dev.sandbox4j.kubernetes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.exception.AttachRefusedException;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The claim path against the emulated extensions controller: the calls of one run, refusals before any
 * claim, a warm Sandbox handed out once and never again, a stale warm Sandbox refused, a lost claim
 * create found by label, attach by claim name. One emulator for the class; nothing left after each test.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KubernetesClaimTest {
    private EmulatedCluster cluster;
    private KubernetesSandboxRunner runner;

    @BeforeAll
    void start() {
        cluster = new EmulatedCluster();
        runner = cluster.claimRunner(2, 0).build(); // deny-all claims adopt warm Sandboxes, allow-all ones start cold
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

    @AfterEach
    void nothingLeft() throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (cluster.claimLeaks() != 0 && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        assertEquals(0, cluster.claimLeaks(), "claims, claimed Sandboxes or their pods left: " + cluster.emulator.calls());
    }

    private List<String> writes() {
        return cluster.emulator.calls().stream().filter(c -> !c.startsWith("GET")).toList();
    }

    @Test
    void oneWarmRunIsTheseCalls() {
        cluster.awaitWarm("deny-pool", 2);
        cluster.emulator.clearCalls();
        RunResult r = runner.run(RunRequest.python("print(6 * 7)"));
        assertEquals("42\n", r.stdout(), r.toString());
        assertEquals(Teardown.DESTROYED, r.teardown());
        List<String> calls = cluster.emulator.calls();
        // the pool, its template and the template's NetworkPolicy read before the claim
        assertEquals("GET /apis/extensions.agents.x-k8s.io/v1beta1/namespaces/sandboxes/sandboxwarmpools/deny-pool", calls.get(0));
        assertEquals("GET /apis/extensions.agents.x-k8s.io/v1beta1/namespaces/sandboxes/sandboxtemplates/deny", calls.get(1));
        assertEquals("GET /apis/networking.k8s.io/v1/namespaces/sandboxes/networkpolicies/deny-network-policy", calls.get(2));
        List<String> w = writes();
        assertEquals(3, w.size(), w.toString());
        assertTrue(w.get(0).startsWith("POST /apis/extensions.agents.x-k8s.io/v1beta1/namespaces/sandboxes/sandboxclaims"), w.toString());
        assertTrue(w.get(1).startsWith("DELETE /apis/extensions.agents.x-k8s.io/v1beta1/namespaces/sandboxes/sandboxclaims/sandbox4j-"),
                w.toString());
        // the claim adopted a warm Sandbox of the pool (named after the pool), deleted with the claim
        assertTrue(w.get(2).startsWith("DELETE /apis/agents.x-k8s.io/v1beta1/namespaces/sandboxes/sandboxes/deny-pool-"), w.toString());
        assertEquals(1, calls.stream().filter(c -> c.endsWith("/exec")).count(), calls.toString());
        assertEquals(1, calls.stream().filter(c -> c.startsWith("GET /apis/agents.x-k8s.io/v1beta1/namespaces/sandboxes/sandboxes/"))
                .count(), "the bound Sandbox read once: " + calls);
        System.out.println("claim path, warm: " + calls.size() + " API calls per run: " + calls);
    }

    @Test
    void aColdClaimRunsToo() {
        RunResult r = runner.run(RunRequest.of(SandboxSpec.builder().egress(EgressPolicy.allowAll()).build(),
                Execution.python("print('cold')")));
        assertEquals("cold\n", r.stdout(), r.toString());
        // no warm Sandbox in the allow pool: the controller made one named after the claim
        assertTrue(cluster.emulator.calls().stream().anyMatch(c -> c.startsWith(
                "DELETE /apis/agents.x-k8s.io/v1beta1/namespaces/sandboxes/sandboxes/sandbox4j-")), cluster.emulator.calls().toString());
    }

    @Test
    void aWarmSandboxIsHandedOutOnceAndNeverAgain() throws Exception {
        Set<String> seen = new HashSet<>();
        for (int round = 0; round < 2; round++) {
            cluster.awaitWarm("deny-pool", 2);
            List<Sandbox> open = new ArrayList<>();
            List<String> bound = new ArrayList<>();
            for (int i = 0; i < 3; i++) { // one more than the pool holds: the third starts cold
                Sandbox s = runner.open(SandboxSpec.defaults());
                open.add(s);
                bound.add(cluster.emulator.object("sandboxclaims", "sandboxes", s.id()).path("status").path("sandbox")
                        .path("name").asText());
                assertEquals("0\n", s.exec(Execution.of(dev.sandbox4j.policy.Language.BASH, "ls | wc -l")).stdout(), "a claimed Sandbox saw an earlier task");
                s.exec(Execution.of(dev.sandbox4j.policy.Language.BASH, "touch left-by-this-task"));
            }
            assertEquals(3, new HashSet<>(bound).size(), "one Sandbox bound to two claims: " + bound);
            for (String b : bound) {
                assertTrue(seen.add(b), "Sandbox " + b + " was handed out again after code ran in it");
            }
            for (Sandbox s : open) {
                s.close();
            }
            for (String b : bound) {
                assertEquals(null, cluster.emulator.object("sandboxes", "sandboxes", b), "Sandbox " + b + " outlived its claim");
            }
        }
    }

    @Test
    void aTemplateThatDiffersIsRefusedBeforeAnyClaim() {
        // someone widens the deny template's egress: the runner reads it and refuses, no claim sent
        String widened = runner.sandboxTemplate("deny", SandboxSpec.builder().egress(EgressPolicy.allowAll()).build());
        cluster.delete("sandboxtemplates", "deny");
        cluster.apply("sandboxtemplates", widened);
        try {
            cluster.emulator.clearCalls();
            UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class, () -> runner.run(RunRequest.python("1")));
            assertTrue(e.getMessage().contains("networkPolicy differs"), e.getMessage());
            assertEquals(List.of(), writes(), "a claim was sent against an unverified template");
        } finally {
            cluster.delete("sandboxtemplates", "deny");
            cluster.apply("sandboxtemplates", runner.sandboxTemplate("deny", SandboxSpec.defaults()));
        }
        awaitPolicy("deny");
        assertEquals("ok\n", runner.run(RunRequest.python("print('ok')")).stdout());
    }

    @Test
    void aWarmSandboxFromAnOlderTemplateIsRefusedAndItsClaimDeleted() {
        // a third pool whose template had another image when its warm Sandbox was made (OnReplenish keeps it)
        try (KubernetesSandboxRunner other = cluster.runner().image("example/other:1").build()) {
            cluster.apply("sandboxtemplates", other.sandboxTemplate("stale", SandboxSpec.defaults()));
        }
        cluster.apply("sandboxwarmpools", EmulatedCluster.pool("stale-pool", "stale", 1));
        try {
            cluster.awaitWarm("stale-pool", 1);
            cluster.delete("sandboxtemplates", "stale"); // put right now; the warm Sandbox stays as it was made
            cluster.apply("sandboxtemplates", runner.sandboxTemplate("stale", SandboxSpec.defaults()));
            awaitPolicy("stale");
            try (KubernetesSandboxRunner r = cluster.runner().warmPool(EgressPolicy.denyAll(), "stale-pool").build()) {
                UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class, () -> r.run(RunRequest.python("1")));
                assertTrue(e.getMessage().contains("older template"), e.getMessage());
                assertEquals(0, cluster.emulator.calls().stream().filter(c -> c.endsWith("/exec")).count(), "code ran");
            }
        } finally {
            cluster.delete("sandboxwarmpools", "stale-pool");
            cluster.delete("sandboxtemplates", "stale");
        }
    }

    @Test
    void aLostClaimCreateAnswerIsReadBackAndTheClaimAdopted() {
        // a create with no answer is read back by name (not sent again): the claim the send stored is this
        // run's, so it is adopted and the run goes on (before, the run failed as ambiguous and the claim was
        // found by its run-id label and deleted); the claim and its Sandbox go at teardown (nothingLeft())
        int before = cluster.emulator.claimsCreated();
        cluster.emulator.clearCalls();
        cluster.emulator.faults().loseCreateResponse(1);
        RunResult r = runner.run(RunRequest.python("print(1)"));
        assertEquals("1\n", r.stdout());
        assertEquals(1, cluster.emulator.claimsCreated() - before, "the claim was created server-side, once");
        assertEquals(1, cluster.emulator.createsReceived().stream().filter(c -> c.startsWith("sandboxclaims/")).count(),
                "the claim create was sent once: " + cluster.emulator.createsReceived());
    }

    @Test
    void attachByClaimNameChecksThePolicyAndRefusesAnother() {
        SandboxSpec spec = SandboxSpec.defaults();
        Sandbox first = runner.open(spec);
        first.exec(Execution.of(dev.sandbox4j.policy.Language.BASH, "echo kept > f"));
        String id = first.id();
        first.detach();
        AttachRefusedException refused = assertThrows(AttachRefusedException.class,
                () -> runner.attach(id, SandboxSpec.builder().egress(EgressPolicy.allowAll()).build()));
        assertFalse(refused.reasons().isEmpty());
        try (Sandbox again = runner.attach(id, spec)) {
            assertEquals("kept\n", again.exec(Execution.of(dev.sandbox4j.policy.Language.BASH, "cat f")).stdout());
        }
    }

    @Test
    void whatNoPoolOrTemplateCanHoldIsRefusedBeforeAnyCall() {
        assertThrows(UnsupportedPolicyException.class, () -> runner.run(RunRequest.of(SandboxSpec.builder()
                .egress(EgressPolicy.builder(EgressPolicy.Default.DENY).allowCidr("127.0.0.0/8").build()).build(), Execution.python("1"))));
        assertThrows(UnsupportedPolicyException.class, () -> runner.run(RunRequest.of(SandboxSpec.builder()
                .limits(Limits.builder().memoryMib(256).build()).build(), Execution.python("1"))));
        assertThrows(UnsupportedPolicyException.class, () -> runner.run(RunRequest.of(SandboxSpec.builder().env("A", "b").build(),
                Execution.python("1"))));
        assertEquals(List.of(), cluster.emulator.calls());
    }

    /** Waits (bounded) until the emulated controller made the template's NetworkPolicy. */
    private void awaitPolicy(String template) {
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (cluster.emulator.object("networkpolicies", "sandboxes", template + "-network-policy") == null) {
            assertTrue(System.nanoTime() < until, "no NetworkPolicy for template " + template);
            Thread.onSpinWait();
        }
        assertNotNull(cluster.emulator.object("networkpolicies", "sandboxes", template + "-network-policy"));
    }
}
