package dev.sandbox4j.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.local.internal.LocalSettings;
import dev.sandbox4j.policy.Capabilities;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
            Path workRoot = Files.createDirectory(dir.resolve("work-root"));
            Files.setAttribute(workRoot, "unix:uid", 65534);
            Files.setAttribute(workRoot, "unix:gid", 65534);
            // the test's class path, readable by nobody (the Maven repository under /root is not)
            Path jars = Files.createDirectory(dir.resolve("jars"));
            Files.setPosixFilePermissions(jars, PosixFilePermissions.fromString("rwxr-xr-x"));
            List<String> cp = new ArrayList<>();
            for (Class<?> c : List.of(NonRootMain.class, LocalSandboxRunner.class, SandboxRunner.class, Capabilities.class,
                    org.slf4j.LoggerFactory.class)) {
                Path p = Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
                if (Files.isDirectory(p)) {
                    cp.add(p.toString());
                } else {
                    Path copy = Files.copy(p, jars.resolve(p.getFileName()), StandardCopyOption.REPLACE_EXISTING);
                    Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rw-r--r--"));
                    cp.add(copy.toString());
                }
            }
            Path java = Path.of(System.getProperty("java.home"), "bin", "java");
            Process p = new ProcessBuilder("/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
                    java.toString(), "-Djava.io.tmpdir=" + workRoot, "-cp", String.join(File.pathSeparator, cp),
                    NonRootMain.class.getName(), workRoot.toString()).redirectErrorStream(true).start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(true, p.waitFor(120, TimeUnit.SECONDS));
            String kept = out.lines().filter(l -> !l.startsWith("SLF4J")).reduce("", (a, b) -> a + b + "\n");
            assertEquals("limits [LIFETIME]\nmemory refused\nkeyctl EPERM\nroot EROFS\nstdin ''\nfile from the jvm\nleft 0\n",
                    kept, out);
        } finally {
            TestDirs.delete(dir);
        }
    }
}
