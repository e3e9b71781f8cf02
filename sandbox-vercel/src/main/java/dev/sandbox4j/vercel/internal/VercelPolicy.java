package dev.sandbox4j.vercel.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Capabilities.Egress;
import dev.sandbox4j.policy.Capabilities.Feature;
import dev.sandbox4j.policy.Capabilities.Limit;
import dev.sandbox4j.policy.Cidr;
import dev.sandbox4j.policy.DomainPattern;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.HeaderRule;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.SecretRef;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Vercel's firewall in sandbox4j's terms: what it enforces exactly ({@link #capabilities()}) and the
 * JSON it takes ({@link #toJson}).
 *
 * <p>Facts this rests on (Vercel docs "Sandbox firewall", the SDK's {@code network-policy.ts}, the
 * sandbox CLI help, all read 2026-11):
 * <ul>
 *   <li>{@code {"mode":"deny-all"}} blocks everything, DNS included; {@code {"mode":"allow-all"}} blocks nothing.</li>
 *   <li>Any other object denies by default. {@code allow} lists domains (list form) or maps each domain
 *       to rules (record form); a leading {@code *} label matches any subdomain, at any depth, and not the
 *       domain itself, as sandbox4j's {@code *.x}; the key {@code "*"} allows everything else, non-TLS
 *       traffic included.</li>
 *   <li>Domains are matched on the TLS SNI, on any port; plain-text HTTP cannot be allowed by domain.</li>
 *   <li>{@code subnets.allow} opens ranges (IPv4 and IPv6) to any traffic, bypassing domain rules;
 *       {@code subnets.deny} takes precedence over every allow, domains included.</li>
 *   <li>A rule {@code {"transform":[{"headers":{...}}]}} sets headers at Vercel's proxy, outside the
 *       VM; the first rule without {@code match} applies to every request to that domain.</li>
 * </ul>
 */
public final class VercelPolicy {
    /** Vercel takes at most 5 tags. */
    public static final int MAX_TAGS = 5;
    /** The largest vCPU count of any plan (Enterprise); Hobby and Pro stop at 4 and 8, checked by the server. */
    public static final int MAX_VCPUS = 32;
    /** The longest session of any plan (Pro, Enterprise); Hobby stops at 45 minutes, checked by the server. */
    public static final Duration MAX_LIFETIME = Duration.ofHours(24);

    // Connection-level headers a forward proxy cannot set on one request exactly as written.
    private static final Set<String> UNSETTABLE_HEADERS = Set.of("host", "content-length", "transfer-encoding",
            "connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade");

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private VercelPolicy() {
    }

    /** What the Vercel runner enforces exactly, with its extra checks. */
    public static Capabilities capabilities() {
        return Capabilities.builder("vercel")
                .egress(Egress.values())
                .limits(Limit.LIFETIME, Limit.VCPUS)
                .features(Feature.OUTPUT_ON_TIMEOUT, Feature.SEPARATE_STDERR, Feature.SESSIONS, Feature.SETUP_COMMANDS, Feature.INPUT_FILES,
                        Feature.ENV, Feature.READ_FILES, Feature.LIST_FILES, Feature.STREAMING, Feature.ATTACH)
                .languages(Language.PYTHON, Language.JAVASCRIPT, Language.BASH)
                .implicitAllowance("an allowed domain is matched on the TLS SNI on any port, not only 443 "
                        + "(plain-text HTTP to it stays blocked)")
                .check(VercelPolicy::violations)
                .build();
    }

    /** The rules Vercel cannot enforce exactly that the generic capability check does not catch. */
    static List<String> violations(EgressPolicy egress, Limits limits) {
        List<String> v = new ArrayList<>();
        limits.vcpus().ifPresent(n -> {
            if (n != 1 && n % 2 != 0) {
                v.add(n + " vCPUs (vercel takes 1 or an even number)");
            }
            if (n > MAX_VCPUS) {
                v.add(n + " vCPUs (vercel takes at most " + MAX_VCPUS + ")");
            }
        });
        limits.lifetime().ifPresent(d -> {
            if (d.compareTo(MAX_LIFETIME) > 0) {
                v.add("a lifetime of " + d + " (vercel sessions last at most 24 hours)");
            }
        });
        Map<String, HeaderRule> seen = new HashMap<>();
        for (HeaderRule r : egress.headerRules()) {
            String name = r.header().toLowerCase(Locale.ROOT);
            if (UNSETTABLE_HEADERS.contains(name)) {
                v.add("header rule " + r + " (vercel's proxy cannot set the connection-level header '"
                        + r.header() + "' exactly)");
            }
            HeaderRule other = seen.putIfAbsent(r.host() + " " + name, r);
            if (other != null) {
                v.add("header rules " + other + " and " + r + " (two values for one header on one host: "
                        + "vercel applies one rule per request)");
            }
        }
        return v;
    }

    /**
     * The policy in Vercel's request form. Header rule secrets are resolved through {@code secrets},
     * which must check and register each value for redaction.
     */
    public static ObjectNode toJson(EgressPolicy egress, Function<SecretRef, String> secrets) {
        if (egress.isDenyAll()) {
            return NODES.objectNode().put("mode", "deny-all");
        }
        if (egress.isAllowAll()) {
            return NODES.objectNode().put("mode", "allow-all");
        }
        ObjectNode policy = NODES.objectNode();
        boolean defaultAllow = egress.defaultAction() == EgressPolicy.Default.ALLOW;
        if (defaultAllow || !egress.headerRules().isEmpty()) {
            policy.set("allow", recordForm(egress, defaultAllow, secrets));
        } else if (!egress.allowedDomains().isEmpty()) {
            ArrayNode list = policy.putArray("allow");
            egress.allowedDomains().forEach(d -> list.add(d.toString()));
        }
        if (!egress.allowedCidrs().isEmpty() || !egress.deniedCidrs().isEmpty()) {
            ObjectNode subnets = policy.putObject("subnets");
            if (!egress.allowedCidrs().isEmpty()) {
                ArrayNode a = subnets.putArray("allow");
                egress.allowedCidrs().forEach(c -> a.add(cidr(c)));
            }
            if (!egress.deniedCidrs().isEmpty()) {
                ArrayNode d = subnets.putArray("deny");
                egress.deniedCidrs().forEach(c -> d.add(cidr(c)));
            }
        }
        return policy;
    }

    /**
     * Null when the policy Vercel reports for a session ({@code session.networkPolicy}) may be the one
     * requested; otherwise why it is weaker. Only unambiguous cases are judged: {@code allow-all}
     * reported for anything but an allow-all request (the API dropped or misread the policy, denied
     * CIDRs and header rules included), and the catch-all domain {@code *} reported for a default-deny
     * request. Other shapes differ between request and response, so they are not compared.
     */
    public static String weakerThanRequested(EgressPolicy requested, JsonNode reported) {
        if (requested.isAllowAll() || reported == null || !reported.isObject()) {
            return null;
        }
        if ("allow-all".equals(reported.path("mode").asText())) {
            return "vercel reports egress allow-all for a session created with " + requested;
        }
        if (requested.defaultAction() == EgressPolicy.Default.DENY
                && (listsCatchAll(reported.path("allowedDomains")) || listsCatchAll(reported.path("allow")))) {
            return "vercel reports the catch-all domain '*' allowed for a session created with " + requested;
        }
        return null;
    }

    /** A domain list (array) or record (object keys) naming {@code *}, which allows all traffic. */
    private static boolean listsCatchAll(JsonNode domains) {
        if (domains.isObject()) {
            return domains.has("*");
        }
        for (JsonNode d : domains) {
            if ("*".equals(d.asText())) {
                return true;
            }
        }
        return false;
    }

    /** CIDR notation, IPv6 in RFC 5952 form ({@code 2001:db8::/32}), as Vercel's docs write it. */
    static String cidr(Cidr c) {
        return c.toString();
    }

    private static ObjectNode recordForm(EgressPolicy egress, boolean defaultAllow, Function<SecretRef, String> secrets) {
        // One rule per host carrying all of its headers: a second rule without match would never apply.
        Map<String, ObjectNode> headersByHost = new LinkedHashMap<>();
        for (HeaderRule r : egress.headerRules()) {
            headersByHost.computeIfAbsent(r.host().toString(), h -> NODES.objectNode())
                    .put(r.header(), r.valuePrefix() + secrets.apply(r.secret()));
        }
        ObjectNode allow = NODES.objectNode();
        if (defaultAllow) {
            allow.putArray("*");
        }
        for (DomainPattern d : egress.allowedDomains()) {
            allow.putArray(d.toString());
        }
        headersByHost.forEach((host, headers) -> {
            ArrayNode rules = allow.putArray(host);
            ObjectNode transform = NODES.objectNode();
            transform.set("headers", headers);
            rules.addObject().putArray("transform").add(transform);
        });
        return allow;
    }
}
