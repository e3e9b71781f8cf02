package dev.sandbox4j.daytona.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.policy.Language;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The session command ({@link DaytonaDriver#command}) run for real by the shells the daemon may pick
 * (bash, and sh as dash where it is installed), its stdout and stderr read apart as the daemon's
 * labelers read them: the program's bytes exactly, then one end frame per stream with the exit code;
 * stdin empty; each stream cut one byte past the hard cap.
 */
class SessionCommandTest {
    private static final String NONCE = DaytonaDriver.END_FRAME + "0123456789abcdef0123456789abcdef:";

    @TempDir
    Path dir;

    private List<String> shells() {
        List<String> out = new ArrayList<>(List.of("/bin/bash"));
        for (String sh : List.of("/bin/dash", "/usr/bin/dash", "/bin/zsh", "/usr/bin/zsh")) {
            if (Files.isExecutable(Path.of(sh)) && out.stream().noneMatch(s -> Path.of(s).getFileName().equals(Path.of(sh).getFileName()))) {
                out.add(sh);
            }
        }
        return out;
    }

    private String[] run(String shell, String program, long hardCap) throws Exception {
        Path p = dir.resolve("exec-1.sh");
        Files.writeString(p, program);
        Process proc = new ProcessBuilder(shell, "-c", DaytonaDriver.command(Language.BASH, p.toString(), NONCE, hardCap))
                .redirectInput(ProcessBuilder.Redirect.PIPE).start(); // a stdin that never ends, as the daemon's
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Thread t = new Thread(() -> {
            try {
                proc.getErrorStream().transferTo(err);
            } catch (java.io.IOException e) {
                // gone
            }
        });
        t.start();
        byte[] out = proc.getInputStream().readAllBytes();
        assertTrue(proc.waitFor(30, TimeUnit.SECONDS), shell + " did not end");
        t.join(10_000);
        assertEquals(0, proc.exitValue(), shell + ": the session's shell goes on");
        return new String[] {new String(out, StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8)};
    }

    @Test
    void theProgramsBytesThenAnEndFrameOnEachStream() throws Exception {
        for (String shell : shells()) {
            String[] r = run(shell, "printf 'one\\ntwo'; printf 'warn' >&2; exit 7\n", 1 << 20);
            assertEquals("one\ntwo" + NONCE + "7\n", r[0], shell);
            assertEquals("warn" + NONCE + "7\n", r[1], shell);
        }
    }

    @Test
    void stdinIsEmptyAndAtItsEnd() throws Exception {
        for (String shell : shells()) {
            String[] r = run(shell, "if read -r line; then echo got; else echo eof; fi\n", 1 << 20);
            assertEquals("eof\n" + NONCE + "0\n", r[0], shell);
        }
    }

    /** What the program prints passes as it prints it: the cuts hold nothing back. */
    @Test
    void outputPassesWhileTheProgramRuns() throws Exception {
        for (String shell : shells()) {
            Path p = dir.resolve("exec-2.sh");
            Files.writeString(p, "echo first; echo early >&2; sleep 3; echo second\n");
            Process proc = new ProcessBuilder(shell, "-c", DaytonaDriver.command(Language.BASH, p.toString(), NONCE, 1 << 20))
                    .start();
            long t0 = System.nanoTime();
            java.io.BufferedReader out = new java.io.BufferedReader(new java.io.InputStreamReader(proc.getInputStream(),
                    StandardCharsets.UTF_8));
            java.io.BufferedReader err = new java.io.BufferedReader(new java.io.InputStreamReader(proc.getErrorStream(),
                    StandardCharsets.UTF_8));
            assertEquals("first", out.readLine(), shell);
            assertEquals("early", err.readLine(), shell);
            long took = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(took < 2000, shell + ": the first lines came after " + took + " ms");
            assertEquals("second", out.readLine(), shell);
            assertTrue(proc.waitFor(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void aFloodWithoutNewlinesIsCutOneBytePastTheCap() throws Exception {
        for (String shell : shells()) {
            String[] r = run(shell, "while :; do printf yyyyyyyy; done\n", 1000);
            assertTrue(r[0].startsWith("y".repeat(1001) + NONCE), shell + ": " + r[0].length());
            assertTrue(r[0].matches("y{1001}" + NONCE + "[0-9]+\n"), shell);
        }
    }
}
