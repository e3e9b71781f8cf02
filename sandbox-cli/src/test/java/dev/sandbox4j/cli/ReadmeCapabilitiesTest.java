package dev.sandbox4j.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.daytona.internal.DaytonaPolicy;
import dev.sandbox4j.docker.DockerSandboxRunner;
import dev.sandbox4j.e2b.internal.E2bPolicy;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.modal.internal.ModalPolicy;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Capabilities.Egress;
import dev.sandbox4j.policy.Capabilities.Feature;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.vercel.internal.VercelPolicy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * The README's capability table is what each runner declares in {@code capabilities()}: the table is
 * rendered here from the code and must stand in README.md as rendered, so the two cannot drift. Each
 * runner's capabilities are built without credentials or network calls (the adapters' from their
 * policy classes, as their drivers do; the local and Docker runners from an unstarted runner).
 */
class ReadmeCapabilitiesTest {
    static final String HEADER = "| Capability | local | Docker | E2B | Vercel | Daytona | Modal |";

    private static Map<String, Capabilities> runners() {
        Map<String, Capabilities> m = new LinkedHashMap<>();
        try (LocalSandboxRunner local = LocalSandboxRunner.builder().build();
                DockerSandboxRunner docker = DockerSandboxRunner.builder().build()) {
            m.put("local", local.capabilities());
            m.put("Docker", docker.capabilities());
        }
        m.put("E2B", E2bPolicy.capabilities());
        m.put("Vercel", VercelPolicy.capabilities());
        m.put("Daytona", DaytonaPolicy.capabilities(false));
        m.put("Modal", ModalPolicy.capabilities());
        return m;
    }

    private static Map<String, Predicate<Capabilities>> rows() {
        Map<String, Predicate<Capabilities>> r = new LinkedHashMap<>();
        r.put("read files (`readFile`, collect by name)", c -> c.supports(Feature.READ_FILES));
        r.put("list files (`listFiles`, collect by glob)", c -> c.supports(Feature.LIST_FILES));
        r.put("output as it happens (`OutputListener`)", c -> c.supports(Feature.STREAMING));
        r.put("stderr apart from stdout", c -> c.supports(Feature.SEPARATE_STDERR));
        r.put("output kept on a timeout", c -> c.supports(Feature.OUTPUT_ON_TIMEOUT));
        r.put("sessions (several `exec`)", c -> c.supports(Feature.SESSIONS));
        r.put("setup commands, input files, env", c -> c.supports(Feature.SETUP_COMMANDS)
                && c.supports(Feature.INPUT_FILES) && c.supports(Feature.ENV));
        r.put("lock down after setup (live egress update)", c -> c.supports(Egress.LIVE_UPDATE));
        r.put("attach a detached sandbox", c -> c.supports(Feature.ATTACH));
        r.put("domain allowlists", c -> c.supports(Egress.ALLOW_DOMAINS));
        r.put("JavaScript", c -> c.supports(Language.JAVASCRIPT));
        r.put("Bash", c -> c.supports(Language.BASH));
        return r;
    }

    /** The table as the code declares it. */
    static String rendered() {
        Map<String, Capabilities> runners = runners();
        StringBuilder t = new StringBuilder(HEADER).append('\n').append("|---|---|---|---|---|---|---|\n");
        for (Map.Entry<String, Predicate<Capabilities>> row : rows().entrySet()) {
            t.append("| ").append(row.getKey()).append(" |");
            for (Capabilities c : runners.values()) {
                t.append(row.getValue().test(c) ? " ✓ |" : " ✗ |");
            }
            t.append('\n');
        }
        return t.toString();
    }

    @Test
    void theReadmesCapabilityTableIsWhatTheRunnersDeclare() throws IOException {
        String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);
        String table = rendered();
        assertTrue(readme.contains(table), "README.md must carry the capability table as the code declares it:\n" + table);
        assertTrue(List.of(readme.split("\n")).stream().filter(l -> l.equals(HEADER)).count() == 1, "one such table");
    }
}
