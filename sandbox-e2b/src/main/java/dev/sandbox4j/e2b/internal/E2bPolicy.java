package dev.sandbox4j.e2b.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Cidr;
import dev.sandbox4j.policy.DomainPattern;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.HeaderRule;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What E2B enforces exactly, and the translation of an {@link EgressPolicy} into E2B's
 * {@code allow_internet_access} / {@code network} fields.
 *
 * <p>E2B's firewall (infra {@code tcpfirewall/handlers.go}) checks allowed domains, then allowed
 * CIDRs, then denied CIDRs, and allows anything unmatched: allow beats deny, so a deny inside an
 * allowed CIDR or alongside allowed domains is refused. Domains match by Host/SNI on TCP 80 and 443
 * only, which is exactly our meaning of a domain. Addresses are IPv4 only. Private ranges are always
 * blocked, and 8.8.8.8 is added to the allowed CIDRs whenever a domain is allowed.
 */
public final class E2bPolicy {
    public static final String RUNNER = "e2b";
    /** The SDK's ALL_TRAFFIC constant; the only CIDR with an unspecified address E2B accepts. */
    static final String ALL_TRAFFIC = "0.0.0.0/0";
    /** infra sandbox-network/firewall.go DeniedSandboxCIDRs. */
    static final List<String> ALWAYS_BLOCKED = List.of("10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8",
            "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16", "::1/128", "fc00::/7", "fe80::/10");
    // infra handlers/sandbox_create.go limits on network.rules
    static final int MAX_RULE_HOSTS = 10;
    static final int MAX_RULE_HOST_LENGTH = 128;
    static final int MAX_HEADERS_PER_HOST = 20;
    static final int MAX_HEADER_NAME_LENGTH = 64;
    static final int MAX_HEADER_VALUE_LENGTH = 2048;
    /** E2B's longest sandbox timeout (Pro tier; Hobby allows 1 hour). */
    static final Duration MAX_LIFETIME = Duration.ofHours(24);

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private E2bPolicy() {
    }

    public static Capabilities capabilities() {
        return Capabilities.builder(RUNNER)
                .egress(Capabilities.Egress.DENY_ALL, Capabilities.Egress.ALLOW_ALL,
                        Capabilities.Egress.DEFAULT_DENY_WITH_RULES, Capabilities.Egress.DEFAULT_ALLOW_WITH_DENIES,
                        Capabilities.Egress.ALLOW_DOMAINS, Capabilities.Egress.ALLOW_WILDCARD_DOMAINS,
                        Capabilities.Egress.ALLOW_CIDRS_IPV4, Capabilities.Egress.DENY_CIDRS_IPV4,
                        Capabilities.Egress.DOMAINS_WITH_CIDRS, Capabilities.Egress.HEADER_RULES,
                        Capabilities.Egress.LIVE_UPDATE)
                .limits(Capabilities.Limit.LIFETIME)
                .features(Capabilities.Feature.OUTPUT_ON_TIMEOUT, Capabilities.Feature.SEPARATE_STDERR, Capabilities.Feature.SESSIONS,
                        Capabilities.Feature.SETUP_COMMANDS, Capabilities.Feature.INPUT_FILES,
                        Capabilities.Feature.ENV, Capabilities.Feature.READ_FILES, Capabilities.Feature.LIST_FILES,
                        Capabilities.Feature.STREAMING, Capabilities.Feature.ATTACH)
                .languages(Language.PYTHON, Language.JAVASCRIPT, Language.BASH)
                .alwaysBlocked(ALWAYS_BLOCKED)
                .implicitAllowance("8.8.8.8/32 on every port and protocol whenever a domain is allowed"
                        + " (E2B adds it so the sandbox can resolve names)")
                .check(E2bPolicy::quirks)
                .build();
    }

