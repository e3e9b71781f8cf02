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
import java.util.LinkedHashSet;
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
 *       VM. A rule's {@code match} ({@code {"method":[...], "path":{"startsWith":...}}}, all dimensions
 *       must hold, methods any of) limits it; a domain's rules are evaluated in order and the first that
 *       matches is the only one applied, so a rule without {@code match} shadows every later one.</li>
 * </ul>
 *
 * <p>Header rules in these terms ({@link #rulesFor}): sandbox4j applies every rule whose scope holds a
 * request (per header name, the first such rule), Vercel only the first matching rule. So the rules
 * of one host are grouped by scope (rules with the same scope share one transform), and every
 * intersection of two scopes becomes a rule of its own carrying the headers of every scope that
 * contains it; the most specific rules go first (longer path prefix, then a method list before none,
 * then fewer methods) and the unscoped rule, if any, last. The first matching rule is then the
 * intersection of all scopes that hold the request, with exactly their headers: a secret reaches
 * exactly the requests its rule's scope holds. One difference remains, and carries no secret: outside
 * a rule's scope Vercel passes on a header the sandbox sent itself, where sandbox4j's own proxy
 * removes it.
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

    /**
     * sandbox4j's own bound on the rules one host's header rules become (scopes and their
     * intersections), so that overlapping scopes cannot grow the request without limit.
     */
    static final int MAX_RULES_PER_HOST = 32;

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
        List<HeaderRule> earlier = new ArrayList<>();
        for (HeaderRule r : egress.headerRules()) {
            String name = r.header().toLowerCase(Locale.ROOT);
            if (UNSETTABLE_HEADERS.contains(name)) {
                v.add("header rule " + r + " (vercel's proxy cannot set the connection-level header '"
                        + r.header() + "' exactly)");
            }
            for (HeaderRule other : earlier) {
                if (other.host().equals(r.host()) && other.header().equalsIgnoreCase(name)
                        && Scope.of(other).intersect(Scope.of(r)) != null) {
                    v.add("two header rules set '" + r.header() + "' for '" + r.host() + "' on requests both apply to"
                            + " (which value vercel sends would depend on rule order; scope them apart)");
                    break;
                }
            }
            earlier.add(r);
        }
        rulesByHost(egress).forEach((host, rules) -> {
            if (rules.size() > MAX_RULES_PER_HOST) {
                v.add("header rules for '" + host + "' whose scopes and their overlaps need more than " + MAX_RULES_PER_HOST
                        + " vercel rules (sandbox4j sends at most " + MAX_RULES_PER_HOST + " per host)");
            }
        });
        return v;
    }

    /**
     * A header rule's scope: the methods (empty: every method) and the path prefix ({@code "/"}: every
     * path) it applies to.
     */
    record Scope(Set<String> methods, String pathPrefix) {
        static Scope of(HeaderRule r) {
            return new Scope(r.methods(), r.pathPrefix());
        }

        boolean everyMethod() {
            return methods.isEmpty();
        }

        /** Every request this scope holds, {@code other} holds too. */
        boolean within(Scope other) {
            boolean m = other.everyMethod() || (!everyMethod() && other.methods.containsAll(methods));
            return m && pathPrefix.startsWith(other.pathPrefix);
        }

        /** The requests both scopes hold, as a scope; null when none. */
        Scope intersect(Scope other) {
            Set<String> m;
            if (everyMethod()) {
                m = other.methods;
            } else if (other.everyMethod()) {
                m = methods;
            } else {
                m = new LinkedHashSet<>(methods);
                m.retainAll(other.methods);
                if (m.isEmpty()) {
                    return null;
                }
                m = java.util.Collections.unmodifiableSet(m);
            }
            String p;
            if (pathPrefix.startsWith(other.pathPrefix)) {
                p = pathPrefix;
            } else if (other.pathPrefix.startsWith(pathPrefix)) {
                p = other.pathPrefix;
            } else {
                return null;
            }
            return new Scope(m, p);
        }

        /** Vercel's {@code match} for this scope, or null for every request. */
        ObjectNode match() {
            if (everyMethod() && pathPrefix.equals("/")) {
                return null;
            }
            ObjectNode match = NODES.objectNode();
            if (!everyMethod()) {
                ArrayNode a = match.putArray("method");
                methods.forEach(a::add);
            }
            if (!pathPrefix.equals("/")) {
                match.putObject("path").put("startsWith", pathPrefix);
            }
            return match;
        }
    }

    /** One Vercel rule: a scope and the header rules whose headers its transform sets (one per header name). */
    record VercelRule(Scope scope, List<HeaderRule> headers) {
    }

    /**
     * The Vercel rules of each host with header rules, in the order Vercel must evaluate them (see the
     * class comment): each scope, and each intersection of scopes, once, most specific first, carrying,
     * per header name, the first header rule whose scope contains it.
     */
    static Map<String, List<VercelRule>> rulesByHost(EgressPolicy egress) {
        Map<String, List<HeaderRule>> byHost = new LinkedHashMap<>();
        for (HeaderRule r : egress.headerRules()) {
            byHost.computeIfAbsent(r.host().toString(), h -> new ArrayList<>()).add(r);
        }
        Map<String, List<VercelRule>> out = new LinkedHashMap<>();
        byHost.forEach((host, rules) -> out.put(host, rulesFor(rules)));
        return out;
    }

    /** {@link #rulesByHost} for the header rules of one host, in policy order. */
    static List<VercelRule> rulesFor(List<HeaderRule> rules) {
        List<Scope> scopes = new ArrayList<>();
        for (HeaderRule r : rules) {
            if (!scopes.contains(Scope.of(r))) {
                scopes.add(Scope.of(r));
            }
        }
        // the intersections, until no new one appears (bounded: a prefix is one of the rules', a method
        // set an intersection of theirs); stop early past the bound, which violations() then refuses
        for (int i = 0; i < scopes.size() && scopes.size() <= MAX_RULES_PER_HOST; i++) {
            for (int j = 0; j < i && scopes.size() <= MAX_RULES_PER_HOST; j++) {
                Scope both = scopes.get(i).intersect(scopes.get(j));
                if (both != null && !scopes.contains(both)) {
                    scopes.add(both);
                }
            }
        }
        List<Scope> ordered = new ArrayList<>(scopes);
        // a stable sort in which a scope comes before every scope that strictly contains it
        ordered.sort(java.util.Comparator.comparingInt((Scope s) -> -s.pathPrefix().length())
                .thenComparing(Scope::everyMethod)
                .thenComparingInt(s -> s.methods().size()));
        List<VercelRule> out = new ArrayList<>();
        for (Scope s : ordered) {
            Map<String, HeaderRule> headers = new LinkedHashMap<>();
            for (HeaderRule r : rules) {
                if (s.within(Scope.of(r))) {
                    headers.putIfAbsent(r.header().toLowerCase(Locale.ROOT), r);
                }
            }
            out.add(new VercelRule(s, List.copyOf(headers.values())));
        }
        return out;
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
        ObjectNode allow = NODES.objectNode();
        if (defaultAllow) {
            allow.putArray("*");
        }
        for (DomainPattern d : egress.allowedDomains()) {
            allow.putArray(d.toString());
        }
        // each secret resolved once, however many rules carry it
        Map<HeaderRule, String> values = new HashMap<>();
        rulesByHost(egress).forEach((host, rules) -> {
            ArrayNode list = allow.putArray(host);
            for (VercelRule rule : rules) {
                ObjectNode out = list.addObject();
                ObjectNode match = rule.scope().match();
                if (match != null) {
                    out.set("match", match);
                }
                ObjectNode headers = NODES.objectNode();
                for (HeaderRule r : rule.headers()) {
                    headers.put(r.header(), values.computeIfAbsent(r, k -> k.valuePrefix() + secrets.apply(k.secret())));
                }
                out.putArray("transform").addObject().set("headers", headers);
            }
        });
        return allow;
    }
}
