package dev.sandbox4j.kubernetes;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** One run, one session with files and a timeout, against the emulator; nothing left behind. */
class KubernetesSmokeTest {
    @Test
    void runsCodeAndCleansUp() throws Exception {
        try (EmulatedCluster c = new EmulatedCluster(); KubernetesSandboxRunner r = c.runner().build()) {
            RunResult res = r.run(RunRequest.python("import sys; print(6 * 7); sys.stderr.write('e'); sys.exit(3)"));
            assertEquals("42\n", res.stdout(), res.toString());
            assertEquals("e", res.stderr());
            assertEquals(3, res.exitCode().getAsInt());
            System.out.println("calls: " + c.emulator.calls());
            try (Sandbox s = r.open(SandboxSpec.builder().file("in/a.txt", "hello").build())) {
                RunResult t = s.exec(Execution.builder("print('x', flush=True)\nimport time\ntime.sleep(30)")
                        .budget(Duration.ofSeconds(1)).build());
                assertEquals(RunStatus.TIMED_OUT, t.status(), t.toString());
                assertEquals("x\n", t.stdout());
                RunResult again = s.exec(Execution.python("print(open('in/a.txt').read())"));
                assertEquals("hello\n", again.stdout(), again.toString());
                assertEquals("hello", new String(s.readFile("in/a.txt").content()));
            }
            assertEquals(0, c.leaks());
        }
    }
}
