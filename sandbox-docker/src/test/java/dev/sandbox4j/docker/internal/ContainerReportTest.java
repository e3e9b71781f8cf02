package dev.sandbox4j.docker.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.spi.Attachable;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Limits;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The attach comparison without an engine: an inspect answer shaped as the engine gives it (Docker 28,
 * recorded by hand from {@code docker inspect}) for a container made from the create body; the
 * unaltered one shows no difference, each alteration names its rule. DockerAttachTest does the same
 * against a real engine.
 */
class ContainerReportTest {
    private static final SandboxSpec SPEC = SandboxSpec.builder()
            .limits(Limits.builder().lifetime(Duration.ofMinutes(3)).memoryMib(256).vcpus(1).build())
            .env("MODE", "test").build();
    private static final Instant NOW = Instant.parse("2026-12-01T15:00:00Z");

    /** The engine's report of a container created from the body for SPEC (owner set) at NOW, then altered. */
    private static ObjectNode[] engineReport(Consumer<ObjectNode[]> alter) {
        ObjectNode body = ContainerSpec.body(ContainerSpecTest.settings(), CreateRequest.of("run1", SPEC, "me", NOW));
        ObjectNode inspect = DockerApi.MAPPER.createObjectNode();
        inspect.put("Id", "4f0c").put("Name", "/sandbox4j-run1").put("Created", "2026-12-01T15:00:00.512345678Z");
        inspect.putObject("State").put("Status", "running").put("Running", true).put("Paused", false).put("Restarting", false);
        ObjectNode config = inspect.putObject("Config");
        config.put("Image", body.path("Image").asText()).put("User", body.path("User").asText());
        config.set("Cmd", body.get("Cmd"));
        config.set("Env", body.get("Env").deepCopy());
        config.withArray("Env").add("PATH=/usr/local/bin:/usr/bin:/bin"); // the image's own
        config.set("Labels", body.get("Labels"));
        ObjectNode host = body.get("HostConfig").deepCopy();
        host.putArray("Devices");
        host.put("PidMode", "");
        inspect.set("HostConfig", host);
        inspect.putArray("Mounts").addObject().put("Type", "volume").put("Name", "v1").put("Destination", "/sandbox")
                .put("Driver", "local").put("RW", true);
        ObjectNode volume = DockerApi.MAPPER.createObjectNode();
        volume.put("Name", "v1").put("Driver", "local");
        volume.set("Labels", body.get("Labels"));
        ObjectNode sent = (ObjectNode) body.at("/HostConfig/Mounts/0/VolumeOptions/DriverConfig/Options");
        // the engine lists the options in its own order
        volume.putObject("Options").put("device", sent.path("device").asText()).put("o", sent.path("o").asText())
                .put("type", sent.path("type").asText());
        ObjectNode[] report = {inspect, volume};
        alter.accept(report);
        return report;
    }

    private static List<String> differences(SandboxSpec expected, Consumer<ObjectNode[]> alter) {
        ObjectNode[] r = engineReport(alter);
        Attachable.Builder<DockerHandle> b = Attachable.builder(new DockerHandle("sandbox4j-run1", "run1", "4f0c", null));
        ContainerReport.compare(ContainerSpecTest.settings(), expected, r[0], r[1], NOW.plusSeconds(30), b);
        Attachable<DockerHandle> a = b.build();
        assertTrue(a.policyReported());
        return a.reportedDifferences();
    }

    private static void refusedFor(String rule, Consumer<ObjectNode[]> alter) {
        List<String> d = differences(SPEC, alter);
        assertTrue(d.stream().anyMatch(s -> s.startsWith(rule)), rule + " not in " + d);
    }

    private static ObjectNode host(ObjectNode[] r) {
        return (ObjectNode) r[0].get("HostConfig");
    }

    @Test
    void theContainerAsCreatedShowsNoDifference() {
        assertEquals(List.of(), differences(SPEC, r -> { }));
        ObjectNode[] r = engineReport(x -> { });
        assertEquals("v1", ContainerReport.workVolume(r[0]));
        assertTrue(ContainerReport.running(r[0]));
        assertEquals("me", ContainerReport.labels(r[0]).get(CreateRequest.OWNER_LABEL));
    }

    @Test
    void anotherExpectedSpecIsADifference() {
        List<String> d = differences(SPEC.toBuilder().egress(EgressPolicy.allowAll()).build(), r -> { });
        assertTrue(d.stream().anyMatch(s -> s.startsWith("HostConfig.NetworkMode (the egress): the provider reports none")), d.toString());
        d = differences(SPEC.toBuilder().limits(Limits.builder().lifetime(Duration.ofMinutes(3)).memoryMib(512).vcpus(1).build())
                .build(), r -> { });
        assertTrue(d.stream().anyMatch(s -> s.startsWith("HostConfig.Memory:")), d.toString());
        assertTrue(d.stream().anyMatch(s -> s.startsWith("HostConfig.Tmpfs") || s.startsWith("HostConfig.MemorySwap")), d.toString());
    }

