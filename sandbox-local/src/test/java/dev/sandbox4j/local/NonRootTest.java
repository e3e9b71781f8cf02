package dev.sandbox4j.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sandbox4j.local.internal.LocalSettings;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The runner in a JVM that is not root: started from this (root) test as the host's nobody. The
 * filter, the read-only root, the empty stdin and the safe writes hold; whole-sandbox limits are not
 * claimed, and a spec asking for one is refused.
 */
class NonRootTest {
    @Test
    void withoutRootTheContainmentHoldsAndNoKernelLimitIsClaimed() throws Exception {
        assumeTrue(LocalSettings.jvmIsRoot(), "drops from root to nobody");
        Path dir = TestDirs.workRoot();
        try {
            Path workRoot = NonRootJvm.workRoot(dir);
            String out = NonRootJvm.run(dir, workRoot, NonRootMain.class, 120);
            assertEquals("limits [LIFETIME, NETWORK]\nmemory refused\nkeyctl EPERM\nroot EROFS\nstdin ''\nfile from the jvm\nleft 0\n", out);
        } finally {
            TestDirs.delete(dir);
        }
    }
}
