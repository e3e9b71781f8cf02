package dev.sandbox4j.mcp.internal;

import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.InvalidPolicyException;
import java.time.Duration;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/** The operator's command line: provider and policy, fixed for the server's whole life. */
public final class McpOptions {
    public static final String USAGE = String.join("\n",
            "Usage: java -jar sandbox4j-mcp.jar [options]",
            "",
            "An MCP server on stdin/stdout offering one tool, run_code, that runs code in a disposable",
            "sandbox. The policy below is fixed here; MCP clients choose only the code, its language and",
            "a time limit up to --max-timeout. Logs go to stderr; stdout carries only protocol frames.",
            "",
            "Options:",
            "  --provider NAME        local (default), docker, auto (bubblewrap, else Docker), e2b,",
            "                         vercel, daytona or modal; credentials and base URLs come from the",
            "                         provider's own environment variables",
            "  --egress POLICY        deny-all (default), allow-all, or allow=ITEM[,ITEM...] where each",
            "                         ITEM is a domain (example.com, *.example.com) or a CIDR (10.0.0.0/8)",
            "  --timeout SECONDS      the time limit when the client asks for none (default 30)",
            "  --max-timeout SECONDS  the longest time limit; larger requests are lowered (default 120)",
            "  --output-limit CHARS   characters of stdout and of stderr a client sees (default 8000)",
            "  --version              print the version and exit",
            "  --help                 print this help",
            "",
            "Exit status: 0 when stdin closes, 2 for a usage or policy error or a provider that is",
            "missing or not configured, 1 for anything else.",
            "");

    private static final Set<String> OPTIONS = Set.of("--provider", "--egress", "--timeout", "--max-timeout", "--output-limit");
    private static final Pattern ADDRESS_LIKE = Pattern.compile("[0-9.]+|.*[:/].*");

    final boolean help;
    boolean version;
    final String provider;
    final EgressPolicy egress;
    final Duration timeout;
    final Duration maxTimeout;
    final int outputLimit;

    private McpOptions(boolean help, String provider, EgressPolicy egress, Duration timeout, Duration maxTimeout,
                       int outputLimit) {
        this.help = help;
        this.provider = provider;
        this.egress = egress;
        this.timeout = timeout;
        this.maxTimeout = maxTimeout;
        this.outputLimit = outputLimit;
    }

    /** Parses {@code --name value} and {@code --name=value}; throws {@link IllegalArgumentException} naming the bad option. */
    public static McpOptions parse(String... args) {
        String provider = "local";
        EgressPolicy egress = EgressPolicy.denyAll();
        Duration timeout = Duration.ofSeconds(30);
        Duration maxTimeout = Duration.ofSeconds(120);
        boolean timeoutGiven = false;
        int outputLimit = 8_000;
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < args.length; i++) {
            String name = args[i];
            String value = null;
            int eq = name.indexOf('=');
            if (name.startsWith("--") && eq > 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            if (name.equals("--help") || name.equals("-h")) {
                return new McpOptions(true, provider, egress, timeout, maxTimeout, outputLimit);
            }
            if (name.equals("--version")) {
                McpOptions o = new McpOptions(false, provider, egress, timeout, maxTimeout, outputLimit);
                o.version = true;
                return o;
            }
            if (!name.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + args[i] + "'");
            }
            if (!OPTIONS.contains(name)) {
                throw new IllegalArgumentException("unknown option " + name);
            }
            if (!seen.add(name)) {
                throw new IllegalArgumentException("option " + name + " is given twice");
            }
            if (value == null) {
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("option " + name + " needs a value");
                }
                value = args[++i];
            }
            switch (name) {
                case "--provider":
                    provider = value.trim().toLowerCase(Locale.ROOT);
                    if (provider.isEmpty()) {
                        throw new IllegalArgumentException("--provider needs a name");
                    }
                    break;
                case "--egress":
                    egress = egress(value);
                    break;
                case "--timeout":
                    timeout = seconds(name, value);
                    timeoutGiven = true;
                    break;
                case "--max-timeout":
                    maxTimeout = seconds(name, value);
                    break;
                case "--output-limit":
                    outputLimit = positive(name, value);
                    break;
                default:
                    throw new IllegalStateException(name);
            }
        }
        if (timeout.compareTo(maxTimeout) > 0) {
            if (timeoutGiven) {
                throw new IllegalArgumentException("--timeout (" + timeout.toSeconds() + " s) is above --max-timeout ("
                        + maxTimeout.toSeconds() + " s)");
            }
            timeout = maxTimeout;
        }
        return new McpOptions(false, provider, egress, timeout, maxTimeout, outputLimit);
    }

    /** {@code deny-all}, {@code allow-all} or {@code allow=ITEM[,ITEM...]}, each item a CIDR or else a domain. */
    static EgressPolicy egress(String value) {
        String v = value.trim();
        String lower = v.toLowerCase(Locale.ROOT);
        if (lower.equals("deny-all")) {
            return EgressPolicy.denyAll();
        }
        if (lower.equals("allow-all")) {
            return EgressPolicy.allowAll();
        }
        if (!lower.startsWith("allow=")) {
            throw new IllegalArgumentException("--egress must be deny-all, allow-all or allow=ITEM[,ITEM...], was '" + value + "'");
        }
        EgressPolicy.Builder b = EgressPolicy.builder();
        for (String raw : v.substring("allow=".length()).split(",", -1)) {
            String item = raw.trim();
            if (item.isEmpty()) {
                throw new IllegalArgumentException("--egress allow= has an empty item");
            }
            if (ADDRESS_LIKE.matcher(item).matches()) {
                b.allowCidr(item);
            } else {
                b.allowDomain(item);
            }
        }
        try {
            return b.build();
        } catch (InvalidPolicyException e) {
            throw new IllegalArgumentException("--egress: " + e.getMessage());
        }
    }

    private static Duration seconds(String name, String value) {
        return Duration.ofSeconds(positive(name, value));
    }

    private static int positive(String name, String value) {
        int n;
        try {
            n = Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a whole number, was '" + value + "'");
        }
        if (n < 1) {
            throw new IllegalArgumentException(name + " must be positive, was " + n);
        }
        return n;
    }
}