    /** The rules E2B's own checks or matching would change, one sentence each. */
    static List<String> quirks(EgressPolicy policy, Limits limits) {
        List<String> v = new ArrayList<>();
        for (Cidr c : policy.allowedCidrs()) {
            unspecified(v, c, "allowed");
        }
        for (Cidr c : policy.deniedCidrs()) {
            unspecified(v, c, "denied");
        }
        if (!policy.headerRules().isEmpty() && policy.defaultAction() == EgressPolicy.Default.ALLOW) {
            v.add("header rules under default-allow egress (E2B applies them only to hosts in its allow list;"
                    + " use default deny and allow the host)");
        }
        Map<String, Set<String>> headersByHost = new LinkedHashMap<>();
        for (HeaderRule r : policy.headerRules()) {
            DomainPattern host = r.host();
            if (host.isWildcard()) {
                v.add("header rule for '" + host + "' (E2B keys header rules by an exact host name, not a wildcard)");
                continue;
            }
            if (host.toString().length() > MAX_RULE_HOST_LENGTH) {
                v.add("header rule for '" + host + "' (E2B takes host names of at most " + MAX_RULE_HOST_LENGTH
                        + " characters in rules)");
            }
            if (r.header().length() > MAX_HEADER_NAME_LENGTH) {
                v.add("header rule " + r + " (E2B takes header names of at most " + MAX_HEADER_NAME_LENGTH
                        + " characters)");
            }
            Set<String> names = headersByHost.computeIfAbsent(host.toString(), k -> new HashSet<>());
            if (!names.add(r.header().toLowerCase(Locale.ROOT))) {
                v.add("two header rules set '" + r.header() + "' for '" + host + "' (one value per header)");
            }
        }
        if (headersByHost.size() > MAX_RULE_HOSTS) {
            v.add("header rules for " + headersByHost.size() + " hosts (E2B takes at most " + MAX_RULE_HOSTS + ")");
        }
        headersByHost.forEach((host, names) -> {
            if (names.size() > MAX_HEADERS_PER_HOST) {
                v.add(names.size() + " header rules for '" + host + "' (E2B takes at most " + MAX_HEADERS_PER_HOST
                        + " per host)");
            }
        });
        limits.lifetime().ifPresent(l -> {
            if (l.compareTo(MAX_LIFETIME) > 0) {
                v.add("a lifetime of " + l + " (E2B's longest is " + MAX_LIFETIME.toHours() + " hours)");
            }
        });
        return v;
    }

    private static void unspecified(List<String> v, Cidr c, String what) {
        if (c.isIpv4() && c.prefixLength() > 0 && c.address().equals("0.0.0.0")) {
            v.add(what + " CIDR " + c + " (E2B rejects the unspecified address 0.0.0.0 except as 0.0.0.0/0)");
        }
    }

    /**
     * The create-body fields for {@code policy}: {@code allow_internet_access} always (false for
     * default deny, so an API that ignored {@code network} would still deny), and {@code network}
     * when there are rules. Header values are resolved here, in the JVM, and returned in
     * {@code secretsOut} so the caller can redact them.
     *
     * @throws UnsupportedPolicyException when a resolved header value cannot go on the wire exactly
     */
    public static ObjectNode createFields(EgressPolicy policy, List<String> secretsOut) {
        ObjectNode out = NODES.objectNode();
        out.put("allow_internet_access", policy.defaultAction() == EgressPolicy.Default.ALLOW);
        ObjectNode network = network(policy, secretsOut);
        if (network != null) {
            out.set("network", network);
        }
        return out;
    }

    /**
     * The body of {@code PUT /sandboxes/{id}/network}, which replaces the whole egress config
     * (omitted fields are cleared), so every field is explicit.
     */
    public static ObjectNode updateBody(EgressPolicy policy, List<String> secretsOut) {
        ObjectNode out = NODES.objectNode();
        ObjectNode network = network(policy, secretsOut);
        if (network != null) {
            out.setAll(network);
        } else if (policy.defaultAction() == EgressPolicy.Default.DENY) {
            out.set("denyOut", NODES.arrayNode().add(ALL_TRAFFIC));
        }
        out.put("allow_internet_access", policy.defaultAction() == EgressPolicy.Default.ALLOW);
        return out;
    }

