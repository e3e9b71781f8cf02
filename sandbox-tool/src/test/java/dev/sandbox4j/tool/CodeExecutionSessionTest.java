package dev.sandbox4j.tool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.TestErrors;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
import dev.sandbox4j.api.exception.SandboxRateLimitException;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class CodeExecutionSessionTest {
    private final ScriptedToolRunner runner = new ScriptedToolRunner();
    private final CodeExecutionTool tool = CodeExecutionTool.builder(runner)
            .sessionLifetime(Duration.ofMinutes(20)).build();

    @AfterEach
    void clearInterrupt() {
        Thread.interrupted();
    }

    @Test
    void callsOfOneTaskShareOneSandboxUntilClosed() {
        runner.then(e -> ScriptedToolRunner.exited(0, "", ""));
        runner.then(e -> ScriptedToolRunner.exited(0, "42\n", ""));
        String second;
        try (CodeExecutionSession session = tool.session()) {
            assertEquals(0, runner.opened(), "opened at the first call, not before");
            session.execute("open('d', 'w').write('42')", "python", null);
            second = session.execute("print(open('d').read())", "python", null);
            assertEquals(1, runner.opened());
            assertSame(runner.last(), runner.sandboxes.get(0));
            assertFalse(runner.last().closed);
        }
        assertTrue(second.contains("\n42\n"), second);
        assertTrue(runner.last().closed);
        assertEquals(1, runner.last().closeCalls);
        // the provider's clock for a session is the session lifetime, not one budget
        assertEquals(Duration.ofMinutes(20), runner.specs.get(0).effectiveLifetime());
    }

    @Test
    void theListenerSeesEverySessionRun() {
        java.util.List<dev.sandbox4j.api.RunResult> seen = new java.util.ArrayList<>();
        CodeExecutionTool listened = CodeExecutionTool.builder(runner).onResult(seen::add).build();
        try (CodeExecutionSession session = listened.session()) {
            session.execute("x", "python", null);
            session.execute("y", "python", null);
        }
        assertEquals(2, seen.size());
    }

    @Test
    void aClosedSessionAnswersWithAMessageAndOpensNothing() {
        CodeExecutionSession session = tool.session();
        session.close();
        session.close();
        assertTrue(session.isClosed());
        assertEquals("error: this task's code-execution session has ended. The code did not run.",
                session.execute("print(1)", "python", null));
        assertEquals(0, runner.opened());
    }

    @Test
    void aFailedRunTearsTheSandboxDownAndTheNextCallSaysStateWasLost() {
        try (CodeExecutionSession session = tool.session()) {
            runner.then(e -> {
                throw TestErrors.forStatus(SandboxException.builder("reset").httpStatus(502).codeMayHaveRun(true));
            });
            String failed = session.execute("x", "python", null);
            assertEquals("error: the sandbox infrastructure failed (HTTP 502). The code may have run in part; its output "
                    + "is lost. Trying again may work. The next call starts in a new sandbox.", failed);
            assertTrue(runner.last().closed);

            String next = session.execute("print(1)", "python", null);
            assertEquals(2, runner.opened());
            assertTrue(next.contains("\nnote: the earlier sandbox of this task was torn down; this call runs in a new one, "
                    + "so files and state from earlier calls are gone\n"), next);
            String after = session.execute("print(1)", "python", null);
            assertFalse(after.contains("earlier sandbox"), after);
            assertEquals(2, runner.opened());
        }
    }

    @Test
    void aFailedOpenIsAMessageAndTheNextCallTriesAgain() {
        runner.failOpen(new SandboxRateLimitException("slow down"));
        try (CodeExecutionSession session = tool.session()) {
            assertTrue(session.execute("x", "python", null)
                    .startsWith("error: the sandbox provider is rate limiting requests. The code did not run."));
            assertTrue(session.execute("x", "python", null).startsWith("status: exited with code 0"));
            assertEquals(1, runner.opened());
        }
    }

    @Test
    void aSandboxThatEndedOnItsOwnIsReplacedAndTheModelIsTold() {
        try (CodeExecutionSession session = tool.session()) {
            session.execute("x", "python", null);
            runner.last().close(); // e.g. its lifetime ran out on the provider's clock
            String text = session.execute("x", "python", null);
            assertTrue(text.contains("note: the earlier sandbox of this task was torn down"), text);
            assertEquals(2, runner.opened());
        }
    }

    @Test
    void closingWhileACallRunsTearsTheSandboxDownAndTheCallReturns() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch destroyed = new CountDownLatch(1);
        runner.then(e -> {
            runner.last().onClose.add(destroyed::countDown);
            running.countDown();
            try {
                // a real sandbox's exec ends when the sandbox is destroyed under it
                assertTrue(destroyed.await(30, TimeUnit.SECONDS));
            } catch (InterruptedException ie) {
                throw new IllegalStateException(ie);
            }
            throw new SandboxException("connection closed: sandbox destroyed");
        });
        CodeExecutionSession session = tool.session();
        CompletableFuture<String> call = CompletableFuture.supplyAsync(() -> session.execute("while True: pass", "python", 60));
        assertTrue(running.await(30, TimeUnit.SECONDS));
        session.close();
        assertEquals("error: the task's session was closed while the code ran; the sandbox is torn down.",
                call.get(30, TimeUnit.SECONDS));
        assertTrue(runner.last().closed);
        assertEquals(1, runner.opened());
    }

    @Test
    void anInterruptedCallTearsDownKeepsTheFlagAndTheNextCallStartsFresh() {
        try (CodeExecutionSession session = tool.session()) {
            runner.then(e -> {
                Thread.currentThread().interrupt();
                throw new SandboxInterruptedException("interrupted during exec");
            });
            String text = session.execute("x", "python", null);
            assertTrue(Thread.interrupted(), "flag restored");
            assertTrue(text.startsWith("error: interrupted; the run was stopped and the sandbox torn down."), text);
            assertTrue(runner.last().closed);
            assertFalse(runner.last().interruptedAtClose);
            assertTrue(session.execute("x", "python", null).contains("earlier sandbox"));
        }
    }

    @Test
    void modelErrorsInASessionOpenNothing() {
        try (CodeExecutionSession session = tool.session()) {
            assertTrue(session.execute("x", "cobol", null).startsWith("error: unknown language 'cobol'"));
            assertTrue(session.execute("", "python", null).startsWith("error: no code was given"));
            assertEquals(0, runner.opened());
        }
    }

    @Test
    void aRunnerWithoutSessionsRefusesAtTheApplicationsCall() {
        Capabilities oneShot = Capabilities.builder("oneshot").egress(Capabilities.Egress.DENY_ALL)
                .languages(Language.PYTHON).build();
        CodeExecutionTool t = CodeExecutionTool.builder(new ScriptedToolRunner(oneShot)).build();
        UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class, t::session);
        assertTrue(e.getMessage().contains("sessions"), e.getMessage());
    }

    @Test
    void theSessionsDescriptionSaysFilesCarryOver() {
        try (CodeExecutionSession session = tool.session()) {
            assertTrue(session.description().contains("Files written by one call are still there for the next call"));
            assertTrue(session.toString().contains("no sandbox yet"), session.toString());
        }
    }
}
