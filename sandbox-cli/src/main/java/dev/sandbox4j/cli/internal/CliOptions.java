package dev.sandbox4j.cli.internal;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.policy.Cidr;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.InvalidPolicyException;
import dev.sandbox4j.policy.Language;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The parsed command line of {@code RunCode}. {@link #parse} validates everything that can be checked
 * without a sandbox (egress rules, numbers, the code file), so a bad command line fails before any
 * runner is created.
 */
public final class CliOptions {
    /** A code file larger than this is refused rather than read into memory. */
    public static final long MAX_CODE_FILE_BYTES = 16L * 1024 * 1024;
    public static final String DEFAULT_PROVIDER = "local";

    // Items with these characters cannot be host names, so a CIDR parse error is the one to report.
    private static final Pattern ADDRESS_LIKE = Pattern.compile("[0-9.]+|.*[:/].*");

    public static final String USAGE = String.join("\n",
            "Usage: java -jar sandbox4j-cli.jar [options] (--code TEXT | --file PATH)",
            "",
            "Runs untrusted code in a disposable sandbox and prints what it did.",
            "",
            "Options:",
            "  --provider NAME       local (default), docker, auto (bubblewrap, else Docker), e2b,",
            "                        vercel, daytona or modal; credentials and",
            "                        base URLs come from the provider's own environment variables",
            "  --language LANG       python (default), javascript or bash",
            "  --code TEXT           the code to run",
            "  --file PATH           read the code from a UTF-8 file instead",
            "  --timeout SECONDS     the run's budget (default 60); the code is killed after it",
            "  --egress POLICY       deny-all (default), allow-all, or allow=ITEM[,ITEM...] where each",
            "                        ITEM is a domain (example.com, *.example.com) or a CIDR (10.0.0.0/8)",
            "  --output-limit CHARS  characters kept per stream (default 20000); the rest is counted",
            "  --collect GLOB        collect files the code wrote (repeatable; relative to the work",
            "                        directory; *, ?, **), at most 10 MiB per file and 32 MiB in all",
            "  --save-dir DIR        write the collected files into DIR (an existing directory; names",
            "                        sanitised, never outside DIR, never overwriting)",
            "  --json                print exactly one JSON object: stdout, stderr, exitCode, status,",
            "                        stdoutTruncated, stderrTruncated, durationMs, provider, sandboxId,",
            "                        teardown, files (path, size, mediaType, truncated, savedAs),",
            "                        notCollected (one \"glob or path: reason\" per file asked for",
            "                        and not collected: none matched, refused, a cap reached)",
            "  --version             print the version and exit",
            "  --help                print this help",
            "",
            "Without --json the code's stdout goes to stdout and its stderr to stderr as they display",
            "(the output is untrusted): control characters other than newline and tab are removed",
            "(CRLF becomes a newline, a lone carriage return is dropped), other line breaks become",
            "newlines, invisible characters (bidi controls, zero-width and other default-ignorable",
            "characters) are removed, and a line that looks like one of the CLI's own is shown after",
            "\"(output) \". Then, on stderr, one line per file not collected and a one-line summary,",
            "always on a line of its own and always last.",
            "",
            "Under --json a failure is also one JSON object on stdout: {\"error\":{\"kind\":...,",
            "\"message\":...,\"exitStatus\":...}} (kind: usage, policy, configuration, provider,",
            "interrupted or unexpected), and nothing is written to stderr.",
            "",
            "Exit status: 0 the run completed (whatever the code's own exit code; see the summary or",
            "the JSON), 2 usage or policy error, or a provider that is not on the classpath or not",
            "configured, 3 provider error, 1 unexpected error.",
            "");

    private final boolean help;
    private final boolean version;
    private final String provider;
    private final Language language;
    private final String code;
    private final Duration timeout;
    private final EgressPolicy egress;
    private final Integer outputLimit;
    private final boolean json;
    private List<String> collect = List.of();
    private Path saveDir;

    private CliOptions(boolean help, boolean version, String provider, Language language, String code, Duration timeout,
                       EgressPolicy egress, Integer outputLimit, boolean json) {
        this.help = help;
        this.version = version;
        this.provider = provider;
        this.language = language;
        this.code = code;
        this.timeout = timeout;
        this.egress = egress;
        this.outputLimit = outputLimit;
        this.json = json;
    }

    /**
     * Parses the arguments in order; {@code --name value} and {@code --name=value} are both accepted.
     * Reads the code file if {@code --file} is given.
     *
     * @throws UsageException with a one-line message naming the option that is wrong
     */
    public static CliOptions parse(String... args) {
        // --help and --version end the command wherever they stand (read as wantsJson reads: a value is not a flag)
        boolean helpAsked = false;
        boolean versionAsked = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            helpAsked |= a.equals("--help") || a.equals("-h");
            versionAsked |= a.equals("--version") || a.equals("-V");
            if (isValueOption(a)) {
                i++;
            }
        }
        if (helpAsked) {
            return new CliOptions(true, false, DEFAULT_PROVIDER, Language.PYTHON, null, null, EgressPolicy.denyAll(), null, false);
        }
        if (versionAsked) {
            return new CliOptions(false, true, DEFAULT_PROVIDER, Language.PYTHON, null, null, EgressPolicy.denyAll(), null,
                    wantsJson(args));
        }
        String provider = DEFAULT_PROVIDER;
        Language language = Language.PYTHON;
        String code = null;
        Path file = null;
        Duration timeout = null;
        EgressPolicy egress = EgressPolicy.denyAll();
        Integer outputLimit = null;
        boolean json = false;
        Set<String> seen = new HashSet<>();
        List<String> collect = new ArrayList<>();
        Path saveDir = null;

        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            String name = arg;
            String inline = null;
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0) {
                name = arg.substring(0, eq);
                inline = arg.substring(eq + 1);
            }
            if (!name.startsWith("-")) {
                throw new UsageException("unexpected argument '" + arg + "' (put the code after --code)");
            }
            if (!seen.add(name) && !name.equals("--collect")) {
                throw new UsageException("option " + name + " is given twice");
            }
            if (name.equals("--json")) {
                if (inline != null) {
                    throw new UsageException("option --json takes no value");
                }
                json = true;
                continue;
            }
            String value;
            if (inline != null) {
                value = inline;
            } else if (i + 1 < args.length && isValueOption(name)) {
                value = args[++i];
            } else if (isValueOption(name)) {
                throw new UsageException("option " + name + " needs a value");
            } else {
                throw new UsageException("unknown option '" + name + "'");
            }
            switch (name) {
                case "--provider":
                    provider = parseProvider(value);
                    break;
                case "--language":
                    language = parseLanguage(value);
                    break;
                case "--code":
                    code = value;
                    break;
                case "--file":
                    file = parsePath(value);
                    break;
                case "--timeout":
                    timeout = parseTimeout(value);
                    break;
                case "--egress":
                    egress = parseEgress(value);
                    break;
                case "--output-limit":
                    outputLimit = parseOutputLimit(value);
                    break;
                case "--collect":
                    collect.add(parseCollect(value));
                    break;
                case "--save-dir":
                    saveDir = parseSaveDir(value);
                    break;
                default:
                    throw new UsageException("unknown option '" + name + "'");
            }
        }
        if (code != null && file != null) {
            throw new UsageException("give either --code or --file, not both");
        }
        if (code == null && file == null) {
            throw new UsageException("no code to run: give --code TEXT or --file PATH");
        }
        if (file != null) {
            code = readCode(file);
        }
        if (saveDir != null && collect.isEmpty()) {
            throw new UsageException("--save-dir needs at least one --collect GLOB");
        }
        CliOptions o = new CliOptions(false, false, provider, language, code, timeout, egress, outputLimit, json);
        o.collect = List.copyOf(collect);
        o.saveDir = saveDir;
        return o;
    }

    static String parseCollect(String value) {
        try {
            Execution.builder("").collect(value);
            return value;
        } catch (IllegalArgumentException e) {
            throw new UsageException("--collect: " + e.getMessage());
        }
    }

    static Path parseSaveDir(String value) {
        Path p = parsePath(value);
        if (!Files.isDirectory(p)) {
            throw new UsageException("--save-dir: '" + value + "' is not an existing directory");
        }
        return p;
    }

    /**
     * Whether {@code args} ask for JSON output, read the way {@link #parse} reads them (a value such as
     * {@code --code --json} is code, not the flag), so that a command line that fails to parse still gets
     * its error as JSON.
     */
    public static boolean wantsJson(String... args) {
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--json")) {
                return true;
            }
            if (arg.equals("--help") || arg.equals("-h")) {
                return false;
            }
            if (isValueOption(arg)) {
                i++;
            }
        }
        return false;
    }

    private static boolean isValueOption(String name) {
        switch (name) {
            case "--provider": case "--language": case "--code": case "--file":
            case "--timeout": case "--egress": case "--output-limit": case "--collect": case "--save-dir":
                return true;
            default:
                return false;
        }
    }

    static String parseProvider(String value) {
        String p = value.trim().toLowerCase(Locale.ROOT);
        if (p.isEmpty()) {
            throw new UsageException("--provider needs a name: local, docker, auto, e2b, vercel, daytona or modal");
        }
        return p;
    }

    static Language parseLanguage(String value) {
        try {
            return Language.parse(value);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--language: " + e.getMessage());
        }
    }

    private static Path parsePath(String value) {
        if (value.isEmpty()) {
            throw new UsageException("--file needs a path");
        }
        try {
            return Path.of(value);
        } catch (InvalidPathException e) {
            throw new UsageException("--file: '" + value + "' is not a valid path");
        }
    }

    /** Decimal seconds, e.g. {@code 10} or {@code 2.5}. */
    static Duration parseTimeout(String value) {
        BigDecimal seconds;
        try {
            seconds = new BigDecimal(value.trim());
        } catch (NumberFormatException e) {
            throw new UsageException("--timeout: '" + value + "' is not a number of seconds");
        }
        long nanos;
        try {
            nanos = seconds.movePointRight(9).setScale(0, RoundingMode.CEILING).longValueExact();
        } catch (ArithmeticException e) {
            throw new UsageException("--timeout: " + value + " seconds is too large");
        }
        if (nanos <= 0) {
            throw new UsageException("--timeout must be positive, was " + value);
        }
        return Duration.ofNanos(nanos);
    }

    static int parseOutputLimit(String value) {
        int chars;
        try {
            chars = Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new UsageException("--output-limit: '" + value + "' is not a whole number of characters");
        }
        if (chars < 0) {
            throw new UsageException("--output-limit must not be negative, was " + value);
        }
        return chars;
    }

    /** {@code deny-all}, {@code allow-all} or {@code allow=ITEM[,ITEM...]}, each item a CIDR or else a domain. */
    static EgressPolicy parseEgress(String value) {
        String v = value.trim();
        String lower = v.toLowerCase(Locale.ROOT);
        if (lower.equals("deny-all")) {
            return EgressPolicy.denyAll();
        }
        if (lower.equals("allow-all")) {
            return EgressPolicy.allowAll();
        }
        if (!lower.startsWith("allow=")) {
            throw new UsageException("--egress must be deny-all, allow-all or allow=ITEM[,ITEM...], was '" + value + "'");
        }
        EgressPolicy.Builder b = EgressPolicy.builder(EgressPolicy.Default.DENY);
        for (String raw : v.substring("allow=".length()).split(",", -1)) {
            String item = raw.trim();
            if (item.isEmpty()) {
                throw new UsageException("--egress allow= has an empty item: list domains or CIDRs separated by commas");
            }
            if (isCidr(item)) {
                b.allowCidr(item);
            } else if (ADDRESS_LIKE.matcher(item).matches()) {
                b.allowCidr(item); // records the CIDR parse error; build() reports it
            } else {
                b.allowDomain(item);
            }
        }
        try {
            return b.build();
        } catch (InvalidPolicyException e) {
            throw new UsageException("--egress: " + e.getMessage());
        }
    }

    private static boolean isCidr(String item) {
        try {
            Cidr.parse(item);
            return true;
        } catch (InvalidPolicyException e) {
            return false;
        }
    }

    private static String readCode(Path file) {
        try {
            if (Files.isDirectory(file)) {
                throw new UsageException("--file: '" + file + "' is a directory");
            }
            long size = Files.size(file);
            if (size > MAX_CODE_FILE_BYTES) {
                throw new UsageException("--file: '" + file + "' is " + size + " bytes, more than the "
                        + MAX_CODE_FILE_BYTES + " allowed");
            }
            // readString fails on malformed UTF-8 instead of silently replacing characters of the code
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new UsageException("--file: '" + file + "' does not exist");
        } catch (AccessDeniedException e) {
            throw new UsageException("--file: '" + file + "' cannot be read (permission denied)");
        } catch (CharacterCodingException e) {
            throw new UsageException("--file: '" + file + "' is not valid UTF-8");
        } catch (IOException e) {
            throw new UsageException("--file: '" + file + "' cannot be read: " + e.getClass().getSimpleName());
        }
    }

    /** The request to run: deny-all unless {@code --egress} says otherwise, defaults where no option is given. */
    public RunRequest toRunRequest() {
        if (help || version) {
            throw new IllegalStateException("--help and --version have no request");
        }
        Execution.Builder e = Execution.builder(code).language(language);
        if (timeout != null) {
            e.budget(timeout);
        }
        if (outputLimit != null) {
            e.outputLimit(outputLimit);
        }
        e.collect(collect);
        return RunRequest.of(SandboxSpec.builder().egress(egress).build(), e.build());
    }

    /** The {@code --collect} globs, in order. */
    public List<String> collect() {
        return collect;
    }

    /** The {@code --save-dir} directory, if given. */
    public Optional<Path> saveDir() {
        return Optional.ofNullable(saveDir);
    }

    public boolean help() {
        return help;
    }

    /** Whether {@code --version} was given. */
    public boolean version() {
        return version;
    }

    public String provider() {
        return provider;
    }

    public Language language() {
        return language;
    }

    /** The code to run; null only with {@code --help}. */
    public String code() {
        return code;
    }

    public Optional<Duration> timeout() {
        return Optional.ofNullable(timeout);
    }

    public EgressPolicy egress() {
        return egress;
    }

    public OptionalInt outputLimit() {
        return outputLimit == null ? OptionalInt.empty() : OptionalInt.of(outputLimit);
    }

    public boolean json() {
        return json;
    }

    @Override
    public String toString() {
        return "CliOptions[provider=" + provider + ", language=" + language.id()
                + ", code=" + (code == null ? "none" : code.length() + " chars") + ", timeout=" + timeout
                + ", egress=" + egress + ", outputLimit=" + outputLimit + ", json=" + json + "]";
    }
}
