package dev.sandbox4j.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sandbox4j.local.internal.LocalSettings;
import java.nio.file.Path;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * {@link SurvivorChecks} in a JVM of the host's nobody: no cgroups, no setpriv, bubblewrap unprivileged
 * (issue 27, finding 1: without kernel limits a taken-over PID 1 outlived close() and the JVM).
 */
class SurvivorNonRootTest {
    @Test
    void asAUserThatIsNotRootNothingOutlivesItsExec() throws Exception {
        assumeTrue(LocalSettings.jvmIsRoot(), "drops from root to nobody (run as that user, SurvivorTest covers it)");
        Path dir = TestDirs.workRoot();
        try {
            Path workRoot = NonRootJvm.workRoot(dir);
            String out = NonRootJvm.run(dir, workRoot, SurvivorMain.class, 300);
            String expected = "limits [LIFETIME, NETWORK]\n" + SurvivorChecks.all().keySet().stream().map(n -> "ok " + n + "\n")
                    .collect(Collectors.joining());
            assertEquals(expected, out);
        } finally {
            TestDirs.delete(dir);
        }
    }
}
