package dev.sandbox4j.spi.lifecycle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.spi.ExecOutcome;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Issue 30 item 3: a runner declares the languages its image has, configured or found once at build by
 * running each language's program through the driver's own exec; code in an undeclared language is
 * refused before any call.
 */
class LanguageProbeTest {

    /**
     * An image with {@code installed}: a program in an installed language prints what its interpreter
     * would print (the marker and 6 * 7), one in a missing language fails as a shell does (127).
     */
    private static ScriptedDriver image(Set<Language> installed) {
        return both(new ScriptedDriver("scripted"), (h, e, sink) -> {
            if (!installed.contains(e.language())) {
                sink.stderr("sh: 1: " + e.language().id() + ": not found\n");
                return ExecOutcome.exited(127);
            }
            sink.stdout(e.code().equals(LanguageProbe.program(e.language())) ? "sandbox4j-probe 42\n" : "ran\n");
            return ExecOutcome.exited(0);
        });
    }

    /** The scripted driver counts a Bash exec as a setup command: the same step for both. */
    private static ScriptedDriver both(ScriptedDriver d, ScriptedDriver.ExecStep step) {
        return d.onExec(step).onSetup(step);
    }

    private static long execs(ScriptedDriver d) {
        return d.count("exec") + d.count("setup");
    }

    @Test
    void theProbeDeclaresWhatTheImageRunsThroughOneDenyAllSandboxThatIsTornDown() {
        ScriptedDriver d = image(EnumSet.of(Language.PYTHON, Language.BASH));
        try (ManagedSandboxRunner<ScriptedDriver.Handle> r = ManagedSandboxRunner.builder(d).probeLanguages(true).build()) {
            assertEquals(Set.of(Language.PYTHON, Language.BASH), r.capabilities().languages());
            assertEquals(1, d.count("create"), d.calls().toString());
            assertEquals(3, execs(d), "one program per language: " + d.calls());
            assertEquals(1, d.count("destroy"), d.calls().toString());
            assertTrue(d.live().isEmpty(), "the probe's sandbox is gone: " + d.live());
            SandboxSpec spec = d.createRequests().get(0).spec();
            assertEquals(EgressPolicy.denyAll(), spec.egress());
            // the rest of the capabilities are the driver's
            assertEquals(d.capabilities().features(), r.capabilities().features());
            assertEquals(d.capabilities().egress(), r.capabilities().egress());

            // code in a language the image lacks: refused before any call, with a typed error
            List<String> before = d.calls();
            SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class,
                    () -> r.run(RunRequest.of(SandboxSpec.defaults(), Execution.builder("console.log(1)")
                            .language(Language.JAVASCRIPT).build())));
            assertTrue(e.getMessage().contains("does not run javascript"), e.getMessage());
            assertEquals(before, d.calls(), "nothing was sent for the refused run");
            // and in a session, before the exec
            try (dev.sandbox4j.api.Sandbox s = r.open(SandboxSpec.defaults())) {
                long execs = execs(d);
                assertThrows(SandboxConfigurationException.class,
                        () -> s.exec(Execution.builder("console.log(1)").language(Language.JAVASCRIPT).build()));
                assertEquals(execs, execs(d));
                assertEquals("ran\n", s.exec(Execution.builder("print(1)").build()).stdout());
            }
        }
    }

    @Test
    void configuredLanguagesAreDeclaredWithoutAnyCallAndTheProbeWinsOverThem() {
        ScriptedDriver d = image(EnumSet.of(Language.BASH));
        try (ManagedSandboxRunner<ScriptedDriver.Handle> r = ManagedSandboxRunner.builder(d)
                .languages(Set.of(Language.PYTHON, Language.JAVASCRIPT)).build()) {
            assertEquals(Set.of(Language.PYTHON, Language.JAVASCRIPT), r.capabilities().languages());
            assertTrue(d.calls().isEmpty(), d.calls().toString());
            // asked on every run and exec: the same answer, not a copy per call
            assertSame(r.capabilities(), r.capabilities());
        }
        ScriptedDriver d2 = image(EnumSet.of(Language.BASH));
        try (ManagedSandboxRunner<ScriptedDriver.Handle> r = ManagedSandboxRunner.builder(d2)
                .languages(Set.of(Language.PYTHON)).probeLanguages(true).build()) {
            assertEquals(Set.of(Language.BASH), r.capabilities().languages());
        }
    }

    @Test
    void aProgramThatExitsZeroWithoutTheMarkerDoesNotCount() {
        ScriptedDriver d = both(new ScriptedDriver("scripted"), (h, e, sink) -> {
            if (e.language() == Language.PYTHON) {
                sink.stdout("sandbox4j-probe 42\n");
            } else if (e.language() == Language.JAVASCRIPT) {
                sink.stdout("console.log('sandbox4j-probe', 6 * 7)\n"); // a shim that echoes its code
            } // bash: prints nothing, exits 0
            return ExecOutcome.exited(0);
        });
        try (ManagedSandboxRunner<ScriptedDriver.Handle> r = ManagedSandboxRunner.builder(d).probeLanguages(true).build()) {
            assertEquals(Set.of(Language.PYTHON), r.capabilities().languages());
        }
    }

    @Test
    void aProbeThatCannotTellFailsTheBuildAndLeavesNothing() {
        ScriptedDriver d = both(new ScriptedDriver("scripted"),
                (h, e, sink) -> e.language() == Language.JAVASCRIPT ? ExecOutcome.timedOut() : ExecOutcome.exited(127));
        SandboxException e = assertThrows(SandboxException.class,
                () -> ManagedSandboxRunner.builder(d).probeLanguages(true).build());
        assertTrue(e.getMessage().contains("language probe cannot tell whether the image has javascript"), e.getMessage());
        assertTrue(d.live().isEmpty(), "torn down: " + d.calls());
        assertEquals(1, d.count("destroy"));
        assertTrue(d.isClosed(), "the failed build released its driver");
    }

    @Test
    void anImageWithNoneOfTheInterpretersFailsTheBuild() {
        ScriptedDriver d = image(EnumSet.noneOf(Language.class));
        SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class,
                () -> ManagedSandboxRunner.builder(d).probeLanguages(true).build());
        assertTrue(e.getMessage().contains("found none of python3, node and bash"), e.getMessage());
        assertTrue(d.live().isEmpty());
        assertTrue(d.isClosed());
    }

    @Test
    void aCreateThatFailsFailsTheBuildWithItsOwnType() {
        ScriptedDriver d = image(EnumSet.allOf(Language.class))
                .onCreate(ScriptedDriver.failing(new dev.sandbox4j.api.exception.SandboxAuthenticationException(
                        SandboxException.builder("bad key").provider("scripted").httpStatus(401))));
        assertThrows(dev.sandbox4j.api.exception.SandboxAuthenticationException.class,
                () -> ManagedSandboxRunner.builder(d).probeLanguages(true).build());
        assertTrue(d.isClosed());
    }
}
