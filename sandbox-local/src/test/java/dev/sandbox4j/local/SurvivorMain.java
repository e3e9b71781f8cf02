package dev.sandbox4j.local;

import java.nio.file.Path;
import java.util.Map;

/** Runs {@link SurvivorChecks} in a JVM that is not root (for {@link SurvivorNonRootTest}): one line per check. */
public final class SurvivorMain {
    private SurvivorMain() {
    }

    public static void main(String[] args) throws Exception {
        Path workRoot = Path.of(args[0]);
        try (LocalSandboxRunner runner = LocalSandboxRunner.builder().workRoot(workRoot).build()) {
            System.out.println("limits " + new java.util.TreeSet<>(runner.capabilities().limits()));
            for (Map.Entry<String, SurvivorChecks.Check> c : SurvivorChecks.all().entrySet()) {
                try {
                    c.getValue().run(runner);
                    System.out.println("ok " + c.getKey());
                } catch (Throwable t) {
                    System.out.println("FAIL " + c.getKey() + ": " + t);
                }
            }
        }
        System.out.flush();
        System.exit(0);
    }
}
