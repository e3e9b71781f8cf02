package dev.sandbox4j.docker.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.api.exception.AttachRefusedException;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.spi.RunIds;
import dev.sandbox4j.docker.DockerSandboxRunner;
import dev.sandbox4j.docker.TestEngine;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import java.time.Duration;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Attach against a real engine, with containers made here the way the driver makes them and then
 * altered in one field each while their labels still claim the expected policy: the engine's own report
 * is what refuses them (network mode, the init's sleep, the expiry, capabilities, an extra mount, a
 * volume of another run), as well as a container without the labels and a stopped one. The unaltered
 * one attaches, so each refusal is the alteration's.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class DockerAttachTest {
    private static final String OWNER = "dattach-test";
    private static final SandboxSpec SPEC = SandboxSpec.builder()
            .limits(Limits.builder().lifetime(Duration.ofMinutes(3)).build()).build();

    private DockerSandboxRunner docker;
    private DockerDriver driver;
    private final List<String> made = new ArrayList<>();

    @BeforeAll
    void engine() {
        docker = TestEngine.runner(b -> b.owner(OWNER));
        driver = TestEngine.driver(docker);
    }

    @AfterEach
    void removeMade() throws InterruptedException {
        for (String name : made) {
            driver.api().remove(name);
        }
        made.clear();
    }

    @AfterAll
    void close() {
        if (docker != null) {
            docker.close();
        }
    }

    /** A started container as a create for {@link #SPEC} would make it, then changed by {@code alter}; its name. */
    private String make(Consumer<ObjectNode> alter) throws InterruptedException {
        String runId = RunIds.next();
        ObjectNode body = ContainerSpec.body(driver.settings(), CreateRequest.of(runId, SPEC, OWNER, Instant.now()));
        alter.accept(body);
        String name = DockerDriver.name(runId);
        made.add(name);
        driver.api().createContainer(name, body);
        driver.api().start(name);
        return name;
    }

    private static ObjectNode host(ObjectNode body) {
        return (ObjectNode) body.get("HostConfig");
    }

    private AttachRefusedException refused(String name, String reasonStart) {
        AttachRefusedException e = assertThrows(AttachRefusedException.class, () -> docker.attach(name, SPEC));
        assertTrue(e.reasons().stream().anyMatch(r -> r.startsWith(reasonStart)), e.reasons().toString());
        return e;
    }

    /** Refused, and the container is left alone: still running. */
    private void refusedAndLeftAlone(String name, String reasonStart) throws InterruptedException {
        refused(name, reasonStart);
        assertEquals(Boolean.TRUE, driver.api().running(name), name + " was touched by a refused attach");
        assertEquals(0, driver.openSandboxes(), "a refused attach keeps no handle");
    }

    @Test
    void aContainerMadeAsTheDriverMakesItAttachesAndRuns() throws InterruptedException {
        String name = make(b -> { });
        try (Sandbox s = docker.attach(name, SPEC)) {
            assertEquals(name, s.id());
            RunResult r = s.exec(Execution.python("print(6 * 7)"));
            assertEquals(RunStatus.EXITED, r.status(), r.toString());
            assertEquals("42\n", r.stdout());
        }
        assertEquals(null, driver.api().running(name), "closing an attached sandbox removes its container");
    }

    @Test
    void aDetachedSandboxIsAttachedByItsEngineIdToo() throws InterruptedException {
        Sandbox first = docker.open(SPEC);
        first.detach();
        assertEquals(Teardown.DETACHED, first.teardown());
        String engineId = driver.api().inspect(first.id()).path("Id").asText();
        made.add(first.id());
        try (Sandbox again = docker.attach(engineId, SPEC)) {
            assertEquals(first.id(), again.id(), "the handle is named as the create named it");
            assertEquals(first.runId(), again.runId());
            assertEquals("ok\n", again.exec(Execution.of(Language.BASH, "echo ok")).stdout());
        }
        assertEquals(null, driver.api().running(first.id()));
    }

    @Test
    void anotherNetworkModeIsRefusedThoughTheLabelsClaimDenyAll() throws InterruptedException {
        String name = make(b -> host(b).put("NetworkMode", "host"));
        refusedAndLeftAlone(name, "reported by docker: HostConfig.NetworkMode (the egress): the provider reports host");
    }

    @Test
    void aLongerInitSleepIsRefusedThoughThePolicyLabelSaysThreeMinutes() throws InterruptedException {
        String name = make(b -> b.putArray("Cmd").add("sleep").add("86400"));
        refusedAndLeftAlone(name, "reported by docker: Config.Cmd");
    }

    @Test
    void anExpiryLabelPastTheLifetimeIsRefused() throws InterruptedException {
        String name = make(b -> {
            long later = Instant.now().plus(Duration.ofDays(1)).getEpochSecond();
            ((ObjectNode) b.get("Labels")).put(CreateRequest.EXPIRES_LABEL, Long.toString(later));
        });
        refusedAndLeftAlone(name, "reported by docker: lifetime:");
    }

    @Test
    void capabilitiesKeptAreRefused() throws InterruptedException {
        String name = make(b -> {
            host(b).putArray("CapDrop");
            host(b).putArray("SecurityOpt");
        });
        AttachRefusedException e = refused(name, "reported by docker: HostConfig.CapDrop");
        assertTrue(e.reasons().stream().anyMatch(r -> r.startsWith("reported by docker: HostConfig.SecurityOpt")),
                e.reasons().toString());
    }

    @Test
    void anExtraMountIsRefused() throws InterruptedException {
        String name = make(b -> host(b).putObject("Tmpfs").put("/tmp", "rw,size=1024k").put("/mnt", "rw,size=1024k"));
        refusedAndLeftAlone(name, "reported by docker: HostConfig.Tmpfs");
    }

    @Test
    void aBindMountOfTheHostIsRefused(@TempDir Path dir) throws InterruptedException {
        String name = make(b -> host(b).putArray("Binds").add(dir.toAbsolutePath() + ":/mnt:ro"));
        refusedAndLeftAlone(name, "reported by docker: Mounts:");
    }

    @Test
    void aWorkVolumeOfAnotherRunIsRefused() throws InterruptedException {
        String name = make(b -> ((ObjectNode) host(b).get("Mounts").get(0).get("VolumeOptions").get("Labels"))
                .put(CreateRequest.RUN_ID_LABEL, "someoneelse"));
        refusedAndLeftAlone(name, "reported by docker: work volume:");
    }

    @Test
    void aContainerWithoutTheLabelsIsRefused() throws InterruptedException {
        String name = make(b -> {
            b.putObject("Labels");
            ((ObjectNode) host(b).get("Mounts").get(0).get("VolumeOptions")).putObject("Labels");
        });
        AttachRefusedException e = refused(name, "labels:");
        assertTrue(e.reasons().stream().anyMatch(r -> r.startsWith("policy:")), e.reasons().toString());
        assertTrue(e.reasons().stream().anyMatch(r -> r.startsWith("owner:")), e.reasons().toString());
        assertEquals(Boolean.TRUE, driver.api().running(name));
    }

    @Test
    void aStoppedContainerIsRefused() throws InterruptedException {
        // kept after it stops (the driver's containers remove themselves), so the state is what refuses it
        String name = make(b -> host(b).put("AutoRemove", false));
        assertTrue(driver.api().stop(name));
        refused(name, "state: the sandbox is exited");
        assertFalse(driver.api().running(name));
    }

    @Test
    void anUnknownOrMalformedIdIsNotFound() {
        assertThrows(SandboxNotFoundException.class, () -> docker.attach("sandbox4j-" + RunIds.next(), SPEC));
        assertThrows(SandboxNotFoundException.class, () -> docker.attach("../../version", SPEC));
    }

    @Test
    void anAllowAllSandboxAttachesOnlyWithAllowAll() throws InterruptedException {
        SandboxSpec open = SPEC.toBuilder().egress(EgressPolicy.allowAll()).build();
        Sandbox first = docker.open(open);
        first.detach();
        made.add(first.id());
        assertNotNull(driver.api().inspect(first.id()));
        // the label and the engine's network mode both say allow-all
        AttachRefusedException e = refused(first.id(), "egress:");
        assertTrue(e.reasons().stream().anyMatch(r -> r.startsWith("reported by docker: HostConfig.NetworkMode")),
                e.reasons().toString());
        try (Sandbox again = docker.attach(first.id(), open)) {
            assertEquals(0, again.exec(Execution.of(Language.BASH, "true")).exitCode().orElse(-1));
        }
    }
}
