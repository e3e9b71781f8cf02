package dev.sandbox4j.local;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.testlogging.TraceJvm;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Issue 28 item 8 for the local runner: bubblewrap in a child JVM with every logger at TRACE. The
 * host's secrets in the JVM's environment and a brokered header value appear in no line, the
 * sandbox's own printed environment included.
 */
class LocalTraceSecretsTest {
    private static final String HOST_KEY = "sk-host-" + "81c4e0a9d2f7b365";
    private static final String HOST_SECRET = "host-secret-" + "0a6f3d9e2c7b1548";
    private static final String HEADER_SECRET = "sk-brokered-" + "e73b0c5a9d1f2864";

    @Test
    void noSecretInAnyLineAtTrace() throws Exception {
        Path workRoot = TestDirs.workRoot();
        TraceJvm.Result r;
        try {
            r = TraceJvm.run("local", LocalTraceMain.class, Map.of("OPENAI_API_KEY", HOST_KEY,
                    "TRACE_HOST_SECRET", HOST_SECRET, "TRACE_HEADER_SECRET", HEADER_SECRET), List.of(workRoot.toString()),
                    Duration.ofMinutes(3));
        } finally {
            TestDirs.delete(workRoot);
        }
        System.err.println("local at TRACE: " + r);
        r.assertClean(List.of(HOST_KEY, HOST_SECRET, HEADER_SECRET))
                .assertContains("trace main done")
                .assertContains("hello from local")
                .assertContains("MODE=trace") // the sandbox's environment was printed
                // the local runner serves header rules through its egress proxy now (issue 31): the run happens
                .assertContains("brokered: EXITED");
        assertTrue(Pattern.compile("(TRACE|DEBUG) dev\\.sandbox4j\\.").matcher(r.output()).find(), "no sandbox4j line");
    }
}