    /**
     * Null when the egress E2B reports for a sandbox ({@code GET /sandboxes/{id}}) is at least as strict
     * as the update {@code sent}; otherwise why it is weaker. Weaker means: an allowed entry we did not
     * send, a denied entry we sent that is missing, or a default deny that is neither
     * {@code allowInternetAccess: false} nor a {@code 0.0.0.0/0} deny. A report without any egress
     * field cannot be verified and counts as weaker.
     */
    public static String weakerThanSent(ObjectNode sent, JsonNode detail) {
        JsonNode network = detail.path("network");
        JsonNode internet = detail.path("allowInternetAccess");
        if (!network.isObject() && !internet.isBoolean()) {
            return "E2B reported no egress for the sandbox after the update, so the lock-down cannot be verified";
        }
        Set<String> sentAllow = strings(sent.path("allowOut"));
        Set<String> sentDeny = strings(sent.path("denyOut"));
        Set<String> reportedAllow = strings(network.path("allowOut"));
        Set<String> reportedDeny = strings(network.path("denyOut"));
        for (String a : reportedAllow) {
            if (!sentAllow.contains(a)) {
                return "E2B reports allowed egress to " + a + ", which the lock-down did not allow";
            }
        }
        for (String d : sentDeny) {
            if (ALL_TRAFFIC.equals(d)) {
                continue; // checked below: either form of default deny will do
            }
            if (!reportedDeny.contains(d)) {
                return "E2B does not report the denied egress to " + d + " after the lock-down";
            }
        }
        boolean sentDefaultDeny = sentDeny.contains(ALL_TRAFFIC) || !sent.path("allow_internet_access").asBoolean(true);
        boolean reportedDefaultDeny = reportedDeny.contains(ALL_TRAFFIC)
                || (internet.isBoolean() && !internet.booleanValue());
        if (sentDefaultDeny && !reportedDefaultDeny) {
            return "E2B reports the sandbox open to the internet after a default-deny lock-down";
        }
        return null;
    }

    /**
     * For an attach: compares the egress E2B reports for a sandbox ({@code GET /sandboxes/{id}}) with what
     * a create for {@code expected} sends. Default deny is compared in either form
     * ({@code allowInternetAccess: false} or a {@code 0.0.0.0/0} deny); the {@code 8.8.8.8} E2B adds on
     * its own when domains are allowed is not counted as a difference. Header-rule values are not read
     * back (they are secrets); their hosts are compared as part of {@code allowOut}.
     */
    public static void compareReported(EgressPolicy expected, JsonNode detail, dev.sandbox4j.spi.Attachable.Builder<?> b) {
        ObjectNode sent = network(expected, null);
        JsonNode network = detail.path("network");
        JsonNode internet = detail.path("allowInternetAccess");
        Set<String> sentAllow = sent == null ? Set.of() : strings(sent.path("allowOut"));
        Set<String> sentDeny = sent == null ? new HashSet<>() : strings(sent.path("denyOut"));
        Set<String> reportedAllow = strings(network.path("allowOut"));
        Set<String> reportedDeny = strings(network.path("denyOut"));
        boolean sentDefaultDeny = expected.defaultAction() == EgressPolicy.Default.DENY;
        boolean reportedDefaultDeny = reportedDeny.contains(ALL_TRAFFIC) || (internet.isBoolean() && !internet.booleanValue());
        if (!network.isObject() && !internet.isBoolean()) {
            b.compare("egress", "reported", "nothing (E2B reported no egress for the sandbox)");
            return;
        }
        b.compare("default egress", sentDefaultDeny ? "deny" : "allow", reportedDefaultDeny ? "deny" : "allow");
        if (!expected.allowedDomains().isEmpty() && !sentAllow.contains(DNS_ADDED)) {
            reportedAllow.remove(DNS_ADDED);
        }
        sentDeny.remove(ALL_TRAFFIC);
        reportedDeny.remove(ALL_TRAFFIC);
        b.compare("network.allowOut", sentAllow, reportedAllow);
        b.compare("network.denyOut", sentDeny, reportedDeny);
    }

    /** E2B allows it on its own when a domain is allowed, so that DNS works. */
    private static final String DNS_ADDED = "8.8.8.8";

