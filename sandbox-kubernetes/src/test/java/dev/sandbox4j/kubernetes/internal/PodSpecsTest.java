package dev.sandbox4j.kubernetes.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.SecretRef;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The policy translation as a table: each accepted egress with its exact NetworkPolicy rules, and the refusals. */
class PodSpecsTest {
    private static final KubernetesSettings SETTINGS = new KubernetesSettings("sandboxes", "img:1", "gvisor", 1000, 1000,
            "/sandbox", 1024, 512, "1", Duration.ofSeconds(30), Duration.ofSeconds(60), Duration.ofSeconds(5), 65536);
    private static final Capabilities CAPS = new KubernetesDriver(SETTINGS, null, java.time.Clock.systemUTC()).capabilities();
    private static final Instant NOW = Instant.parse("2026-12-02T01:00:00.250Z");

    static Stream<Arguments> accepted() {
        return Stream.of(
                Arguments.of("deny-all: no egress rule at all", EgressPolicy.denyAll(), List.of()),
                Arguments.of("allow-all: one empty rule (DNS included)", EgressPolicy.allowAll(), List.of(Map.of())),
                Arguments.of("allowed IPv4 and IPv6 CIDRs, no DNS",
                        EgressPolicy.builder().allowCidr("192.0.2.0/24").allowCidr("2001:db8::/32").build(),
                        List.of(Map.of("to", List.of(Map.of("ipBlock", Map.of("cidr", "192.0.2.0/24")),
                                Map.of("ipBlock", Map.of("cidr", "2001:db8::/32")))))),
                Arguments.of("default-deny with only a denied CIDR stays deny-all (never an empty 'to')",
                        EgressPolicy.builder().denyCidr("203.0.113.0/24").build(), List.of()),
                Arguments.of("default-deny: a denied CIDR beside (not inside) an allowed one adds nothing",
                        EgressPolicy.builder().allowCidr("192.0.2.0/24").denyCidr("203.0.113.0/24").build(),
                        List.of(Map.of("to", List.of(Map.of("ipBlock", Map.of("cidr", "192.0.2.0/24")))))),
                Arguments.of("default-allow with denied CIDRs: both families, denies as except",
                        EgressPolicy.builder(EgressPolicy.Default.ALLOW).denyCidr("203.0.113.0/24").denyCidr("2001:db8::/32").build(),
                        List.of(Map.of("to", List.of(
                                Map.of("ipBlock", Map.of("cidr", "0.0.0.0/0", "except", List.of("203.0.113.0/24"))),
                                Map.of("ipBlock", Map.of("cidr", "::/0", "except", List.of("2001:db8::/32"))))))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("accepted")
    void acceptedEgressBecomesExactlyTheseRules(String name, EgressPolicy egress, List<Object> rules) {
        assertEquals(List.of(), CAPS.violations(egress, Limits.defaults()));
        Map<String, Object> np = PodSpecs.networkPolicy("sandboxes", "run1", Map.of(CreateRequest.RUN_ID_LABEL, "run1"), egress);
        @SuppressWarnings("unchecked")
        Map<String, Object> spec = (Map<String, Object>) np.get("spec");
        assertEquals(rules, spec.get("egress"));
        // whatever the egress, nothing connects in, and the policy selects exactly this run's pod
        assertEquals(List.of("Ingress", "Egress"), spec.get("policyTypes"));
        assertEquals(List.of(), spec.get("ingress"));
        assertEquals(Map.of("matchLabels", Map.of(CreateRequest.RUN_ID_LABEL, "run1")), spec.get("podSelector"));
    }

    static Stream<Arguments> refused() {
        return Stream.of(
                Arguments.of("an allowed domain (no proxy: a NetworkPolicy cannot name one)", EgressPolicy.allowOnly("pypi.org")),
                Arguments.of("a wildcard domain", EgressPolicy.allowOnly("*.pypi.org")),
                Arguments.of("a header rule", EgressPolicy.builder(EgressPolicy.Default.ALLOW)
                        .headerRule("api.example.com", "Authorization", SecretRef.of("k", () -> "s3cr3t")).build()),
                Arguments.of("a denied CIDR inside an allowed one",
                        EgressPolicy.builder().allowCidr("10.0.0.0/8").denyCidr("10.1.0.0/16").build()),
                Arguments.of("a denied /0 under default-allow",
                        EgressPolicy.builder(EgressPolicy.Default.ALLOW).denyCidr("0.0.0.0/0").build()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refused")
    void refusedBeforeAnyCall(String name, EgressPolicy egress) {
        assertFalse(CAPS.violations(egress, Limits.defaults()).isEmpty(), name);
        assertThrows(UnsupportedPolicyException.class, () -> CAPS.check(egress, Limits.defaults()));
    }

    @Test
    void aDiskBoundIsRefusedBecauseEvictionIsNotAFailingWrite() {
        assertThrows(UnsupportedPolicyException.class,
                () -> CAPS.check(EgressPolicy.denyAll(), Limits.builder().diskMib(128).build()));
        CAPS.check(EgressPolicy.denyAll(), Limits.builder().memoryMib(128).vcpus(1).lifetime(Duration.ofMinutes(1)).build());
    }

    @Test
    void domainsNeverTranslateIntoSomethingWeaker() {
        assertThrows(IllegalStateException.class, () -> PodSpecs.egressRules(EgressPolicy.allowOnly("pypi.org")));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> at(Map<String, Object> m, String... path) {
        Object o = m;
        for (String p : path) {
            o = ((Map<String, Object>) o).get(p);
        }
        return (Map<String, Object>) o;
    }

    @Test
    @SuppressWarnings("unchecked")
    void thePodIsLockedDownWithLimitsAsResourcesAndTheLifetimeAsShutdownTime() {
        SandboxSpec spec = SandboxSpec.builder().limits(Limits.builder().memoryMib(256).vcpus(2)
                .lifetime(Duration.ofSeconds(90)).build()).env("GREETING", "hi").build();
        CreateRequest req = CreateRequest.of("run1", spec);
        Map<String, Object> sb = PodSpecs.sandbox(SETTINGS, req, NOW);
        assertEquals("agents.x-k8s.io/v1beta1", sb.get("apiVersion"));
        assertEquals("Sandbox", sb.get("kind"));
        assertEquals("sandbox4j-run1", at(sb, "metadata").get("name"));
        assertEquals("run1", ((Map<String, String>) at(sb, "metadata").get("labels")).get(CreateRequest.RUN_ID_LABEL));
        Map<String, Object> s = at(sb, "spec");
        assertEquals(NOW.plus(req.lifetime()).plusMillis(750).toString(), s.get("shutdownTime"), "rounded up to the second");
        assertEquals("Delete", s.get("shutdownPolicy"));
        assertEquals(false, s.get("service"));
        assertEquals(Map.of("labels", Map.of(CreateRequest.RUN_ID_LABEL, "run1")), at(s, "podTemplate", "metadata"));
        Map<String, Object> pod = at(s, "podTemplate", "spec");
        assertEquals(false, pod.get("automountServiceAccountToken"));
        assertEquals(false, pod.get("enableServiceLinks"));
        assertEquals(false, pod.get("hostNetwork"));
        assertEquals("gvisor", pod.get("runtimeClassName"));
        assertEquals("Never", pod.get("restartPolicy"));
        assertEquals(true, at(pod, "securityContext").get("runAsNonRoot"));
        assertEquals(Map.of("type", "RuntimeDefault"), at(pod, "securityContext").get("seccompProfile"));
        List<Object> containers = (List<Object>) pod.get("containers");
        assertEquals(1, containers.size());
        Map<String, Object> c = (Map<String, Object>) containers.get(0);
        Map<String, Object> sc = (Map<String, Object>) c.get("securityContext");
        assertEquals(false, sc.get("allowPrivilegeEscalation"));
        assertEquals(false, sc.get("privileged"));
        assertEquals(true, sc.get("readOnlyRootFilesystem"));
        assertEquals(true, sc.get("runAsNonRoot"));
        assertEquals(1000L, sc.get("runAsUser"));
        assertEquals(Map.of("drop", List.of("ALL")), sc.get("capabilities"));
        Map<String, Object> limits = Map.of("cpu", "2", "memory", "256Mi", "ephemeral-storage", "512Mi");
        assertEquals(Map.of("limits", limits, "requests", limits), c.get("resources"));
        assertEquals(List.of("sleep", Long.toString(req.lifetime().plus(PodSpecs.SLEEP_MARGIN).toSeconds())), c.get("command"));
        assertTrue(((List<Object>) c.get("env")).contains(Map.of("name", "GREETING", "value", "hi")));
        assertEquals(List.of(Map.of("name", "work", "emptyDir", Map.of("sizeLimit", "512Mi")),
                Map.of("name", "tmp", "emptyDir", Map.of("sizeLimit", "512Mi"))), pod.get("volumes"));
    }

    @Test
    void noRuntimeClassUnlessSet() {
        KubernetesSettings plain = new KubernetesSettings("ns", "img", null, 1000, 1000, "/sandbox", 1024, 512, "1",
                Duration.ofSeconds(30), Duration.ofSeconds(60), Duration.ofSeconds(5), 65536);
        Map<String, Object> sb = PodSpecs.sandbox(plain, CreateRequest.of("run2", SandboxSpec.defaults()), NOW);
        assertFalse(at(sb, "spec", "podTemplate", "spec").containsKey("runtimeClassName"));
    }

    @Test
    void labelsKubernetesRefusesAreRefusedBeforeAnyCall() {
        SandboxSpec bad = SandboxSpec.builder().label("team", "a b").build();
        assertThrows(IllegalArgumentException.class, () -> PodSpecs.sandbox(SETTINGS, CreateRequest.of("run3", bad), NOW));
        SandboxSpec badKey = SandboxSpec.builder().label("x.", "ok").build();
        assertThrows(IllegalArgumentException.class, () -> PodSpecs.sandbox(SETTINGS, CreateRequest.of("run3", badKey), NOW));
        PodSpecs.checkLabel("example.com/team", "a-b_c.d");
    }
}
