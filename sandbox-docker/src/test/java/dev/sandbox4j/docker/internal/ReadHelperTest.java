package dev.sandbox4j.docker.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.docker.DockerSandboxRunner;
import dev.sandbox4j.docker.TestEngine;
import dev.sandbox4j.policy.Language;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The read helper against files the code swaps (issue 27, finding 3): a FIFO left in place is a prompt
 * typed refusal, and the helper itself, run while a live process of the code swaps the path between a
 * regular file and a FIFO, never blocks (before, it opened the path without O_NONBLOCK after checking its
 * type, and a swap in between stalled it until the request timeout).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class ReadHelperTest {
    private DockerSandboxRunner docker;

    @BeforeAll
    void engine() {
        docker = TestEngine.runner(b -> b);
    }

    @AfterAll
    void close() {
        if (docker != null) {
            docker.close();
        }
    }

    @Test
    @Timeout(30) // well below the 60 s request timeout a stalled helper would run into
    void aFifoLeftByTheCodeIsAPromptTypedRefusal() {
        try (Sandbox s = docker.open(SandboxSpec.defaults())) {
            assertEquals(0, s.exec(Execution.of(Language.BASH, "mkfifo pipe && mkdir d && mkfifo d/p2")).exitCode().getAsInt());
            SandboxException e = assertThrows(SandboxException.class, () -> s.readFile("pipe"));
            assertTrue(e.getMessage().contains("pipe: not a regular file"), e.getMessage());
            SandboxException e2 = assertThrows(SandboxException.class, () -> s.readFile("d/p2"));
            assertTrue(e2.getMessage().contains("not a regular file"), e2.getMessage());
            assertEquals(2, s.listFiles("").size() + s.listFiles("d").size() - 1, "the listing does not stall on them either");
        }
    }

    @Test
    void theHelperDoesNotBlockWhileTheCodeSwapsTheFileForAFifo() {
        // the helper as the runner runs it, 300 times, each under an outer bound, while a loop swaps the file
        String code = "( while :; do rm -f f; mkfifo f; rm -f f; printf 'content' > f; done ) &\n"
                + "n=0; stalled=0\n"
                + "while [ $n -lt 300 ]; do\n"
                + "  timeout 5 sh ./.read-helper.sh f 100 >/dev/null 2>&1\n"
                + "  [ $? -eq 124 ] && { stalled=$((stalled+1)); break; }\n"
                + "  n=$((n+1))\n"
                + "done\n"
                + "echo \"reads $n stalled $stalled\"\n";
        try (Sandbox s = docker.open(SandboxSpec.builder().file(".read-helper.sh", Scripts.READ).build())) {
            RunResult r = s.exec(Execution.builder(code).language(Language.BASH).budget(Duration.ofSeconds(90)).build());
            assertEquals("reads 300 stalled 0\n", r.stdout(), r + " " + r.stderr());
        }
    }
}
