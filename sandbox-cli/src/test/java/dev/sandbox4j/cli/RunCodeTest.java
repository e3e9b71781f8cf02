package dev.sandbox4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxAuthenticationException;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.http.HttpErrors;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunners;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.InvalidPolicyException;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The CLI's exit codes and printing, against a scripted runner: what the runner returns or throws is
 * decided by each test.
 */
class RunCodeTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    /** A runner whose run() applies {@code behaviour}; records the request, the name, the env and close(). */
    private static class ScriptedRunner implements SandboxRunner {
        final Function<RunRequest, RunResult> behaviour;
        RunRequest request;
        boolean closed;

        ScriptedRunner(Function<RunRequest, RunResult> behaviour) {
            this.behaviour = behaviour;
        }

        @Override
        public String name() {
            return "scripted";
        }

        @Override
        public Capabilities capabilities() {
            return Capabilities.builder("scripted").languages(Language.PYTHON).build();
        }

        @Override
        public Sandbox open(SandboxSpec spec) {
            throw new UnsupportedOperationException("the CLI uses run()");
        }

        @Override
        public RunResult run(RunRequest request) {
            this.request = request;
            return behaviour.apply(request);
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    private static final class Outcome {
        int status;
        String out;
        String err;
        String providerAsked;
        Map<String, String> envGiven;
    }

    private static Outcome run(ScriptedRunner runner, Map<String, String> env, String... args) {
        Outcome o = new Outcome();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        RunCode cli = new RunCode((name, e) -> {
            o.providerAsked = name;
            o.envGiven = e;
            return runner;
        });
        o.status = cli.execute(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), env);
        o.out = out.toString(StandardCharsets.UTF_8);
        o.err = err.toString(StandardCharsets.UTF_8);
        return o;
    }

    private static Outcome run(ScriptedRunner runner, String... args) {
        return run(runner, Map.of(), args);
    }

    private static RunResult.Builder result() {
        return RunResult.builder().status(RunStatus.EXITED).exitCode(0).duration(Duration.ofMillis(12))
                .provider("scripted").sandboxId("sb-1").teardown(Teardown.DESTROYED);
    }

    private static void assertOneErrorLine(Outcome o, int status, String fragment) {
        assertEquals(status, o.status, o.err);
        assertEquals("", o.out, "nothing on stdout");
        assertTrue(o.err.startsWith("sandbox4j: "), o.err);
        assertTrue(o.err.endsWith("\n"), o.err);
        assertEquals(1, o.err.lines().count(), "one line: " + o.err);
        assertTrue(o.err.contains(fragment), o.err);
    }

    @Test
    void helpPrintsUsageAndExitsZeroWithoutARunner() {
        ScriptedRunner runner = new ScriptedRunner(r -> { throw new AssertionError("must not run"); });
        Outcome o = run(runner, "--help");
        assertEquals(0, o.status);
        assertTrue(o.out.startsWith("Usage: java -jar sandbox4j-cli.jar"), o.out);
        assertEquals("", o.err);
        assertNull(o.providerAsked);
    }

    @Test
    void usageErrorsExitTwoBeforeAnyRunnerIsCreated() {
        ScriptedRunner runner = new ScriptedRunner(r -> { throw new AssertionError("must not run"); });
        for (String[] args : List.of(new String[] {}, new String[] {"--code"}, new String[] {"--bogus"},
                new String[] {"--code", "1", "--timeout", "0"}, new String[] {"--code", "1", "--egress", "allow=*"},
                new String[] {"--code", "1", "--egress", "allow=10.0.0.1/8"}, new String[] {"--language", "cobol", "--code", "1"})) {
            Outcome o = run(runner, args);
            assertOneErrorLine(o, RunCode.EXIT_USAGE, "(see --help)");
            assertNull(o.providerAsked, "no runner for a bad command line");
        }
    }

    @Test
    void completedRunPrintsStreamsAndOneSummaryLineAndExitsZeroWhateverTheCodesExitCode() {
        ScriptedRunner runner = new ScriptedRunner(r -> result().exitCode(1).stdout("out 1\nout \u00e9\n")
                .stderr("Traceback\nValueError: x").build());
        Outcome o = run(runner, Map.of("E2B_API_KEY", "k"), "--provider", "local", "--code", "raise ValueError('x')");
        assertEquals(RunCode.EXIT_COMPLETED, o.status);
        assertEquals("local", o.providerAsked);
        assertEquals(Map.of("E2B_API_KEY", "k"), o.envGiven, "the provider is configured from the env given");
        assertTrue(runner.closed, "runner closed");
        assertEquals("out 1\nout \u00e9\n", o.out);
        assertEquals("Traceback\nValueError: x\n"
                + "sandbox4j: exited with code 1 after 12 ms (provider scripted, sandbox sb-1, teardown destroyed)\n", o.err);
    }

    @Test
    void textModeRemovesTerminalControlSequencesFromUntrustedOutput() {
        ScriptedRunner runner = new ScriptedRunner(r -> result().stdout("\u001b]0;pwned\u0007red\u001b[31m!\ttab\r\n")
                .stderr("\u009b2J\u0000e\n").build());
        Outcome o = run(runner, "--code", "x");
        assertEquals(0, o.status);
        assertEquals("]0;pwnedred[31m!\ttab\n", o.out, "CRLF becomes a newline; a lone CR would be dropped");
        assertTrue(o.err.startsWith("2Je\nsandbox4j: exited with code 0"), o.err);
    }

    @Test
    void jsonModePrintsExactlyOneObjectAndNothingElse() throws Exception {
        ScriptedRunner runner = new ScriptedRunner(r -> result().status(RunStatus.TIMED_OUT).exitCode(null)
                .stdout("partial \"out\"\n\u001b[0m").stderr("\u00e9\ud83d\ude00").stdoutTruncated(true).build());
        Outcome o = run(runner, "--json", "--timeout", "2", "--code", "while True: pass");
        assertEquals(0, o.status);
        assertEquals("", o.err, "nothing on stderr in JSON mode");
        assertEquals(1, o.out.lines().count(), o.out);
        JsonNode n = MAPPER.readTree(o.out);
        assertEquals(12, n.size());
        assertEquals("partial \"out\"\n\u001b[0m", n.get("stdout").textValue(), "JSON keeps the output exactly");
        assertEquals(0, n.get("files").size(), "no --collect, no files");
        assertEquals("\u00e9\ud83d\ude00", n.get("stderr").textValue());
        assertTrue(n.get("exitCode").isNull());
        assertEquals("TIMED_OUT", n.get("status").textValue());
        assertTrue(n.get("stdoutTruncated").booleanValue());
        assertEquals(12, n.get("durationMs").intValue());
        assertEquals("scripted", n.get("provider").textValue());
        assertEquals("sb-1", n.get("sandboxId").textValue());
        assertEquals("DESTROYED", n.get("teardown").textValue());
    }

    @Test
    void theRequestCarriesTheOptions() {
        ScriptedRunner runner = new ScriptedRunner(r -> result().build());
        run(runner, "--language", "bash", "--code", "echo \"$HOME\" `id`", "--timeout", "7",
                "--egress", "allow=example.com,10.0.0.0/8", "--output-limit", "5");
        RunRequest r = runner.request;
        assertEquals("echo \"$HOME\" `id`", r.execution().code());
        assertEquals(Language.BASH, r.execution().language());
        assertEquals(Duration.ofSeconds(7), r.execution().budget());
        assertEquals(5, r.execution().outputLimit());
        assertEquals("[example.com]", r.spec().egress().allowedDomains().toString());
        assertEquals("[10.0.0.0/8]", r.spec().egress().allowedCidrs().toString());
    }

    @Test
    void versionPrintsTheBuildsVersionAndRunsNothing() throws Exception {
        ScriptedRunner runner = new ScriptedRunner(r -> { throw new AssertionError("nothing runs"); });
        Outcome o = run(runner, "--version");
        assertEquals(RunCode.EXIT_COMPLETED, o.status);
        assertEquals("", o.err);
        // the filtered resource: a Maven version, never the unfiltered placeholder
        assertTrue(o.out.matches("sandbox4j-cli \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?\n"), o.out);
        assertNull(o.providerAsked, "no runner is created");
        Outcome j = run(runner, "--json", "--version");
        assertEquals(RunCode.version(), MAPPER.readTree(j.out).get("version").textValue());
    }

    @Test
    void underJsonEveryFailureIsOneJsonObjectOnStdoutAndNothingOnStderr() throws Exception {
        ScriptedRunner ok = new ScriptedRunner(r -> result().build());
        Outcome usage = run(ok, "--json", "--timeout", "soon", "--code", "1");
        JsonNode u = onlyJson(usage, RunCode.EXIT_USAGE).get("error");
        assertEquals("usage", u.get("kind").textValue());
        assertEquals("--timeout: 'soon' is not a number of seconds (see --help)", u.get("message").textValue());
        assertEquals(2, u.get("exitStatus").intValue());

        // a parse failure before --json is reached still answers in JSON
        Outcome early = run(ok, "--bogus", "--json", "--code", "1");
        assertEquals("usage", onlyJson(early, RunCode.EXIT_USAGE).get("error").get("kind").textValue());
        // --code's value is code, not the flag
        Outcome notJson = run(ok, "--bogus", "--code", "--json");
        assertEquals("", notJson.out);
        assertTrue(notJson.err.startsWith("sandbox4j: unknown option '--bogus'"), notJson.err);

        ScriptedRunner failing = new ScriptedRunner(r -> {
            throw HttpErrors.forStatus(SandboxException.builder("create failed").provider("e2b").httpStatus(503));
        });
        JsonNode p = onlyJson(run(failing, "--json", "--code", "1"), RunCode.EXIT_PROVIDER).get("error");
        assertEquals("provider", p.get("kind").textValue());
        assertEquals("e2b", p.get("provider").textValue());
        assertEquals(503, p.get("httpStatus").intValue());
        assertTrue(p.get("retriable").booleanValue());
        assertFalse(p.get("codeMayHaveRun").booleanValue());
        assertTrue(failing.closed);
    }

    @Test
    void aRefusedAllowListNamesNoConstantAndSuggestsWhatWouldWork() {
        Capabilities local = Capabilities.builder("local").languages(Language.PYTHON)
                .egress(Capabilities.Egress.DENY_ALL, Capabilities.Egress.ALLOW_ALL).build();
        ScriptedRunner runner = new ScriptedRunner(r -> {
            local.check(r.spec().egress(), r.spec().limits());
            return result().build();
        }) {
            @Override
            public Capabilities capabilities() {
                return local;
            }
        };
        Outcome o = run(runner, "--egress", "allow=pypi.org", "--code", "1");
        assertOneErrorLine(o, RunCode.EXIT_USAGE, "local cannot enforce this policy exactly: default-deny egress with "
                + "allow rules; allowed domain 'pypi.org'. With local use --egress deny-all or --egress allow-all. "
                + "For an allow list of domains use a hosted provider (--provider e2b, vercel or daytona");
        assertFalse(o.err.contains("DEFAULT_DENY_WITH_RULES"), o.err);
        assertFalse(o.err.contains("ALLOW_DOMAINS"), o.err);
        assertTrue(runner.closed);
    }

    private static JsonNode onlyJson(Outcome o, int status) throws Exception {
        assertEquals(status, o.status, o.out + o.err);
        assertEquals("", o.err, "nothing on stderr under --json");
        assertEquals(1, o.out.lines().count(), o.out);
        return MAPPER.readTree(o.out);
    }

    @Test
    void unsupportedPolicyExitsTwoAndClosesTheRunner() {
        ScriptedRunner runner = new ScriptedRunner(r -> {
            throw new UnsupportedPolicyException("local", List.of("allowed domain 'example.com': local runner has no per-host egress"));
        });
        Outcome o = run(runner, "--egress", "allow=example.com", "--code", "1");
        assertOneErrorLine(o, RunCode.EXIT_USAGE, "local cannot enforce this policy exactly: allowed domain 'example.com'");
        assertTrue(runner.closed);
    }

    @Test
    void invalidPolicyFromTheRunnerExitsTwo() {
        ScriptedRunner runner = new ScriptedRunner(r -> { throw new InvalidPolicyException("bad rule"); });
        assertOneErrorLine(run(runner, "--code", "1"), RunCode.EXIT_USAGE, "bad rule");
    }

    @Test
    void configurationErrorsExitTwo() {
        ScriptedRunner runner = new ScriptedRunner(r -> {
            throw new SandboxConfigurationException("bwrap not found:\nlook at /usr/bin/bwrap");
        });
        assertOneErrorLine(run(runner, "--code", "1"), RunCode.EXIT_USAGE, "bwrap not found: look at /usr/bin/bwrap");
    }

    @Test
    void aProviderWhoseModuleIsMissingExitsTwoNamingTheArtifact() {
        // the real discovery, with a known provider whose module this jar does not bring
        String missing = Stream.of("modal", "vercel", "daytona", "e2b")
                .filter(p -> SandboxRunners.provider(p).isEmpty()).findFirst().orElse(null);
        assumeTrue(missing != null, "every provider module is on the classpath");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = RunCode.run(new String[] {"--provider", missing, "--code", "print(1)"},
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Map.of());
        assertEquals(RunCode.EXIT_USAGE, status);
        assertEquals("sandbox4j: provider '" + missing + "' is not on the classpath: add dev.sandbox4j:sandbox-" + missing + "\n",
                err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void anUnknownProviderExitsTwo() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = RunCode.run(new String[] {"--provider", "nosuch", "--code", "print(1)"},
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Map.of());
        assertEquals(RunCode.EXIT_USAGE, status);
        assertTrue(err.toString(StandardCharsets.UTF_8).startsWith("sandbox4j: unknown provider 'nosuch'"));
    }

    @Test
    void providerFailuresExitThreeWithTheDetailsOnOneLine() {
        ScriptedRunner runner = new ScriptedRunner(r -> {
            throw HttpErrors.forStatus(SandboxException.builder("create failed:\nservice unavailable")
                    .provider("e2b").httpStatus(503));
        });
        Outcome o = run(runner, "--provider", "e2b", "--code", "1");
        assertOneErrorLine(o, RunCode.EXIT_PROVIDER,
                "provider error (e2b, HTTP 503): create failed: service unavailable [retriable]");
        assertTrue(runner.closed);
    }

    @Test
    void authenticationAndInterruptionAreProviderErrors() {
        ScriptedRunner auth = new ScriptedRunner(r -> {
            throw new SandboxAuthenticationException(SandboxException.builder("invalid API key").provider("e2b").httpStatus(401));
        });
        assertOneErrorLine(run(auth, "--code", "1"), RunCode.EXIT_PROVIDER, "(e2b, HTTP 401): invalid API key");

        ScriptedRunner interrupted = new ScriptedRunner(r -> {
            throw new SandboxInterruptedException(SandboxException.builder("interrupted during exec")
                    .provider("local").codeMayHaveRun(true));
        });
        assertOneErrorLine(run(interrupted, "--code", "1"), RunCode.EXIT_PROVIDER,
                "sandbox4j: interrupted (local): interrupted during exec [the code may have run]");
    }

    @Test
    void credentialsFromTheEnvironmentNeverReachTheOutputOrTheSandbox() {
        String secret = "e2b_live_0123456789abcdef";
        Map<String, String> env = Map.of("E2B_API_KEY", secret, "SANDBOX4J_PROVIDER", "e2b");
        ScriptedRunner ok = new ScriptedRunner(r -> result().build());
        Outcome o1 = run(ok, env, "--code", "import os; print(os.environ)");
        Outcome o2 = run(ok, env, "--json", "--code", "1");
        assertTrue(ok.request.spec().env().isEmpty(), "the sandbox environment is only what the spec names");
        ScriptedRunner failing = new ScriptedRunner(r -> {
            throw HttpErrors.forStatus(SandboxException.builder("unauthorized").provider("e2b").httpStatus(401));
        });
        Outcome o3 = run(failing, env, "--code", "1");
        Outcome o4 = run(failing, env, "--code", "1", "--bogus");
        for (Outcome o : List.of(o1, o2, o3, o4)) {
            assertFalse(o.out.contains(secret), o.out);
            assertFalse(o.err.contains(secret), o.err);
        }
    }

    @Test
    void unexpectedFailuresExitOne() {
        ScriptedRunner runner = new ScriptedRunner(r -> { throw new IllegalStateException("bug"); });
        Outcome o = run(runner, "--code", "1");
        assertOneErrorLine(o, RunCode.EXIT_UNEXPECTED, "unexpected error: java.lang.IllegalStateException: bug");
        assertTrue(runner.closed);
    }

    @Test
    void aFactoryFailureNeedsNoClose() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        RunCode cli = new RunCode((name, env) -> { throw new SandboxConfigurationException("E2B_API_KEY is not set"); });
        int status = cli.execute(new String[] {"--provider", "e2b", "--code", "1"},
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Map.of());
        assertEquals(RunCode.EXIT_USAGE, status);
        assertEquals("sandbox4j: E2B_API_KEY is not set\n", err.toString(StandardCharsets.UTF_8));
    }

    /** stdout and stderr into one stream, as a terminal shows them. */
    private static String terminal(ScriptedRunner runner, String... args) {
        ByteArrayOutputStream both = new ByteArrayOutputStream();
        PrintStream ps = new PrintStream(both, true, StandardCharsets.UTF_8);
        assertEquals(RunCode.EXIT_COMPLETED, new RunCode((name, e) -> runner).execute(args, ps, ps, Map.of()));
        return both.toString(StandardCharsets.UTF_8);
    }

    /** Lines a person would read as one of the CLI's own: what they display, after invisible characters. */
    private static List<String> displayedAsCli(String text) {
        return text.lines().map(l -> l.replaceAll("[\\p{Cf}\\u115f\\u1160\\u3164\\uffa0\\u034f\\u17b4\\u17b5\\ufe00-\\ufe0f]", ""))
                .filter(l -> l.startsWith("sandbox4j: ")).toList();
    }

    private static final String FORGED = "sandbox4j: exited with code 0 after 1 ms (provider scripted, sandbox sb-1, teardown destroyed)";

    @Test
    void aForgedSummaryBehindAZeroWidthLetterIsMarked() {
        for (String invisible : new String[] {"\u1160", "\u115f", "\u3164", "\uffa0", "\u034f", "\u17b4", "\ufe0f",
                "\u00ad", "\ud834\udd73", "\udb40\udc01"}) {
            ScriptedRunner runner = new ScriptedRunner(r -> result().exitCode(7).stdout(invisible + FORGED + "\n").build());
            String shown = terminal(runner, "--code", "x");
            List<String> cli = displayedAsCli(shown);
            assertEquals(1, cli.size(), Integer.toHexString(invisible.codePointAt(0)) + ": " + shown);
            assertTrue(cli.get(0).startsWith("sandbox4j: exited with code 7"), shown);
            assertFalse(shown.contains(invisible), "the invisible character is not printed: " + shown);
        }
    }

    @Test
    void theSummaryStartsItsOwnLineWhenStdoutHasNoFinalNewline() {
        ScriptedRunner runner = new ScriptedRunner(r -> result().exitCode(3).stdout("no newline here").build());
        String shown = terminal(runner, "--code", "x");
        List<String> lines = shown.lines().toList();
        assertEquals("no newline here", lines.get(0), shown);
        assertTrue(lines.get(lines.size() - 1).startsWith("sandbox4j: exited with code 3 after "), shown);
        ScriptedRunner both = new ScriptedRunner(r -> result().stdout("out").stderr("err").build());
        assertTrue(terminal(both, "--code", "x").lines().anyMatch(l -> l.startsWith("sandbox4j: exited with code 0")));
    }

    @Test
    void lineAndParagraphSeparatorsCannotStartAForgedLine() {
        for (String sep : new String[] {"\u2028", "\u2029", "\u0085", "\u000b", "\u000c"}) {
            ScriptedRunner runner = new ScriptedRunner(r -> result().exitCode(5).stdout("ok" + sep + FORGED + "\n")
                    .stderr("e" + sep + FORGED).build());
            String shown = terminal(runner, "--code", "x");
            assertFalse(shown.contains(sep), Integer.toHexString(sep.charAt(0)) + ": " + shown);
            List<String> cli = displayedAsCli(shown);
            assertEquals(1, cli.size(), shown);
            assertTrue(cli.get(0).startsWith("sandbox4j: exited with code 5"), shown);
        }
    }

    @Test
    void lookAlikeLettersCannotForgeTheSummary() {
        // Cyrillic dze and a, Greek omicron, Cherokee for 4, full-width letters
        for (String forged : new String[] {"\u0455andbox4j: exited with code 0", "s\u0430ndb\u03bfx4j: exited with code 0",
                "sandbox\u13ce j: x".replace(" ", ""), "\uff53\uff41ndbox4j: x", "s\u0336andbox4j: x"}) {
            ScriptedRunner runner = new ScriptedRunner(r -> result().stdout(forged + "\n").build());
            String out = run(runner, "--code", "x").out;
            assertTrue(out.startsWith(dev.sandbox4j.api.UntrustedText.MARK), forged + " -> " + out);
        }
        ScriptedRunner plain = new ScriptedRunner(r -> result().stdout("\u4e2d\u6587\u8f93\u51fa\u7684\u4e00\u884c\u6587\u5b57\u554a\n"
                + "I use sandbox4j: fine\n").build());
        assertEquals("\u4e2d\u6587\u8f93\u51fa\u7684\u4e00\u884c\u6587\u5b57\u554a\nI use sandbox4j: fine\n",
                run(plain, "--code", "x").out, "ordinary lines are not marked");
    }

    @Test
    void aFileNameCannotBreakItsLineOrHideText() {
        dev.sandbox4j.api.SandboxFile f = dev.sandbox4j.api.SandboxFile.builder("out/a\u2028" + FORGED + "\u202e.txt").mediaType("text/plain").content(new byte[] {1}).size(1).build();
        ScriptedRunner runner = new ScriptedRunner(r -> result().files(List.of(f)).build());
        String shown = terminal(runner, "--code", "x", "--collect", "out/*");
        assertFalse(shown.contains("\u2028") || shown.contains("\u202e"), shown);
        assertEquals(2, displayedAsCli(shown).size(), "the file line and the summary: " + shown);
    }

    @Test
    void helpAndVersionWinInAnyOrderAndVersionHonoursJsonEitherSide() throws Exception {
        ScriptedRunner runner = new ScriptedRunner(r -> { throw new AssertionError("must not run"); });
        for (String[] args : List.of(new String[] {"--version", "--json"}, new String[] {"--json", "--version"},
                new String[] {"--code", "1", "--version", "--json"})) {
            Outcome o = run(runner, args);
            assertEquals(0, o.status, String.join(" ", args) + ": " + o.err);
            assertEquals(RunCode.version(), MAPPER.readTree(o.out).path("version").asText(), String.join(" ", args) + ": " + o.out);
        }
        Outcome plain = run(runner, "--code", "1", "--version");
        assertTrue(plain.out.startsWith("sandbox4j-cli "), plain.out);
        Outcome help = run(runner, "--json", "--code", "1", "--help");
        assertTrue(help.out.startsWith("Usage: "), help.out);
    }

    @Test
    void aFileAskedForAndNotCollectedIsListedWithItsReason() throws Exception {
        ScriptedRunner runner = new ScriptedRunner(r -> result().fileProblems(List.of("out/*.png: no file matched",
                "link.txt: refused: a symbolic link")).build());
        Outcome json = run(runner, "--code", "x", "--collect", "out/*.png", "--collect", "link.txt", "--json");
        JsonNode problems = MAPPER.readTree(json.out).path("notCollected");
        assertEquals(2, problems.size(), json.out);
        assertEquals("out/*.png: no file matched", problems.get(0).asText());
        assertEquals("link.txt: refused: a symbolic link", problems.get(1).asText());
        Outcome plain = run(runner, "--code", "x", "--collect", "out/*.png", "--collect", "link.txt");
        List<String> err = plain.err.lines().toList();
        assertTrue(err.contains("sandbox4j: not collected: out/*.png: no file matched"), plain.err);
        assertTrue(err.contains("sandbox4j: not collected: link.txt: refused: a symbolic link"), plain.err);
        assertTrue(err.get(err.size() - 1).startsWith("sandbox4j: exited with code 0"), "the summary stays last: " + plain.err);
    }

    @Test
    void configurationMessagesSpeakOfEnvironmentVariablesNotBuilderMethods() {
        for (String provider : new String[] {"e2b", "daytona", "modal", "vercel"}) {
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int status = RunCode.run(new String[] {"--provider", provider, "--code", "1"},
                    new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8), Map.of());
            String message = err.toString(StandardCharsets.UTF_8);
            assertEquals(RunCode.EXIT_USAGE, status, message);
            assertTrue(message.matches("(?s).*[A-Z0-9]+_[A-Z_]+.*"), "names the variable: " + message);
            assertFalse(message.contains("(...)") || message.contains("call ") || message.contains("builder()"), message);
        }
    }

    @Test
    void theHelpDescribesWhatPlainModeDoes() {
        String help = dev.sandbox4j.cli.internal.CliOptions.USAGE;
        assertFalse(help.contains("tab and carriage return removed"), "carriage returns are dropped: " + help);
        assertTrue(help.contains("carriage return"), help);
        assertTrue(help.contains("notCollected"), help);
        assertTrue(help.contains("docker"), help);
    }
}
