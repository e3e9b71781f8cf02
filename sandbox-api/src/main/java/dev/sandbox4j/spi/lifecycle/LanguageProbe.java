package dev.sandbox4j.spi.lifecycle;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.spi.ExecOutcome;
import dev.sandbox4j.spi.OutputSink;
import dev.sandbox4j.spi.SandboxHandle;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

/**
 * Finds the languages a runner's image really has, once, when the runner is built ({@code
 * RunnerBuilder.probeLanguages}): one deny-all sandbox through the runner's own lifecycle (so a lost or
 * failed create is handled as any other, and the sandbox is always torn down), then either the driver's
 * one-call answer ({@link dev.sandbox4j.spi.SandboxDriver#probeLanguages}) or one small program per
 * language, run by the very command the driver runs code with. A language counts as present when its
 * program exits 0 and prints the marker with a value it computed ({@code sandbox4j-probe 42}), so an
 * interpreter missing from the image (exit 127 from the shell, or any other non-zero exit) counts as
 * absent, and neither a shim that prints nothing nor a failing start counts as present. Anything else (a
 * time-out, a kill, an output cap, an error from the provider) means the probe cannot tell, and the build
 * fails.
 */
final class LanguageProbe {
    /** What every program prints: the marker and six times seven. */
    static final String EXPECTED = "sandbox4j-probe 42";
    private static final Duration PER_LANGUAGE = Duration.ofSeconds(60);
    private static final Duration LIFETIME = Duration.ofMinutes(5);

    private LanguageProbe() {
    }

    /** The program for {@code language}; each prints {@link #EXPECTED} and a newline. */
    static String program(Language language) {
        switch (language) {
            case JAVASCRIPT:
                return "console.log('sandbox4j-probe', 6 * 7)";
            case BASH:
                return "echo sandbox4j-probe $((6 * 7))";
            default:
                return "print('sandbox4j-probe', 6 * 7)";
        }
    }

    /**
     * Probes through {@code runner}; the sandbox is closed before this returns or throws.
     *
     * @return the languages found, never empty
     * @throws SandboxException when the probe cannot tell, or found nothing
     */
    static <H extends SandboxHandle> Set<Language> run(ManagedSandboxRunner<H> runner) {
        SandboxSpec spec = SandboxSpec.builder().egress(EgressPolicy.denyAll()).defaultLifetime(LIFETIME).build();
        Set<Language> found = EnumSet.noneOf(Language.class);
        try (ManagedSandbox<H> sandbox = runner.openForProbe(spec)) {
            Optional<Set<Language>> answer = runner.driver().probeLanguages(sandbox.handle());
            if (answer.isPresent()) {
                found.addAll(answer.get());
            } else {
                for (Language l : Language.values()) {
                    if (present(runner, sandbox.handle(), l)) {
                        found.add(l);
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw runner.interrupted("interrupted during the language probe", false);
        }
        if (found.isEmpty()) {
            throw new SandboxConfigurationException(SandboxException.builder(runner.name()
                    + ": the language probe found none of python3, node and bash in the image").provider(runner.name()));
        }
        return Set.copyOf(found);
    }

    private static <H extends SandboxHandle> boolean present(ManagedSandboxRunner<H> runner, H handle, Language l)
            throws InterruptedException {
        Execution e = Execution.builder(program(l)).language(l).budget(PER_LANGUAGE).outputLimit(1_000).build();
        OutputSink sink = new OutputSink(e);
        ExecOutcome o;
        try {
            o = runner.driver().exec(handle, e, sink);
        } finally {
            sink.finish();
        }
        if (sink.capped() || o.status() != RunStatus.EXITED || o.exitCode() == null) {
            throw SandboxException.builder(runner.name() + ": the language probe cannot tell whether the image has "
                            + l.id() + ": its program ended with " + o + ", not an exit")
                    .provider(runner.name()).build();
        }
        return o.exitCode() == 0 && sink.stdoutLimiter().text().strip().equals(EXPECTED);
    }
}
