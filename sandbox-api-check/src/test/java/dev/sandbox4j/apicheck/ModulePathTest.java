package dev.sandbox4j.apicheck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.emulators.e2b.E2bEmulator;
import dev.sandbox4j.emulators.modal.ModalEmulator;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The module descriptors hold on the module path, not only at compile time: a JVM of its own gets
 * sandbox4j's jars and their dependencies on {@code --module-path}, resolves only the modules an
 * application would name ({@code --add-modules}, no {@code ALL-MODULE-PATH}, so a missing
 * {@code requires} fails), and runs real code on the local runner, on E2B and on Modal (both through
 * their emulators, which run here on the class path). A module with a {@code module-info} must load
 * as a named module, and each adapter must be found by {@code SandboxRunners} through its
 * {@code provides}. It found that Modal needs Guava's {@code failureaccess} required by name.
 *
 * <p>The descriptors are compiled at {@code prepare-package} (the parent POM's
 * {@code module-descriptor} profile): in a reactor build that stops at {@code test}, the modules are
 * class directories with no descriptor, and this test is skipped with that reason; the README's
 * {@code ./mvnw -B verify} runs it.
 */
class ModulePathTest {
    /** Modules with a module-info whose jars the child puts on the module path, and must load named. */
    private static final List<String> NAMED = List.of("sandbox-policy", "sandbox-api", "sandbox-egress",
            "sandbox-local", "sandbox-http", "sandbox-e2b", "sandbox-modal", "sandbox-compose", "sandbox-tool");

    /** The third-party jars those modules need at run time (the rest of the test class path stays off). */
    private static final Pattern THIRD_PARTY = Pattern.compile(".*/(io/grpc|io/perfmark|com/google/(guava|protobuf"
            + "|errorprone|j2objc|code/gson|code/findbugs|android|api/grpc)|org/codehaus/mojo|org/jspecify"
            + "|com/squareup/(okhttp3|okio)|org/jetbrains/kotlin/kotlin-stdlib|com/fasterxml/jackson/core"
            + "|org/slf4j/slf4j-api)/.*\\.jar");

    @Test
    void theModulesLoadNamedAndRunCodeOnTheModulePath() throws Exception {
        List<String> modulePath = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(Pattern.quote(File.pathSeparator))) {
            Path p = Path.of(entry);
            String unix = p.toAbsolutePath().toString().replace(File.separatorChar, '/');
            String file = p.getFileName().toString();
            String ours = NAMED.stream().filter(m -> file.matches(Pattern.quote(m) + "-[0-9].*\\.jar")
                    || unix.endsWith("/" + m + "/target/classes")).findFirst().orElse(null);
            if (ours != null) {
                Assumptions.assumeTrue(Files.isRegularFile(p), "the reactor stopped before package: " + ours
                        + " is the class directory " + p + ", which holds no module descriptor (compiled at"
                        + " prepare-package, see the parent POM's module-descriptor profile)");
                modulePath.add(entry);
            } else if (THIRD_PARTY.matcher(unix).matches() && !unix.contains("grpc-inprocess")
                    && !unix.contains("grpc-testing")) {
                modulePath.add(entry);
            }
        }
        assertEquals(NAMED.size(), modulePath.stream().filter(e -> !THIRD_PARTY.matcher(e.replace(File.separatorChar, '/')).matches()).count(),
                "each of " + NAMED + " on the test class path: " + modulePath);
        Path source = Path.of("src/test/resources/modulepath/ModulePathMain.java").toAbsolutePath();
        try (E2bEmulator e2b = E2bEmulator.builder().apiKey("e2b_modulepath0123456789012345678901234567").build();
                ModalEmulator modal = ModalEmulator.builder().build()) {
            List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--module-path", String.join(File.pathSeparator, modulePath),
                    "--add-modules", "dev.sandbox4j.local,dev.sandbox4j.e2b,dev.sandbox4j.modal,dev.sandbox4j.compose,"
                            + "dev.sandbox4j.tool",
                    source.toString()));
            for (String m : NAMED) {
                cmd.add("dev.sandbox4j." + m.substring("sandbox-".length()));
            }
            cmd.addAll(List.of("--", "E2B_API_KEY=e2b_modulepath0123456789012345678901234567",
                    "E2B_API_URL=" + e2b.baseUrl(), "E2B_SANDBOX_URL=" + e2b.baseUrl(),
                    "MODAL_SERVER_URL=" + modal.serverUrl(), "MODAL_TOKEN_ID=" + modal.tokenId(),
                    "MODAL_TOKEN_SECRET=" + modal.tokenSecret()));
            // its output goes to a file, so a child that hangs is seen by the bounded wait, then killed
            Path log = Files.createTempFile("module-path-", ".log");
            try {
                Process child = new ProcessBuilder(cmd).redirectErrorStream(true)
                        .redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
                boolean ended = child.waitFor(120, TimeUnit.SECONDS);
                if (!ended) {
                    child.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
                }
                String out = Files.readString(log, StandardCharsets.UTF_8);
                assertTrue(ended, "the module-path JVM did not end within 120 s:\n" + out);
                assertEquals(0, child.exitValue(), out);
                check(out, e2b, modal);
            } finally {
                Files.deleteIfExists(log);
            }
        } catch (IOException e) {
            throw new AssertionError("could not start the module-path JVM", e);
        }
    }

    /** What the module-path JVM printed: every module named, every provider found, every run done, nothing left. */
    private static void check(String out, E2bEmulator e2b, ModalEmulator modal) {
        List<String> lines = out.lines().collect(Collectors.toList());
        for (String m : NAMED) {
            String name = "dev.sandbox4j." + m.substring("sandbox-".length());
            assertTrue(lines.contains("module " + name + " named"), name + " is not a named module:\n" + out);
        }
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("providers ") && l.contains("e2b")
                && l.contains("local") && l.contains("modal")), out);
        for (String runner : List.of("local", "e2b", "modal")) {
            assertTrue(lines.contains("run " + runner + " EXITED 42 file-ok"), runner + " on the module path:\n" + out);
        }
        assertEquals(0, e2b.ledger().live(), "E2B sandboxes left: " + e2b.ledger());
        assertEquals(0, modal.ledger().live(), "Modal sandboxes left: " + modal.ledger());
    }
}
