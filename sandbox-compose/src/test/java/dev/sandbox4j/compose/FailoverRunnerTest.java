package dev.sandbox4j.compose;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import dev.sandbox4j.spi.lifecycle.ScriptedDriver;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import dev.sandbox4j.api.Attempt;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.api.TestErrors;
import dev.sandbox4j.api.exception.SandboxAuthenticationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
import dev.sandbox4j.api.exception.SandboxRateLimitException;

class FailoverRunnerTest {
    private final List<String> log = new CopyOnWriteArrayList<>();
    private final ScriptedDriver a = new ScriptedDriver("a");
    private final ScriptedDriver b = new ScriptedDriver("b");
    private final ScriptedDriver c = new ScriptedDriver("c");

    @AfterEach
    void nothingLeaked() {
        for (ScriptedDriver d : List.of(a, b, c)) {
            assertEquals(List.of(), d.live(), d.provider() + " has sandboxes left");
        }
        assertFalse(Thread.interrupted(), "a test left the interrupt flag set");
    }

    /** One create try per runner, so each runner contributes one attempt per open. */
    private static ManagedSandboxRunner<ScriptedDriver.Handle> managed(ScriptedDriver d) {
        return ManagedSandboxRunner.builder(d).maxCreateAttempts(1).retryBaseDelay(Duration.ofMillis(1)).build();
    }

    private static ManagedSandboxRunner<ScriptedDriver.Handle> managed(ScriptedDriver d, int attempts) {
        return ManagedSandboxRunner.builder(d).maxCreateAttempts(attempts).retryBaseDelay(Duration.ofMillis(1)).build();
    }

    private ScriptedDriver.CreateStep logged(ScriptedDriver.CreateStep step) {
        return (d, r) -> {
            log.add(d.provider());
            return step.create(d, r);
        };
    }

    private static SandboxException status(int status, String message) {
        return TestErrors.forStatus(SandboxException.builder(message).httpStatus(status));
    }

    @Test
    void triesRunnersInOrderAndReportsTheChainOfAttempts() {
        a.onCreate(logged(ScriptedDriver.failing(status(503, "a is overloaded"))));
        b.onCreate(logged(ScriptedDriver.failing(SandboxException.builder("connection refused").retriable(true).build())));
        c.onCreate(logged(ScriptedDriver.created()));
        FailoverRunner failover = FailoverRunner.of(managed(a), managed(b), managed(c));
        assertEquals("failover(a, b, c)", failover.name());

        RunResult r = failover.run(RunRequest.python("print(1)"));

        assertEquals(List.of("a", "b", "c"), log, "tried in order");
        assertEquals("c", r.provider());
        assertEquals(Teardown.DESTROYED, r.teardown());
        List<Attempt> chain = r.attempts();
        assertEquals(List.of("a", "b", "c"), chain.stream().map(Attempt::runner).toList());
        assertEquals("SandboxException", chain.get(0).errorType().orElseThrow());
        assertEquals("a is overloaded", chain.get(0).message().orElseThrow());
        assertEquals("connection refused", chain.get(1).message().orElseThrow());
        assertTrue(chain.get(2).succeeded());
        chain.forEach(at -> assertFalse(at.duration().isNegative()));
        assertEquals(1, c.count("exec"));
        assertEquals(0, a.count("exec") + b.count("exec"));
    }

    @Test
    void theChainIncludesTheServingRunnersOwnRetries() {
        a.onCreate(ScriptedDriver.failing(status(500, "a down")));
        b.onCreate(ScriptedDriver.failing(status(429, "b busy")), ScriptedDriver.created());
        FailoverRunner failover = FailoverRunner.of(managed(a), managed(b, 2));
        try (Sandbox sb = failover.open(SandboxSpec.defaults())) {
            assertEquals("b", sb.provider());
            List<String> chain = sb.attempts().stream().map(Attempt::toString)
                    .map(s -> s.replaceAll(" \\(\\d+ ms\\)", "")).toList();
            assertEquals(List.of("a SandboxException: a down", "b SandboxRateLimitException: b busy", "b ok"), chain);
            RunResult first = sb.exec(Execution.python("1"));
            RunResult second = sb.exec(Execution.python("2"));
            assertEquals(sb.attempts(), first.attempts());
            assertEquals(sb.attempts(), second.attempts());
            assertEquals(Teardown.OPEN, second.teardown());
        }
    }

