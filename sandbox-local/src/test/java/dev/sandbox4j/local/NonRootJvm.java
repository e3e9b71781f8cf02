package dev.sandbox4j.local;

import dev.sandbox4j.api.SandboxRunner;
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

/** Runs a main class of these tests in a JVM of the host's nobody (from a root test), and returns what it printed. */
final class NonRootJvm {
    static final int NOBODY = 65534;

    private NonRootJvm() {
    }

    /** A work root owned by nobody, under {@code dir}. */
    static Path workRoot(Path dir) throws Exception {
        Path workRoot = Files.createDirectory(dir.resolve("work-root"));
        Files.setAttribute(workRoot, "unix:uid", NOBODY);
        Files.setAttribute(workRoot, "unix:gid", NOBODY);
        return workRoot;
    }

    /**
     * Runs {@code main} as nobody with {@code -Djava.io.tmpdir=workRoot} and the work root as its first
     * argument; the class path is copied under {@code dir} (the Maven repository under /root is not readable to nobody).
     */
    static String run(Path dir, Path workRoot, Class<?> main, long timeoutSeconds, String... args) throws Exception {
        Path jars = Files.createDirectories(dir.resolve("jars"));
        Files.setPosixFilePermissions(jars, PosixFilePermissions.fromString("rwxr-xr-x"));
        List<String> cp = new ArrayList<>();
        for (Class<?> c : List.of(main, LocalSandboxRunner.class, SandboxRunner.class, Capabilities.class, dev.sandbox4j.egress.EgressProxy.class,
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
        List<String> argv = new ArrayList<>(List.of("/usr/bin/setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY,
                "--clear-groups", "--", java.toString(), "-Djava.io.tmpdir=" + workRoot, "-cp",
                String.join(File.pathSeparator, cp), main.getName(), workRoot.toString()));
        argv.addAll(List.of(args));
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(main.getSimpleName() + " as nobody did not finish in " + timeoutSeconds + " s: " + out);
        }
        return out.lines().filter(l -> !l.startsWith("SLF4J")).reduce("", (a, b) -> a + b + "\n");
    }
}
