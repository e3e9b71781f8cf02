package dev.sandbox4j.cli.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.policy.Cidr;
import dev.sandbox4j.policy.DomainPattern;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CliOptionsTest {
    @TempDir
    Path dir;

    private static String usageError(String... args) {
        return assertThrows(UsageException.class, () -> CliOptions.parse(args)).getMessage();
    }

    @Test
    void defaultsAreLocalPythonDenyAllAndTheApiDefaults() {
        CliOptions o = CliOptions.parse("--code", "print(6*7)");
        assertFalse(o.help());
        assertFalse(o.json());
        assertEquals("local", o.provider());
        assertEquals(Language.PYTHON, o.language());
        assertEquals("print(6*7)", o.code());
        assertTrue(o.egress().isDenyAll());
        assertTrue(o.timeout().isEmpty());
        assertTrue(o.outputLimit().isEmpty());

        RunRequest r = o.toRunRequest();
        assertEquals("print(6*7)", r.execution().code());
        assertEquals(Language.PYTHON, r.execution().language());
        assertEquals(Execution.DEFAULT_BUDGET, r.execution().budget());
        assertEquals(Execution.DEFAULT_OUTPUT_LIMIT, r.execution().outputLimit());
        assertTrue(r.spec().egress().isDenyAll());
        assertTrue(r.spec().setupCommands().isEmpty());
        assertTrue(r.spec().env().isEmpty(), "the sandbox gets no environment from the CLI");
    }

    @Test
    void everyOptionReachesTheRequest() {
        CliOptions o = CliOptions.parse("--provider", "E2B", "--language", "javascript", "--code", "console.log(1)",
                "--timeout", "2.5", "--egress", "allow=example.com", "--output-limit", "100", "--json");
        assertEquals("e2b", o.provider());
        assertTrue(o.json());
        RunRequest r = o.toRunRequest();
        assertEquals(Language.JAVASCRIPT, r.execution().language());
        assertEquals(Duration.ofMillis(2500), r.execution().budget());
        assertEquals(100, r.execution().outputLimit());
        assertEquals(List.of(DomainPattern.parse("example.com")), r.spec().egress().allowedDomains());
        assertEquals(EgressPolicy.Default.DENY, r.spec().egress().defaultAction());
    }

    @Test
    void inlineValuesWithEqualsSignAreAccepted() {
        CliOptions o = CliOptions.parse("--language=bash", "--code=echo a=b", "--egress=allow-all", "--timeout=3");
        assertEquals(Language.BASH, o.language());
        assertEquals("echo a=b", o.code(), "only the first '=' separates name and value");
        assertTrue(o.egress().isAllowAll());
        assertEquals(Duration.ofSeconds(3), o.timeout().orElseThrow());
    }

    @Test
    void codeMayLookLikeAnOption() {
        assertEquals("--help", CliOptions.parse("--code", "--help").code());
        assertEquals("-1", CliOptions.parse("--code", "-1").code());
        assertEquals("", CliOptions.parse("--code", "").code());
    }

    @Test
    void codeIsKeptByteForByte() {
        String code = "print(\"a'b\" + '$(id)' + `x` \\\n\u00e9\u4e2d\ud83d\ude00\t)";
        assertEquals(code, CliOptions.parse("--code", code).toRunRequest().execution().code());
    }

    @Test
    void helpWinsWhereverItIs() {
        assertTrue(CliOptions.parse("--help").help());
        assertTrue(CliOptions.parse("-h").help());
        assertTrue(CliOptions.parse("--json", "--help").help());
        assertTrue(CliOptions.parse("--help", "--bogus").help());
        assertThrows(IllegalStateException.class, () -> CliOptions.parse("--help").toRunRequest());
    }

    @Test
    void usageTextNamesEveryOption() {
        for (String option : List.of("--provider", "--language", "--code", "--file", "--timeout", "--egress",
                "--output-limit", "--json", "--help", "deny-all", "allow-all", "allow=")) {
            assertTrue(CliOptions.USAGE.contains(option), option);
        }
    }

    @Test
    void missingOrDoubledCodeIsAUsageError() {
        assertTrue(usageError().contains("no code to run"));
        assertTrue(usageError("--json").contains("no code to run"));
        assertTrue(usageError("--code", "1", "--file", "x.py").contains("either --code or --file"));
    }

    @Test
    void malformedCommandLinesAreUsageErrors() {
        assertEquals("option --code needs a value", usageError("--code"));
        assertEquals("option --timeout needs a value", usageError("--code", "1", "--timeout"));
        assertEquals("unknown option '--bogus'", usageError("--code", "1", "--bogus"));
        assertEquals("unknown option '--bogus'", usageError("--bogus=1", "--code", "1"));
        assertEquals("option --json takes no value", usageError("--json=true", "--code", "1"));
        assertEquals("option --code is given twice", usageError("--code", "1", "--code", "2"));
        assertEquals("option --egress is given twice",
                usageError("--code", "1", "--egress", "deny-all", "--egress=allow-all"));
        assertTrue(usageError("print(1)").startsWith("unexpected argument 'print(1)'"));
        assertTrue(usageError("--provider", " ", "--code", "1").startsWith("--provider needs a name"));
    }

    @Test
    void languagesAndUnknownLanguage() {
        assertEquals(Language.JAVASCRIPT, CliOptions.parse("--language", "js", "--code", "1").language());
        assertEquals(Language.BASH, CliOptions.parse("--language", "BASH", "--code", "1").language());
        assertTrue(usageError("--language", "cobol", "--code", "1").contains("unknown language 'cobol'"));
    }

    @Test
    void timeoutIsPositiveDecimalSeconds() {
        assertEquals(Duration.ofSeconds(10), CliOptions.parseTimeout("10"));
        assertEquals(Duration.ofMillis(250), CliOptions.parseTimeout(" 0.25 "));
        assertEquals(Duration.ofNanos(1), CliOptions.parseTimeout("0.0000000001"), "rounds up, never to zero");
        assertTrue(usageError("--timeout", "0", "--code", "1").contains("must be positive"));
        assertTrue(usageError("--timeout", "-3", "--code", "1").contains("must be positive"));
        assertTrue(usageError("--timeout", "ten", "--code", "1").contains("not a number of seconds"));
        assertTrue(usageError("--timeout", "1e30", "--code", "1").contains("too large"));
    }

    @Test
    void outputLimitIsANonNegativeWholeNumber() {
        assertEquals(0, CliOptions.parse("--output-limit", "0", "--code", "1").toRunRequest().execution().outputLimit());
        assertTrue(usageError("--output-limit", "-1", "--code", "1").contains("must not be negative"));
        assertTrue(usageError("--output-limit", "1.5", "--code", "1").contains("not a whole number"));
        assertTrue(usageError("--output-limit", "99999999999", "--code", "1").contains("not a whole number"));
    }

    @Test
    void egressKeywords() {
        assertEquals(EgressPolicy.denyAll(), CliOptions.parseEgress("deny-all"));
        assertEquals(EgressPolicy.allowAll(), CliOptions.parseEgress("allow-all"));
        assertEquals(EgressPolicy.allowAll(), CliOptions.parseEgress(" Allow-All "));
    }

    @Test
    void egressAllowListDecidesCidrOrDomainPerItem() {
        EgressPolicy p = CliOptions.parseEgress("allow=example.com, *.pypi.org,10.0.0.0/8,2001:db8::/32,1.2.3.4,xn--bcher-kva.de");
        assertEquals(EgressPolicy.Default.DENY, p.defaultAction());
        assertEquals(List.of(DomainPattern.parse("example.com"), DomainPattern.parse("*.pypi.org"),
                DomainPattern.parse("xn--bcher-kva.de")), p.allowedDomains());
        assertEquals(List.of(Cidr.parse("10.0.0.0/8"), Cidr.parse("2001:db8::/32"), Cidr.parse("1.2.3.4/32")),
                p.allowedCidrs());
        assertTrue(p.deniedCidrs().isEmpty());
        assertTrue(p.headerRules().isEmpty());
    }

    @Test
    void egressItemsThatLookLikeAddressesReportTheCidrProblem() {
        String hostBits = usageError("--egress", "allow=10.0.0.1/8", "--code", "1");
        assertTrue(hostBits.contains("host bits"), hostBits);
        assertTrue(hostBits.contains("10.0.0.0/8"), "suggests the network: " + hostBits);
        String badV4 = usageError("--egress", "allow=1.2.3", "--code", "1");
        assertTrue(badV4.contains("not an IPv4 or IPv6 address"), badV4);
        String badPrefix = usageError("--egress", "allow=10.0.0.0/33", "--code", "1");
        assertTrue(badPrefix.contains("out of range"), badPrefix);
    }

    @Test
    void malformedEgressIsAUsageErrorNamingEveryBadItem() {
        String both = usageError("--egress", "allow=*,bad_host.com,ok.com", "--code", "1");
        assertTrue(both.startsWith("--egress: "), both);
        assertTrue(both.contains("'*'"), both);
        assertTrue(both.contains("bad_host.com"), both);
        assertTrue(usageError("--egress", "allow=", "--code", "1").contains("empty item"));
        assertTrue(usageError("--egress", "allow=a.com,,b.com", "--code", "1").contains("empty item"));
        assertTrue(usageError("--egress", "allow=com", "--code", "1").contains("at least two labels"));
        assertTrue(usageError("--egress", "none", "--code", "1").contains("deny-all, allow-all or allow="));
        assertTrue(usageError("--egress", "allow-all,example.com", "--code", "1").contains("deny-all, allow-all or allow="));
    }

    @Test
    void fileIsReadAsUtf8ByteForByte() throws IOException {
        String code = "print('\u00e9\u4e2d\ud83d\ude00')\nprint(\"$(x)\")\n";
        Path file = dir.resolve("code.py");
        Files.writeString(file, code, StandardCharsets.UTF_8);
        CliOptions o = CliOptions.parse("--file", file.toString());
        assertEquals(code, o.code());
        assertEquals(code, o.toRunRequest().execution().code());
    }

    @Test
    void unreadableFilesAreUsageErrors() throws IOException {
        assertTrue(usageError("--file", dir.resolve("missing.py").toString()).contains("does not exist"));
        assertTrue(usageError("--file", dir.toString()).contains("is a directory"));
        Path latin1 = dir.resolve("latin1.py");
        Files.write(latin1, new byte[] {'p', 'r', 'i', 'n', 't', '(', '"', (byte) 0xe9, '"', ')'});
        assertTrue(usageError("--file", latin1.toString()).contains("not valid UTF-8"));
        assertTrue(usageError("--file", "").contains("needs a path"));
        assertTrue(usageError("--file", "a\u0000b").contains("not a valid path"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"--code", "--file", "--timeout", "--egress", "--output-limit", "--provider", "--language"})
    void everyValueOptionNeedsItsValue(String option) {
        assertEquals("option " + option + " needs a value", usageError(option));
    }

    @Test
    void toStringDoesNotRepeatTheCode() {
        String s = CliOptions.parse("--code", "SECRET_LOOKING_CODE").toString();
        assertFalse(s.contains("SECRET_LOOKING_CODE"), s);
        assertNull(CliOptions.parse("--help").code());
    }
}