    @Test
    void aFirstRunnerThatWorksIsTheOnlyOneCalled() {
        FailoverRunner failover = FailoverRunner.of(managed(a), managed(b));
        RunResult r = failover.run(RunRequest.python("print(1)"));
        assertEquals("a", r.provider());
        assertEquals(1, r.attempts().size());
        assertEquals(List.of(), b.calls());
    }

    @Test
    void aNonRetriableFailureIsThrownWithoutTryingTheNextRunner() {
        a.onCreate(ScriptedDriver.failing(status(401, "bad key for a")));
        FailoverRunner failover = FailoverRunner.of(managed(a), managed(b));
        SandboxAuthenticationException e = assertThrows(SandboxAuthenticationException.class,
                () -> failover.open(SandboxSpec.defaults()));
        assertEquals("bad key for a", e.getMessage());
        assertEquals(List.of(), b.calls());
    }

    @Test
    void noSecondOpenWhenCodeMayHaveRun() {
        SandboxException ran = SandboxException.builder("stream dropped after the code started")
                .retriable(true).codeMayHaveRun(true).build();
        ScriptedRunner first = new ScriptedRunner("first", spec -> {
            throw ran;
        });
        FailoverRunner failover = FailoverRunner.of(first, managed(b));
        assertSame(ran, assertThrows(SandboxException.class, () -> failover.run(RunRequest.python("print(1)"))));
        assertEquals(1, first.opens.get());
        assertEquals(List.of(), b.calls(), "code that may have run is never run again elsewhere");
    }

    @Test
    void execIsNeverRetriedOrMovedToAnotherRunner() {
        a.onExec((h, e, sink) -> {
            throw status(502, "gateway lost the exec").toBuilder().codeMayHaveRun(true).build();
        });
        FailoverRunner failover = FailoverRunner.of(managed(a), managed(b));
        SandboxException e = assertThrows(SandboxException.class, () -> failover.run(RunRequest.python("print(1)")));
        assertTrue(e.isRetriable() && e.codeMayHaveRun());
        assertEquals(List.of("create", "exec:a-1", "destroy:a-1"), a.calls());
        assertEquals(List.of(), b.calls());

        try (Sandbox sb = failover.open(SandboxSpec.defaults())) {
            assertThrows(SandboxException.class, () -> sb.exec(Execution.python("x")));
            assertEquals("a", sb.provider());
        }
        assertEquals(List.of(), b.calls());
    }

    @Test
    void aRunnerThrowingSomethingElseStopsTheFailover() {
        ScriptedRunner buggy = new ScriptedRunner("buggy", spec -> {
            throw new IllegalStateException("a bug, not an outage");
        });
        FailoverRunner failover = FailoverRunner.of(buggy, managed(b));
        assertThrows(IllegalStateException.class, () -> failover.open(SandboxSpec.defaults()));
        assertEquals(List.of(), b.calls());
    }

    @Test
    void whenEveryRunnerFailsTheLastErrorIsThrownWithTheEarlierOnesSuppressed() {
        SandboxException first = status(503, "a down");
        SandboxException second = status(429, "b busy");
        SandboxException third = SandboxException.builder("c refused").retriable(true).build();
        a.onCreate(ScriptedDriver.failing(first));
        b.onCreate(ScriptedDriver.failing(second));
        c.onCreate(ScriptedDriver.failing(third));
        SandboxException e = assertThrows(SandboxException.class,
                () -> FailoverRunner.of(managed(a), managed(b), managed(c)).open(SandboxSpec.defaults()));
        assertSame(third, e);
        assertTrue(e.isRetriable(), "the caller may try again later");
        assertArrayEquals(new Throwable[] {first, second}, e.getSuppressed());
    }

    @Test
    void aStopAfterSomeFailuresCarriesTheEarlierOnes() {
        SandboxException first = status(503, "a down");
        a.onCreate(ScriptedDriver.failing(first));
        b.onCreate(ScriptedDriver.failing(status(403, "b forbids")));
        SandboxException e = assertThrows(SandboxAuthenticationException.class,
                () -> FailoverRunner.of(managed(a), managed(b), managed(c)).open(SandboxSpec.defaults()));
        assertArrayEquals(new Throwable[] {first}, e.getSuppressed());
        assertEquals(List.of(), c.calls());
    }

    private static final SandboxSpec WITH_DOMAINS = SandboxSpec.builder()
            .egress(EgressPolicy.allowOnly("pypi.org")).build();

    private ScriptedDriver narrow(String name) {
        return new ScriptedDriver(name, Capabilities.builder(name).egress(Capabilities.Egress.DENY_ALL)
                .languages(Language.PYTHON).build());
    }

