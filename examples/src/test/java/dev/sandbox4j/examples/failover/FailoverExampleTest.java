package dev.sandbox4j.examples.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.examples.LocalRunnerFixture;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The failover example on two real local runners: the attempt chain and the per-user cap as printed. */
class FailoverExampleTest {
    @Test
    void theThirdSandboxFailsOverAndAUsersThirdIsRefused() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (LocalRunnerFixture primary = new LocalRunnerFixture(); LocalRunnerFixture overflow = new LocalRunnerFixture()) {
            FailoverExample.demo(primary.runner(), overflow.runner(), new PrintStream(bytes, true, StandardCharsets.UTF_8));
            assertEquals(0, primary.leftovers());
            assertEquals(0, overflow.leftovers());
        }
        String out = bytes.toString(StandardCharsets.UTF_8);
        List<String> lines = out.lines().toList();
        assertEquals("alice starts two tasks; each keeps a sandbox open:", lines.get(0));
        assertTrue(lines.get(1).matches("  alice's run, attempts: \\[local ok \\(\\d+ ms\\)\\]"), out);
        assertTrue(lines.get(3).matches("  alice's run, attempts: \\[local ok \\(\\d+ ms\\)\\]"), out);
        assertTrue(lines.get(2).startsWith("  status: exited with code 0 after "), out);
        assertEquals("alice asks for a third sandbox at once:", lines.get(5));
        assertEquals("  error: no sandbox capacity is free right now. The code did not run. Trying again may work.",
                lines.get(6));
        assertEquals("bob runs code while both host slots are taken:", lines.get(7));
        assertTrue(lines.get(8).matches("  bob's run, attempts: \\[local SandboxCapacityException: no sandbox permit for key "
                + "'this-host' within 0 ms \\(2 of 2 per key in use\\) \\(\\d+ ms\\), local ok \\(\\d+ ms\\)\\]"), lines.get(8));
        assertTrue(lines.get(9).startsWith("  status: exited with code 0 after "), out);
        assertEquals("alice's tasks ended; bob runs code again:", lines.get(10));
        assertTrue(lines.get(11).matches("  bob's run, attempts: \\[local ok \\(\\d+ ms\\)\\]"), lines.get(11));
        assertEquals(13, lines.size(), out);
    }
}
