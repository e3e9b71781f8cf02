package dev.sandbox4j.docker.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.SweepRequest;
import dev.sandbox4j.api.SweepResult;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.docker.DockerSandboxRunner;
import dev.sandbox4j.docker.TestEngine;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 27, finding 7: a JVM killed with SIGKILL leaves its containers running until their lifetime; the
 * next runner's start removes them (and their volumes), but never a container without this library's
 * labels, one whose creator lives elsewhere (another host, boot or pid namespace) or still runs, nor a
 * detached one.
 */
@Timeout(180)
class GoneOwnerSweepTest {
    private static String IMAGE;

    @Test
    void theNextStartRemovesWhatAKilledJvmLeftAndNothingElse() throws Exception {
        List<String> made = new ArrayList<>();
        DockerSandboxRunner first = TestEngine.runner(b -> b);
        DockerDriver driver = TestEngine.driver(first);
        DockerApi api = driver.api();
        IMAGE = driver.settings().image();
        try (Sandbox mine = first.open(SandboxSpec.defaults())) {
            // a container without our labels, and one with them whose creator lives in another place
            String plain = plainContainer(api, "sandbox4j-sweeptest-plain-" + System.nanoTime(), null);
            made.add(plain);
            String elsewhere = plainContainer(api, "sandbox4j-sweeptest-elsewhere-" + System.nanoTime(),
                    "host=elsewhere;boot=1;pidns=pid:[1];pid=1;start=1");
            made.add(elsewhere);

            Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), OrphanMaker.class.getName())
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            String line;
            try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                line = r.readLine();
            } finally {
                child.destroyForcibly(); // SIGKILL: no shutdown hook removes anything
                assertTrue(child.waitFor(30, TimeUnit.SECONDS));
            }
            assertNotNull(line, "the child JVM opened no sandbox");
            String[] f = line.split(" ");
            assertEquals("OPEN", f[0], line);
            String orphan = f[1];
            String detached = f[2];
            made.add(detached);
            assertTrue(exists(api, orphan), "the killed JVM's container runs on");
            String orphanVolume = ContainerReport.workVolume(api.inspect(orphan));
            assertNotNull(orphanVolume);

            // the next runner's start sweeps
            try (DockerSandboxRunner next = TestEngine.runner(b -> b)) {
                next.verify();
                assertFalse(exists(api, orphan), "the container of a JVM killed with SIGKILL is removed at the next start");
                assertTrue(api.inspectVolume(orphanVolume) == null, "and its work volume");
                assertTrue(exists(api, detached), "a detached container may be attached by another JVM: kept");
                assertTrue(exists(api, plain), "a container without our labels is never touched");
                assertTrue(exists(api, elsewhere), "a creator in another place may be alive: kept");
                assertTrue(exists(api, mine.id()), "a live JVM's sandbox is kept");
                assertEquals("1\n", mine.exec(dev.sandbox4j.api.Execution.python("print(1)")).stdout(), "and works");
                // sweep() does the same, and finds nothing more
                SweepResult again = next.sweep(SweepRequest.runIds(List.of("no-such-run-id")));
                assertEquals(List.of(), again.destroyed(), again.toString());
                assertTrue(exists(api, plain));
                assertTrue(exists(api, mine.id()));
            }
        } finally {
            for (String id : made) {
                api.remove(id);
            }
            first.close();
        }
    }

    @Test
    void onlyAProvablyGoneCreatorOfThisPlaceCounts() {
        String me = JvmOwner.current().orElseThrow();
        assertFalse(JvmOwner.provablyGone(me), "this JVM");
        String place = me.substring(0, me.lastIndexOf(";pid="));
        assertFalse(JvmOwner.provablyGone(place + ";pid=" + ProcessHandle.current().pid() + ";start="
                + ProcessHandle.current().info().startInstant().orElseThrow().toEpochMilli()), "this JVM");
        assertTrue(JvmOwner.provablyGone(place + ";pid=" + ProcessHandle.current().pid() + ";start=5"),
                "the same pid with another start time is another process");
        assertFalse(JvmOwner.provablyGone("host=elsewhere;boot=1;pidns=-;pid=999999;start=1"), "another place");
        assertFalse(JvmOwner.provablyGone(place + ";pid=x;start=1"));
        assertFalse(JvmOwner.provablyGone("garbage"));
        assertFalse(JvmOwner.provablyGone(null));
    }

    private static boolean exists(DockerApi api, String id) throws InterruptedException {
        return api.inspect(id) != null;
    }

    /** A sleeping container made directly (not by the runner), with our run-id label and a JVM label when given. */
    private static String plainContainer(DockerApi api, String name, String jvmLabel) throws InterruptedException {
        ObjectNode b = DockerApi.MAPPER.createObjectNode();
        b.put("Image", api == null ? null : IMAGE);
        b.putArray("Cmd").add("sleep").add("300");
        b.putArray("Entrypoint");
        if (jvmLabel != null) {
            b.putObject("Labels").put(CreateRequest.RUN_ID_LABEL, "sweeptest" + System.nanoTime()).put(JvmOwner.LABEL, jvmLabel);
        }
        b.putObject("HostConfig").put("NetworkMode", "none").put("AutoRemove", true);
        String id = api.createContainer(name, b);
        api.start(id);
        return id;
    }
}
