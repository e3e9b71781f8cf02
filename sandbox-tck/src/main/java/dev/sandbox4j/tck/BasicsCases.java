package dev.sandbox4j.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Language;
import org.junit.jupiter.api.Test;

/**
 * Contract cases. Hello in each language, stderr and exit codes, exceptions as results. Part of {@link SandboxRunnerContract}.
 *
 * @since 0.1.0
 */
public interface BasicsCases extends ContractContext {
    /**
     * Runs {@code print('hello from python', 6 * 7)} one-shot in a default sandbox. Fails unless the run is
     * {@code EXITED} with code 0 and stdout exactly {@code hello from python 42} and a newline, the result's
     * provider is {@code runner().name()}, its sandbox id is not empty, and its teardown is {@code DESTROYED}
     * or {@code ALREADY_GONE}. Skipped when the runner does not declare {@code Language.PYTHON}.
     */
    @Test
    default void helloPython() {
        requireLanguage(Language.PYTHON);
        RunResult r = run(SandboxSpec.defaults(), Execution.python("print('hello from python', 6 * 7)"));
        assertExited(r, 0);
        assertEquals("hello from python 42\n", r.stdout());
        assertEquals(runner().name(), r.provider());
        assertFalse(r.sandboxId().isEmpty(), "sandbox id");
        assertTrue(r.teardown() == Teardown.DESTROYED || r.teardown() == Teardown.ALREADY_GONE, "teardown " + r.teardown());
    }

    /**
     * Runs {@code console.log('hello from node', 6 * 7)} as JavaScript. Fails unless the run exits 0 with
     * stdout exactly {@code hello from node 42} and a newline. Skipped without {@code Language.JAVASCRIPT}.
     */
    @Test
    default void helloJavaScript() {
        requireLanguage(Language.JAVASCRIPT);
        RunResult r = run(SandboxSpec.defaults(), Execution.of(Language.JAVASCRIPT, "console.log('hello from node', 6 * 7)"));
        assertExited(r, 0);
        assertEquals("hello from node 42\n", r.stdout());
    }

    /**
     * Runs {@code x=42; echo "hello from bash $x"} as Bash. Fails unless the run exits 0 with stdout exactly
     * {@code hello from bash 42} and a newline. Skipped without {@code Language.BASH}.
     */
    @Test
    default void helloBash() {
        requireLanguage(Language.BASH);
        RunResult r = run(SandboxSpec.defaults(), Execution.of(Language.BASH, "x=42; echo \"hello from bash $x\""));
        assertExited(r, 0);
        assertEquals("hello from bash 42\n", r.stdout());
    }

    /**
     * Code in a language the runner does not declare (the first of Python, JavaScript and Bash missing
     * from {@code capabilities().languages()}) is refused before any sandbox exists: one-shot, the run
     * throws {@code SandboxConfigurationException} naming the language, and the runner's count of open
     * sandboxes is back to its baseline. Skipped when the runner declares all three.
     */
    @Test
    default void codeInALanguageTheRunnerDoesNotDeclareIsRefused() {
        Language missing = null;
        for (Language l : Language.values()) {
            if (!runner().capabilities().supports(l)) {
                missing = l;
                break;
            }
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(missing != null,
                runner().name() + " declares every language: " + runner().capabilities().languages());
        Language l = missing;
        dev.sandbox4j.api.exception.SandboxConfigurationException e = org.junit.jupiter.api.Assertions.assertThrows(
                dev.sandbox4j.api.exception.SandboxConfigurationException.class,
                () -> runner().run(dev.sandbox4j.api.RunRequest.of(SandboxSpec.defaults(), Execution.of(l, "true"))));
        assertTrue(e.getMessage().contains(l.id()), "the refusal names " + l.id() + ": " + e.getMessage());
        assertLeakCountBackToBaseline();
    }

    /**
     * Python prints {@code to stdout} to stdout and {@code to stderr} to stderr (each flushed), then calls
     * {@code sys.exit(3)}. Fails unless the run is {@code EXITED} with code 3 and not succeeded, and, where the
     * runner declares {@code Feature.SEPARATE_STDERR}, stdout is exactly {@code to stdout} and stderr exactly
     * {@code to stderr} (each with a newline); without that feature stdout must contain both lines, in any
     * order. Skipped without {@code Language.PYTHON}.
     */
    @Test
    default void stderrAndNonZeroExit() {
        requireLanguage(Language.PYTHON);
        RunResult r = run(SandboxSpec.defaults(), Execution.python(
                "import sys\nprint('to stdout', flush=True)\nprint('to stderr', file=sys.stderr, flush=True)\nsys.exit(3)"));
        assertExited(r, 3);
        assertFalse(r.succeeded());
        if (runner().capabilities().supports(Capabilities.Feature.SEPARATE_STDERR)) {
            assertEquals("to stdout\n", r.stdout());
            assertEquals("to stderr\n", r.stderr());
        } else {
            assertTrue(r.stdout().contains("to stdout") && r.stdout().contains("to stderr"), r.stdout());
        }
    }

    /**
     * Python raises {@code ValueError('boom from the sandbox')}. {@code run} must return a result, not throw:
     * it fails unless the status is {@code EXITED}, the exit code 1, and stderr (stdout, where the runner does
     * not declare {@code Feature.SEPARATE_STDERR}) contains {@code ValueError: boom from the sandbox}. Skipped
     * without {@code Language.PYTHON}.
     */
    @Test
    default void anExceptionIsAResultNotAnError() {
        requireLanguage(Language.PYTHON);
        RunResult r = run(SandboxSpec.defaults(), Execution.python("raise ValueError('boom from the sandbox')"));
        assertEquals(RunStatus.EXITED, r.status());
        assertEquals(1, r.exitCode().orElse(-1));
        String err = runner().capabilities().supports(Capabilities.Feature.SEPARATE_STDERR) ? r.stderr() : r.stdout();
        assertTrue(err.contains("ValueError: boom from the sandbox"), err);
    }
}
