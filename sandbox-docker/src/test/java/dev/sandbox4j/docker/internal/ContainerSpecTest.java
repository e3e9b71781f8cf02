package dev.sandbox4j.docker.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The container the runner asks for, field by field: what makes it a sandbox. */
class ContainerSpecTest {
    static DockerSettings settings() {
        return new DockerSettings(DockerSettings.Endpoint.unix(java.nio.file.Path.of("/var/run/docker.sock")), "img:1",
                "1000:1001", "0:0", "bridge", 1024 * DockerSettings.MIB, 512 * DockerSettings.MIB, 256, 64 * 1024,
                Duration.ofSeconds(60), Duration.ofSeconds(5));
    }

    @Test
    void theDefaultSpecIsLockedDown() {
        JsonNode b = ContainerSpec.body(settings(), CreateRequest.of("run1", SandboxSpec.defaults()));
        JsonNode h = b.path("HostConfig");
        assertEquals("img:1", b.path("Image").asText());
        assertEquals("none", h.path("NetworkMode").asText(), "deny-all is no network at all");
        assertTrue(h.path("ReadonlyRootfs").asBoolean());
        assertEquals(List.of("ALL"), strings(h.path("CapDrop")));
        assertEquals(List.of("CAP_KILL"), strings(h.path("CapAdd")), "for the root kill helper only");
        assertEquals(List.of("no-new-privileges", "seccomp=" + DockerSeccomp.PROFILE), strings(h.path("SecurityOpt")),
                "the runner's own seccomp profile");
        assertFalse(h.path("Privileged").asBoolean());
        assertTrue(h.path("Init").asBoolean(), "an init reaps orphans");
        assertTrue(h.path("AutoRemove").asBoolean(), "the engine removes the container when its lifetime ends");
        assertEquals(256, h.path("PidsLimit").asInt());
        assertEquals(1024 * DockerSettings.MIB, h.path("Memory").asLong());
        assertEquals(h.path("Memory").asLong(), h.path("MemorySwap").asLong(), "no swap beyond the memory limit");
        assertTrue(h.path("NanoCpus").isMissingNode(), "no CPU quota unless Limits.vcpus is set");
        // init and its sleep run as another user than the code, so code cannot signal them
        assertEquals("0:0", b.path("User").asText());
        assertEquals("sleep", b.path("Cmd").path(0).asText());
        assertEquals("run1", b.path("Labels").path(CreateRequest.RUN_ID_LABEL).asText());
    }

    @Test
    void diskIsSplitOverTheWorkVolumeTmpAndShmWithinTheBound() {
        JsonNode h = ContainerSpec.body(settings(), CreateRequest.of("run2", SandboxSpec.builder()
                .limits(Limits.builder().diskMib(128).memoryMib(300).vcpus(2).build()).build())).path("HostConfig");
        assertEquals(300 * DockerSettings.MIB, h.path("Memory").asLong());
        assertEquals(2_000_000_000L, h.path("NanoCpus").asLong());
        String tmp = h.path("Tmpfs").path("/tmp").asText();
        assertTrue(tmp.contains("size=32768k") && tmp.contains("nosuid") && tmp.contains("nodev"), tmp);
        assertEquals(8 * DockerSettings.MIB, h.path("ShmSize").asLong());
        JsonNode work = h.path("Mounts").path(0);
        assertEquals("volume", work.path("Type").asText());
        assertEquals(DockerSettings.WORK_DIR, work.path("Target").asText());
        JsonNode opts = work.path("VolumeOptions").path("DriverConfig").path("Options");
        assertEquals("tmpfs", opts.path("type").asText());
        assertEquals("size=90112k,uid=1000,gid=1001,mode=0700,nosuid,nodev", opts.path("o").asText());
        assertEquals("run2", work.path("VolumeOptions").path("Labels").path(CreateRequest.RUN_ID_LABEL).asText(),
                "the volume carries the run id too (leak checks list it)");
        long[] s = ContainerSpec.split(128 * DockerSettings.MIB);
        assertEquals(128 * DockerSettings.MIB, s[0] + s[1] + s[2]);
    }

    @Test
    void labelsOwnerExpiryEnvAndLifetimeGoWithTheCreate() {
        Instant now = Instant.ofEpochSecond(1_000_000);
        SandboxSpec spec = SandboxSpec.builder().env("A", "1").label("team", "x")
                .limits(Limits.builder().lifetime(Duration.ofMillis(90_500)).build()).build();
        CreateRequest r = CreateRequest.of("run3", spec, "pod-1", now);
        JsonNode b = ContainerSpec.body(settings(), r);
        assertEquals("pod-1", b.path("Labels").path(CreateRequest.OWNER_LABEL).asText());
        assertEquals(Long.toString(now.plus(r.lifetime()).getEpochSecond()), b.path("Labels").path(CreateRequest.EXPIRES_LABEL).asText());
        assertEquals("x", b.path("Labels").path("team").asText());
        assertTrue(strings(b.path("Env")).contains("A=1"));
        assertEquals(Long.toString(ContainerSpec.lifetimeSeconds(r)), b.path("Cmd").path(1).asText());
        assertTrue(ContainerSpec.lifetimeSeconds(r) >= 91, "the lifetime is rounded up, never down");
    }

    @Test
    void allowAllUsesTheConfiguredNetworkAListHasNoneAndDefaultAllowWithDeniesIsRefused() {
        assertEquals("bridge", ContainerSpec.networkMode(settings(), EgressPolicy.allowAll()));
        // a list: no network; its only way out is the proxy's socket (DockerEgress)
        assertEquals("none", ContainerSpec.body(settings(), CreateRequest.of("run4", SandboxSpec.builder()
                .egress(EgressPolicy.allowOnly("pypi.org")).build())).path("HostConfig").path("NetworkMode").asText());
        UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class, () -> ContainerSpec.body(settings(),
                CreateRequest.of("run4", SandboxSpec.builder().egress(EgressPolicy.builder(EgressPolicy.Default.ALLOW)
                        .denyCidr("10.0.0.0/8").build()).build())));
        assertTrue(e.getMessage().contains("default allow with denied CIDRs"), e.getMessage());
    }

    @Test
    void execsRunAsTheCodesUserInTheWorkDirectoryWithoutStdin() {
        JsonNode x = ContainerSpec.exec(settings(), List.of("python3", "-c", "print(1)"));
        assertEquals("1000:1001", x.path("User").asText());
        assertEquals(DockerSettings.WORK_DIR, x.path("WorkingDir").asText());
        assertFalse(x.path("AttachStdin").asBoolean());
        assertFalse(x.path("Tty").asBoolean(), "no TTY: stdout and stderr stay apart");
        assertFalse(x.path("Privileged").asBoolean());
        assertEquals(List.of("python3", "-c", "print(1)"), strings(x.path("Cmd")));
    }

    private static List<String> strings(JsonNode a) {
        List<String> l = new java.util.ArrayList<>();
        a.forEach(n -> l.add(n.asText()));
        return l;
    }
}
