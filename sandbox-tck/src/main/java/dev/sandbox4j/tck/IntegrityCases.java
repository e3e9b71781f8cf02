package dev.sandbox4j.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Language;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Contract cases. Secrets and code integrity: the host environment stays out, code reaches the interpreter byte for byte. Part of {@link SandboxRunnerContract}.
 *
 * @since 0.1.0
 */
public interface IntegrityCases extends ContractContext {
    /**
     * Fails at once when {@link #hostSecrets()} finds no value at all; setting
     * {@value SandboxRunnerContract#HOST_SECRET_VARIABLE} (at least 8 characters) makes sure it finds one,
     * but any other value it picks up ({@code JAVA_HOME}, say) satisfies the check too. Python prints its
     * {@code os.environ} and the {@code /proc/PID/environ} of itself, of PID 1 and of every process it can
     * see, with an output limit of 1,000,000. Fails unless the run exits 0 with stdout not truncated and no
     * host secret's value in it. Where the runner declares {@code Feature.ENV}, the spec also sets
     * {@code SANDBOX4J_TCK_SPEC_VAR}, which the dump must show (the control that the dump reads the
     * environment at all). Skipped without {@code Language.PYTHON}.
     */
    @Test
    default void theHostEnvironmentIsNotVisible() {
        requireLanguage(Language.PYTHON);
        Map<String, String> secrets = hostSecrets();
        assertFalse(secrets.isEmpty(), "set " + SandboxRunnerContract.HOST_SECRET_VARIABLE + " in the test JVM's environment (Surefire"
                + " environmentVariables): the suite checks that its value is nowhere in the sandbox");
        boolean env = runner().capabilities().supports(Capabilities.Feature.ENV);
        SandboxSpec.Builder spec = SandboxSpec.builder();
        if (env) {
            spec.env("SANDBOX4J_TCK_SPEC_VAR", "spec-value-7d1e");
        }
        RunResult r = run(spec.build(), Execution.builder(
                "import os\n"
                        + "parts = ['ENVIRON ' + repr(sorted(os.environ.items()))]\n"
                        + "for pid in ['self', '1'] + [p for p in os.listdir('/proc') if p.isdigit()]:\n"
                        + "    try:\n"
                        + "        parts.append(pid + ' ' + open('/proc/%s/environ' % pid, 'rb').read().decode('utf-8', 'replace'))\n"
                        + "    except Exception as e:\n"
                        + "        parts.append(pid + ' unreadable ' + type(e).__name__)\n"
                        + "print('\\n'.join(parts))\n").outputLimit(1_000_000).build());
        assertExited(r, 0);
        assertFalse(r.stdoutTruncated(), "the dump must be complete to be checked");
        for (Map.Entry<String, String> s : secrets.entrySet()) {
            assertFalse(r.stdout().contains(s.getValue()), "the host's " + s.getKey() + " is visible in the sandbox");
        }
        if (env) {
            assertTrue(r.stdout().contains("('SANDBOX4J_TCK_SPEC_VAR', 'spec-value-7d1e')"), "the spec's env reaches the code");
        }
    }

    /**
     * Python hashes {@link #TRICKY}, held in its code ({@link #hashingCode}). Fails unless the run exits 0
     * and prints exactly the SHA-256 and the code-point count computed here: a shell's quoting or an
     * encoding that changed the code on its way shows as another hash. Skipped without
     * {@code Language.PYTHON}.
     *
     * @throws Exception when SHA-256 is not available here (every Java platform has it)
     */
    @Test
    default void quotesSubstitutionsNewlinesAndEmojiReachTheInterpreterByteForByte() throws Exception {
        requireLanguage(Language.PYTHON);
        RunResult r = run(SandboxSpec.defaults(), Execution.python(hashingCode(TRICKY)));
        assertExited(r, 0);
        assertEquals(sha256(TRICKY) + " " + TRICKY.codePointCount(0, TRICKY.length()) + "\n", r.stdout(),
                "the code was changed on its way (a shell, an encoding): stderr " + r.stderr());
    }

    /**
     * As the case above, with {@link #TRICKY} repeated to more than 160 KiB of code, past the kernel's
     * 128 KiB limit for one argument (so the code cannot travel as {@code python3 -c CODE}). Fails unless the
     * run exits 0 and prints exactly the SHA-256 and the code-point count computed here. Skipped without
     * {@code Language.PYTHON}.
     *
     * @throws Exception when SHA-256 is not available here (every Java platform has it)
     */
    @Test
    default void codeLargerThanOneArgumentCanHoldReachesTheInterpreter() throws Exception {
        requireLanguage(Language.PYTHON);
        // 128 KiB is the kernel's limit for one argv string: this code cannot go as `python3 -c CODE`
        String big = TRICKY.repeat(160 * 1024 / TRICKY.getBytes(StandardCharsets.UTF_8).length + 1);
        String code = hashingCode(big);
        assertTrue(code.getBytes(StandardCharsets.UTF_8).length > 160 * 1024);
        RunResult r = run(SandboxSpec.defaults(), Execution.python(code));
        assertExited(r, 0);
        assertEquals(sha256(big) + " " + big.codePointCount(0, big.length()) + "\n", r.stdout(), "stderr " + r.stderr());
    }

    /**
     * JavaScript whose string literal holds a raw NUL (which no argument can carry), an accented letter and
     * an emoji, and prints its length, the NUL's char code and its UTF-8 in hex. Fails unless the run exits 0
     * with stdout exactly {@code 6 0 610062c3a9f09f9880} and a newline. Skipped without
     * {@code Language.JAVASCRIPT}.
     */
    @Test
    default void codeWithANulCharacterReachesTheInterpreter() {
        requireLanguage(Language.JAVASCRIPT);
        // JavaScript allows a raw NUL inside a string literal; argv cannot carry it
        String code = "const s = \"a\u0000b\u00e9\uD83D\uDE00\";\nconsole.log(s.length, s.charCodeAt(1), Buffer.from(s).toString('hex'));";
        RunResult r = run(SandboxSpec.defaults(), Execution.of(Language.JAVASCRIPT, code));
        assertExited(r, 0);
        assertEquals("6 0 610062c3a9f09f9880\n", r.stdout(), "stderr " + r.stderr());
    }
}