    /**
     * The network allowance leaves no trace on the engine: expected with allow-all it is refused, as a create
     * refuses it; under deny-all nothing passes whatever its size, so a container made without one matches.
     */
    @Test
    void aNetworkAllowanceIsRefusedWithAllowAllAndHoldsUnderDenyAll() {
        Limits allowance = Limits.builder().lifetime(Duration.ofMinutes(3)).memoryMib(256).vcpus(1).networkMib(1).build();
        assertEquals(List.of(), differences(SPEC.toBuilder().limits(allowance).build(), r -> { }));
        SandboxSpec allowAll = SPEC.toBuilder().egress(EgressPolicy.allowAll()).build();
        // the control: the same allow-all container matches an allow-all spec without an allowance
        assertEquals(List.of(), differences(allowAll, r -> host(r).put("NetworkMode", "bridge")));
        assertEquals(List.of("network allowance: the Docker runner refuses a network limit with allow-all egress (the docker"
                + " runner counts a sandbox's bytes in its egress proxy, and allow-all puts the container on the 'bridge'"
                + " network past it: give a domain or CIDR list instead)"),
                differences(allowAll.toBuilder().limits(allowance).build(), r -> host(r).put("NetworkMode", "bridge")));
    }

    @Test
    void eachAlteredRuleIsNamed() {
        refusedFor("HostConfig.NetworkMode", r -> host(r).put("NetworkMode", "bridge"));
        refusedFor("Config.Cmd", r -> ((ObjectNode) r[0].get("Config")).putArray("Cmd").add("sleep").add("999999"));
        refusedFor("Config.User", r -> ((ObjectNode) r[0].get("Config")).put("User", "65534:65534"));
        refusedFor("Config.Image", r -> ((ObjectNode) r[0].get("Config")).put("Image", "other:1"));
        refusedFor("HostConfig.ReadonlyRootfs", r -> host(r).put("ReadonlyRootfs", false));
        refusedFor("HostConfig.CapAdd", r -> host(r).putArray("CapAdd").add("SYS_ADMIN"));
        refusedFor("HostConfig.SecurityOpt", r -> host(r).withArray("SecurityOpt").add("seccomp=unconfined"));
        // the engine's default profile (no seccomp entry), and a profile one rule wider (io_uring allowed)
        refusedFor("HostConfig.SecurityOpt", r -> host(r).putArray("SecurityOpt").add("no-new-privileges"));
        refusedFor("HostConfig.SecurityOpt", r -> host(r).putArray("SecurityOpt").add("no-new-privileges")
                .add("seccomp=" + DockerSeccomp.PROFILE.replace("\"accept\",", "\"accept\",\"io_uring_setup\",")));
        refusedFor("HostConfig.CapAdd", r -> host(r).putArray("CapAdd"));
        refusedFor("HostConfig.Privileged", r -> host(r).put("Privileged", true));
        refusedFor("HostConfig.PidMode", r -> host(r).put("PidMode", "host"));
        refusedFor("HostConfig.Devices", r -> host(r).withArray("Devices").addObject().put("PathOnHost", "/dev/kvm"));
        refusedFor("HostConfig.PidsLimit", r -> host(r).put("PidsLimit", 0));
        refusedFor("HostConfig.NanoCpus", r -> host(r).remove("NanoCpus"));
        refusedFor("Mounts", r -> ((com.fasterxml.jackson.databind.node.ArrayNode) r[0].get("Mounts")).addObject()
                .put("Type", "bind").put("Destination", "/host"));
        refusedFor("work volume Options", r -> ((ObjectNode) r[1].get("Options")).put("o", "size=99999999k"));
        refusedFor("work volume:", r -> r[1].putObject("Labels"));
        refusedFor("env:", r -> ((ObjectNode) r[0].get("Config")).putArray("Env").add("MODE=prod"));
        refusedFor("lifetime:", r -> ((ObjectNode) r[0].at("/Config/Labels")).put(CreateRequest.EXPIRES_LABEL, "99999999999"));
        refusedFor("lifetime:", r -> ((ObjectNode) r[0].at("/Config/Labels")).put(CreateRequest.EXPIRES_LABEL, "soon"));
    }

    @Test
    void aMissingWorkVolumeAndAnEnvDifferenceNameNoValue() {
        List<String> d = differences(SPEC, r -> ((ObjectNode) r[0].get("Config")).putArray("Env").add("MODE=secret-value"));
        assertFalse(d.toString().contains("secret-value"), d.toString());
        ObjectNode[] r = engineReport(x -> ((ObjectNode) x[0].get("Mounts").get(0)).put("Destination", "/elsewhere"));
        assertEquals(null, ContainerReport.workVolume(r[0]));
        Attachable.Builder<DockerHandle> b = Attachable.builder(new DockerHandle("sandbox4j-run1", "run1", "4f0c", null));
        ContainerReport.compare(ContainerSpecTest.settings(), SPEC, r[0], null, NOW, b);
        assertTrue(b.build().reportedDifferences().stream().anyMatch(s -> s.startsWith("work volume: the container has no volume")));
    }

    @Test
    void aPausedOrStoppedContainerDoesNotRun() {
        assertFalse(ContainerReport.running(engineReport(r -> ((ObjectNode) r[0].get("State")).put("Paused", true))[0]));
        ObjectNode[] stopped = engineReport(r -> ((ObjectNode) r[0].get("State")).put("Status", "exited").put("Running", false));
        assertFalse(ContainerReport.running(stopped[0]));
        assertEquals("exited", ContainerReport.state(stopped[0]));
    }
}