    @Test
    void anUnsupportedPolicyIsAnErrorByDefault() {
        ScriptedDriver n = narrow("n");
        FailoverRunner failover = FailoverRunner.of(managed(n), managed(b));
        UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class, () -> failover.open(WITH_DOMAINS));
        assertEquals("n", e.runner());
        assertEquals(List.of(), n.calls(), "refused before any call");
        assertEquals(List.of(), b.calls(), "not moved to another provider unasked");
    }

    @Test
    void anUnsupportedPolicyMovesOnWhenTheCallerAskedForIt() {
        ScriptedDriver n = narrow("n");
        FailoverRunner failover = FailoverRunner.builder().runner(managed(n)).runner(managed(b))
                .failoverOnUnsupportedPolicy(true).build();
        try (Sandbox sb = failover.open(WITH_DOMAINS)) {
            assertEquals("b", sb.provider());
            assertEquals(List.of("n", "b"), sb.attempts().stream().map(Attempt::runner).toList());
            assertEquals("UnsupportedPolicyException", sb.attempts().get(0).errorType().orElseThrow());
            assertTrue(sb.attempts().get(0).message().orElseThrow().contains("allowed domain 'pypi.org'"));
        }
        assertEquals(List.of(), n.calls());
    }

    @Test
    void anUnsupportedPolicyEverywhereIsStillRefused() {
        FailoverRunner failover = FailoverRunner.builder().runner(managed(narrow("n1"))).runner(managed(narrow("n2")))
                .failoverOnUnsupportedPolicy(true).build();
        UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class, () -> failover.open(WITH_DOMAINS));
        assertEquals("n2", e.runner());
        assertEquals(1, e.getSuppressed().length);
    }

    @Test
    void anInterruptAfterAFailureStopsTheFailoverWithTheFlagSet() {
        a.onCreate((d, r) -> {
            Thread.currentThread().interrupt(); // the caller is cancelled while a's create fails
            throw status(503, "a down");
        });
        FailoverRunner failover = FailoverRunner.of(managed(a), managed(b));
        SandboxInterruptedException e = assertThrows(SandboxInterruptedException.class,
                () -> failover.open(SandboxSpec.defaults()));
        assertTrue(Thread.interrupted(), "flag kept");
        assertFalse(e.codeMayHaveRun());
        assertEquals(1, e.getSuppressed().length);
        assertEquals(List.of(), b.calls());
    }

    @Test
    void attemptMessagesHoldNoSecrets() {
        String secret = "sk-live-0123456789";
        ScriptedRunner leaky = new ScriptedRunner("leaky", spec -> {
            // the cause echoes a header; the exception's own message, by contract, does not
            throw SandboxException.builder("create failed: HTTP 503").retriable(true)
                    .cause(new IOException("Authorization: Bearer " + secret)).build();
        });
        try (Sandbox sb = FailoverRunner.of(leaky, managed(b)).open(SandboxSpec.defaults())) {
            assertFalse(sb.attempts().toString().contains(secret));
            assertEquals("create failed: HTTP 503", sb.attempts().get(0).message().orElseThrow());
        }
        Attempt foreign = Attempt.failed("x", new IllegalStateException("token=" + secret), Duration.ZERO);
        assertEquals("IllegalStateException", foreign.errorType().orElseThrow());
        assertTrue(foreign.message().isEmpty(), "a foreign exception's message is not kept");
        assertFalse(foreign.toString().contains(secret));
        Attempt interrupted = Attempt.failed("x", new InterruptedException(), Duration.ZERO);
        assertEquals("x InterruptedException (0 ms)", interrupted.toString());
        Attempt longOne = Attempt.failed("x", new SandboxException("line1\nline2 " + "z".repeat(1000)), Duration.ZERO);
        assertEquals(501, longOne.message().orElseThrow().length());
        assertTrue(longOne.message().orElseThrow().startsWith("line1 line2 zzz"));
    }

    @Test
    void capabilitiesAreTheIntersectionAndRefuseWhatAnyRunnerWould() {
        Capabilities wide = Capabilities.builder("wide")
                .egress(Capabilities.Egress.DENY_ALL, Capabilities.Egress.DEFAULT_DENY_WITH_RULES,
                        Capabilities.Egress.ALLOW_DOMAINS, Capabilities.Egress.ALLOW_WILDCARD_DOMAINS,
                        Capabilities.Egress.ALLOW_CIDRS_IPV4)
                .limits(Capabilities.Limit.LIFETIME, Capabilities.Limit.MEMORY)
                .features(Capabilities.Feature.SESSIONS, Capabilities.Feature.SEPARATE_STDERR)
                .languages(Language.PYTHON, Language.BASH)
                .maxAllowedDomains(10)
                .alwaysBlocked(List.of("169.254.0.0/16"))
                .implicitAllowance("DNS to 8.8.8.8")
                .build();
        Capabilities slim = Capabilities.builder("slim")
                .egress(Capabilities.Egress.DENY_ALL, Capabilities.Egress.DEFAULT_DENY_WITH_RULES,
                        Capabilities.Egress.ALLOW_DOMAINS, Capabilities.Egress.ALLOW_WILDCARD_DOMAINS)
                .limits(Capabilities.Limit.LIFETIME)
                .features(Capabilities.Feature.SESSIONS)
                .languages(Language.PYTHON, Language.JAVASCRIPT)
                .maxAllowedDomains(5)
                .alwaysBlocked(List.of("10.0.0.0/8"))
                // a provider quirk only slim knows about
                .check((egress, limits) -> egress.allowedDomains().stream().anyMatch(d -> d.toString().endsWith(".internal"))
                        ? List.of("slim cannot reach .internal hosts") : List.of())
                .build();
        FailoverRunner failover = FailoverRunner.of(managed(new ScriptedDriver("wide", wide)),
                managed(new ScriptedDriver("slim", slim)));
        Capabilities caps = failover.capabilities();
        assertEquals("failover(wide, slim)", caps.runner());
        assertTrue(caps.supports(Capabilities.Egress.ALLOW_WILDCARD_DOMAINS));
        assertFalse(caps.supports(Capabilities.Egress.ALLOW_CIDRS_IPV4), "only wide has it");
        assertEquals(java.util.Set.of(Capabilities.Limit.LIFETIME), caps.limits());
        assertEquals(java.util.Set.of(Capabilities.Feature.SESSIONS), caps.features());
        assertEquals(java.util.Set.of(Language.PYTHON), caps.languages());
        assertEquals(5, caps.maxAllowedDomains());
        assertEquals(List.of("169.254.0.0/16", "10.0.0.0/8"), caps.alwaysBlocked().stream().map(Object::toString).toList());
        assertEquals(List.of("wide: DNS to 8.8.8.8"), caps.implicitAllowances());

        assertEquals(List.of(), caps.violations(EgressPolicy.allowOnly("*.pypi.org"), Limits.defaults()));
        assertEquals(List.of(
                        "allowed CIDR 10.0.0.0/8 (failover(wide, slim) cannot enforce ALLOW_CIDRS_IPV4)",
                        "allowed CIDR 10.0.0.0/8 overlaps 10.0.0.0/8, which failover(wide, slim) always blocks, so the rule would not take effect",
                        "allowed CIDR 10.0.0.0/8 (slim cannot enforce ALLOW_CIDRS_IPV4)",
                        "allowed CIDR 10.0.0.0/8 overlaps 10.0.0.0/8, which slim always blocks, so the rule would not take effect"),
                caps.violations(EgressPolicy.builder().allowCidr("10.0.0.0/8").build(), Limits.defaults()));
        assertEquals(List.of("slim cannot reach .internal hosts"),
                caps.violations(EgressPolicy.allowOnly("db.internal"), Limits.defaults()), "a runner's own check applies");
        assertEquals(List.of("a memory limit (failover(wide, slim) cannot set one)", "a memory limit (slim cannot set one)"),
                caps.violations(EgressPolicy.denyAll(), Limits.builder().memoryMib(512).build()));
    }

    @Test
    void closeClosesEveryRunnerEvenWhenOneThrows() {
        ScriptedRunner last = new ScriptedRunner("last", spec -> null);
        SandboxRunner failing = new SandboxRunner() {
            @Override
            public String name() {
                return "failing";
            }

            @Override
            public Capabilities capabilities() {
                return ScriptedDriver.everything("failing");
            }

            @Override
            public Sandbox open(SandboxSpec spec) {
                throw new UnsupportedOperationException();
            }

            @Override
            public void close() {
                throw new IllegalStateException("close failed");
            }
        };
        FailoverRunner failover = FailoverRunner.of(managed(a), failing, last);
        assertThrows(IllegalStateException.class, failover::close);
        assertTrue(a.isClosed());
        assertTrue(last.closed);
    }

    @Test
    void needsAtLeastOneRunner() {
        assertThrows(IllegalArgumentException.class, () -> FailoverRunner.builder().build());
    }
}