    private static Set<String> strings(JsonNode array) {
        Set<String> out = new HashSet<>();
        if (array.isArray()) {
            array.forEach(n -> out.add(n.asText()));
        }
        return out;
    }

    /** Null for deny-all and allow-all, which {@code allow_internet_access} alone expresses. Without rules when {@code secretsOut} is null. */
    private static ObjectNode network(EgressPolicy policy, List<String> secretsOut) {
        if (policy.isDenyAll() || policy.isAllowAll()) {
            return null;
        }
        ObjectNode network = NODES.objectNode();
        boolean deny = policy.defaultAction() == EgressPolicy.Default.DENY;
        if (deny) {
            ArrayNode allow = network.putArray("allowOut");
            Set<String> listed = new HashSet<>();
            for (Cidr c : policy.allowedCidrs()) {
                allow.add(cidr(c));
            }
            for (DomainPattern d : policy.allowedDomains()) {
                allow.add(d.toString());
                listed.add(d.toString());
            }
            for (HeaderRule r : policy.headerRules()) {
                // E2B applies a rule only to a host in allowOut; listing it again adds nothing the
                // covering domain did not already allow.
                if (listed.add(r.host().toString())) {
                    allow.add(r.host().toString());
                }
            }
        }
        ArrayNode denyOut = network.putArray("denyOut");
        if (deny) {
            denyOut.add(ALL_TRAFFIC);
        }
        for (Cidr c : policy.deniedCidrs()) {
            String s = cidr(c);
            if (!(deny && s.equals(ALL_TRAFFIC))) {
                denyOut.add(s);
            }
        }
        if (!policy.headerRules().isEmpty() && secretsOut != null) { // null: a comparison, no secret resolved
            network.set("rules", rules(policy.headerRules(), secretsOut));
        }
        return network;
    }

    private static ObjectNode rules(List<HeaderRule> headerRules, List<String> secretsOut) {
        Map<String, ObjectNode> headersByHost = new LinkedHashMap<>();
        List<String> problems = new ArrayList<>();
        for (HeaderRule r : headerRules) {
            String secret;
            try {
                secret = r.secret().resolve();
            } catch (RuntimeException e) {
                // the resolver's message could echo part of a secret: name the reference only
                problems.add("header rule " + r + ": the secret could not be resolved");
                continue;
            }
            if (secret == null || secret.isEmpty()) {
                problems.add("header rule " + r + ": the secret is empty");
                continue;
            }
            String value = r.valuePrefix() + secret;
            if (secret.length() >= 4) {
                secretsOut.add(secret);
            }
            if (value.length() > MAX_HEADER_VALUE_LENGTH) {
                problems.add("header rule " + r + ": the value is longer than " + MAX_HEADER_VALUE_LENGTH
                        + " characters (E2B's limit)");
            } else if (!validHeaderValue(value)) {
                problems.add("header rule " + r + ": the value has characters a header cannot carry");
            } else if (value.contains("${e2b.")) {
                problems.add("header rule " + r + ": the value contains '${e2b.', which E2B's proxy would read as"
                        + " a placeholder instead of sending it as is");
            }
            headersByHost.computeIfAbsent(r.host().toString(), k -> NODES.objectNode()).put(r.header(), value);
        }
        if (!problems.isEmpty()) {
            throw new UnsupportedPolicyException(RUNNER, problems);
        }
        ObjectNode rules = NODES.objectNode();
        headersByHost.forEach((host, headers) -> {
            ObjectNode transform = NODES.objectNode();
            transform.putObject("transform").set("headers", headers);
            rules.putArray(host).add(transform);
        });
        return rules;
    }

    /** Visible ASCII, space and tab, as Go's httpguts.ValidHeaderFieldValue allows (plus obs-text). */
    private static boolean validHeaderValue(String v) {
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if ((c < 0x20 && c != '\t') || c == 0x7f || c > 0xff) {
                return false;
            }
        }
        return true;
    }

    /** A single host as the bare address (as the SDK sends it), a network in CIDR notation. */
    static String cidr(Cidr c) {
        return c.isSingleHost() ? c.address() : c.toString();
    }
}
