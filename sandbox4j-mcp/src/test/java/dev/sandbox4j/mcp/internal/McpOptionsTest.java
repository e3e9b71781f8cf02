package dev.sandbox4j.mcp.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.policy.EgressPolicy;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class McpOptionsTest {
    @Test
    void defaultsAreLocalAndDenyAll() {
        McpOptions o = McpOptions.parse();
        assertEquals("local", o.provider);
        assertTrue(o.egress.isDenyAll());
        assertEquals(Duration.ofSeconds(30), o.timeout);
        assertEquals(Duration.ofSeconds(120), o.maxTimeout);
        assertEquals(8_000, o.outputLimit);
    }

    @Test
    void theHelpNamesEveryEmbeddedRunnerAsTheCliDoes() {
        for (String name : new String[] {"local (default)", "docker", "auto (bubblewrap, else Docker)", "e2b", "modal"}) {
            assertTrue(McpOptions.USAGE.contains(name), "--help names " + name);
        }
        assertEquals("auto", McpOptions.parse("--provider", "AUTO").provider);
    }

    @Test
    void autoChoosesAnEmbeddedRunner() {
        // bubblewrap where it works, else Docker; neither on this machine is a configuration error naming both
        try (dev.sandbox4j.api.SandboxRunner r = SandboxMcpMain.runner("auto", System.getenv())) {
            assertTrue(java.util.Set.of("local", "docker").contains(r.capabilities().runner()), r.capabilities().runner());
        } catch (dev.sandbox4j.api.exception.SandboxConfigurationException e) {
            assertTrue(e.getMessage().contains("bubblewrap") || e.getMessage().contains("Docker"), e.getMessage());
        }
    }

    @Test
    void bothSpellingsOfAValueAreRead() {
        McpOptions o = McpOptions.parse("--provider=E2B", "--egress", "allow=pypi.org,10.0.0.0/8", "--timeout=5",
                "--max-timeout", "10", "--output-limit=100");
        assertEquals("e2b", o.provider);
        assertEquals(EgressPolicy.builder().allowDomain("pypi.org").allowCidr("10.0.0.0/8").build(), o.egress);
        assertEquals(Duration.ofSeconds(5), o.timeout);
        assertEquals(Duration.ofSeconds(10), o.maxTimeout);
        assertEquals(100, o.outputLimit);
        assertTrue(McpOptions.parse("--egress", "ALLOW-ALL").egress.isAllowAll());
    }

    @Test
    void aMaximumBelowTheDefaultLowersTheDefaultButAnExplicitTimeoutAboveItIsRefused() {
        assertEquals(Duration.ofSeconds(10), McpOptions.parse("--max-timeout", "10").timeout);
        assertEquals("--timeout (60 s) is above --max-timeout (10 s)",
                assertThrows(IllegalArgumentException.class, () -> McpOptions.parse("--timeout", "60", "--max-timeout", "10")).getMessage());
    }

    @Test
    void badCommandLinesNameTheOption() {
        // the hint is added once, by SandboxMcpMain, to every usage error
        assertEquals("unknown option --policy", message("--policy", "x"));
        assertEquals("option --egress is given twice", message("--egress", "deny-all", "--egress", "allow-all"));
        assertEquals("option --timeout needs a value", message("--timeout"));
        assertEquals("--timeout must be a whole number, was 'soon'", message("--timeout", "soon"));
        assertEquals("--output-limit must be positive, was 0", message("--output-limit", "0"));
        assertEquals("unexpected argument 'local'", message("local"));
        assertEquals("--egress must be deny-all, allow-all or allow=ITEM[,ITEM...], was 'none'", message("--egress", "none"));
        assertTrue(message("--egress", "allow=10.0.0.0/99").startsWith("--egress: "), message("--egress", "allow=10.0.0.0/99"));
        assertTrue(McpOptions.parse("--egress", "deny-all", "--help").help);
    }

    private static String message(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> McpOptions.parse(args)).getMessage();
    }
}
