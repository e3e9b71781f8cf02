package dev.sandbox4j.emulators.vercel.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.policy.Cidr;
import dev.sandbox4j.policy.InvalidPolicyException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A Vercel network policy as received on the wire (create, PATCH, session update), validated, with
 * the two things the emulator needs from it: whether the local sandbox gets the host network, and the
 * response form the API echoes back ({@code mode: custom}, header names only, never values).
 *
 * <p>Accepted request forms (vercel.md section 5.1): {@code {"mode":"allow-all"}},
 * {@code {"mode":"deny-all"}}, the list form {@code {"allow":[domains], "subnets":{allow,deny}}}, the
 * record form {@code {"allow":{domain:[rules]}}} (key {@code "*"} = all other traffic), and the legacy
 * {@code {"mode":"custom", allowedDomains, allowedCIDRs, deniedCIDRs, injectionRules}}. Unknown keys
 * are refused so that a misspelt rule cannot silently widen egress.
 *
 * <p>A rule's {@code match} ({@code {path?: M, method?: [str], queryString?: [KV], headers?: [KV]}},
 * {@code M} one of {@code exact}, {@code startsWith}, {@code regex}; vercel.md 5.1) is validated; a
 * domain's rules apply as Vercel's do: in order, the first that matches is the only one applied. The
 * transforms of a policy are honoured through the local runner's egress proxy ({@link #localPolicy()})
 * when its header rules give every request exactly the headers Vercel's first match would; otherwise
 * the sandbox gets no network at all (stricter than Vercel, never weaker).
 */
public final class WirePolicy {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final Pattern LABEL = Pattern.compile("[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?");
    private static final List<Cidr> LOOPBACK = List.of(Cidr.parse("127.0.0.1"), Cidr.parse("::1"));
    private static final Set<String> LOOPBACK_NAMES = Set.of("localhost", "127.0.0.1", "::1", "[::1]");

    /** A policy the API would refuse; answered with 400 bad_request. */
    public static final class BadPolicyException extends Exception {
        BadPolicyException(String message) {
            super(message);
        }
    }

    private enum Mode { ALLOW_ALL, DENY_ALL, CUSTOM }

    private final Mode mode;
    private final List<String> domains;
    private final boolean allowOthers;
    private final List<Cidr> allowedCidrs;
    private final List<Cidr> deniedCidrs;
    /**
     * One rule of a domain, in the order received. Header values are kept (the emulator's egress proxy
     * sets them, as Vercel's firewall does) but never echoed, logged or printed.
     */
    private static final class Rule {
        final String domain;
        /** The {@code match} as received (validated), or null: every request. */
        final ObjectNode match;
        /** Header name to value for a transform; null for a {@code forwardURL} or {@code response} rule. */
        final Map<String, String> headers;

        Rule(String domain, ObjectNode match, Map<String, String> headers) {
            this.domain = domain;
            this.match = match;
            this.headers = headers;
        }
    }

    private static final java.util.concurrent.atomic.AtomicLong POLICIES = new java.util.concurrent.atomic.AtomicLong();

    private final List<Rule> rules;
    private final Map<String, String> forwards;
    /** The local sandbox's egress, made once so that its secret names (unique per policy) stay stable. */
    private final dev.sandbox4j.policy.EgressPolicy local;

    private WirePolicy(Mode mode, List<String> domains, boolean allowOthers, List<Cidr> allowedCidrs,
            List<Cidr> deniedCidrs, List<Rule> rules, Map<String, String> forwards) {
        this.mode = mode;
        this.domains = List.copyOf(domains);
        this.allowOthers = allowOthers;
        this.allowedCidrs = List.copyOf(allowedCidrs);
        this.deniedCidrs = List.copyOf(deniedCidrs);
        this.rules = List.copyOf(rules);
        this.forwards = forwards;
        this.local = makeLocalPolicy();
    }

    /** The default when create carries no policy: allow-all (vercel.md 5.1, the SDK's JSDoc). */
    public static WirePolicy allowAll() {
        return new WirePolicy(Mode.ALLOW_ALL, List.of(), true, List.of(), List.of(), List.of(), Map.of());
    }

    public static WirePolicy denyAll() {
        return new WirePolicy(Mode.DENY_ALL, List.of(), false, List.of(), List.of(), List.of(), Map.of());
    }

    public static WirePolicy parse(JsonNode node) throws BadPolicyException {
        if (node == null || !node.isObject()) {
            throw new BadPolicyException("networkPolicy must be an object");
        }
        JsonNode modeNode = node.get("mode");
        if (modeNode != null) {
            if (!modeNode.isTextual()) {
                throw new BadPolicyException("networkPolicy.mode must be a string");
            }
            switch (modeNode.asText()) {
                case "allow-all":
                    onlyKeys(node, "networkPolicy", "mode");
                    return allowAll();
                case "deny-all":
                    onlyKeys(node, "networkPolicy", "mode");
                    return denyAll();
                case "custom":
                    return parseLegacy(node);
                default:
                    throw new BadPolicyException("networkPolicy.mode '" + modeNode.asText()
                            + "' is not supported (allow-all, deny-all or custom)");
            }
        }
        onlyKeys(node, "networkPolicy", "allow", "subnets");
        List<String> domains = new ArrayList<>();
        boolean others = false;
        List<Rule> headers = new ArrayList<>();
        Map<String, String> forwards = new LinkedHashMap<>();
        JsonNode allow = node.get("allow");
        if (allow != null) {
            if (allow.isArray()) {
                for (JsonNode d : allow) {
                    domains.add(domain(d, "networkPolicy.allow[]", false));
                }
            } else if (allow.isObject()) {
                Iterator<Map.Entry<String, JsonNode>> it = allow.properties().iterator();
                while (it.hasNext()) {
                    Map.Entry<String, JsonNode> e = it.next();
                    String key = e.getKey();
                    String domain = key;
                    if (key.equals("*")) {
                        others = true;
                    } else {
                        domain = domain(NODES.textNode(key), "networkPolicy.allow key", false);
                        domains.add(domain);
                    }
                    rules(domain, e.getValue(), headers, forwards);
                }
            } else {
                throw new BadPolicyException("networkPolicy.allow must be a list of domains or a record of rules");
            }
        }
        List<Cidr> allowed = new ArrayList<>();
        List<Cidr> denied = new ArrayList<>();
        JsonNode subnets = node.get("subnets");
        if (subnets != null) {
            if (!subnets.isObject()) {
                throw new BadPolicyException("networkPolicy.subnets must be an object");
            }
            onlyKeys(subnets, "networkPolicy.subnets", "allow", "deny");
            allowed.addAll(cidrs(subnets.get("allow"), "networkPolicy.subnets.allow"));
            denied.addAll(cidrs(subnets.get("deny"), "networkPolicy.subnets.deny"));
        }
        return new WirePolicy(Mode.CUSTOM, domains, others, allowed, denied, headers, forwards);
    }

    private static WirePolicy parseLegacy(JsonNode node) throws BadPolicyException {
        onlyKeys(node, "networkPolicy", "mode", "allowedDomains", "allowedCIDRs", "deniedCIDRs", "injectionRules",
                "forwardRules");
        List<String> domains = new ArrayList<>();
        boolean others = false;
        JsonNode list = node.get("allowedDomains");
        if (list != null) {
            if (!list.isArray()) {
                throw new BadPolicyException("networkPolicy.allowedDomains must be a list");
            }
            for (JsonNode d : list) {
                String domain = domain(d, "networkPolicy.allowedDomains[]", true);
                if (domain.equals("*")) {
                    others = true;
                } else {
                    domains.add(domain);
                }
            }
        }
        List<Rule> headers = new ArrayList<>();
        JsonNode rules = node.get("injectionRules");
        if (rules != null) {
            if (!rules.isArray()) {
                throw new BadPolicyException("networkPolicy.injectionRules must be a list");
            }
            for (JsonNode r : rules) {
                if (!r.isObject() || !r.path("domain").isTextual()) {
                    throw new BadPolicyException("networkPolicy.injectionRules[] needs a domain");
                }
                onlyKeys(r, "networkPolicy.injectionRules[]", "domain", "headers", "headerNames", "match");
                Map<String, String> values = new LinkedHashMap<>();
                JsonNode h = r.get("headers");
                if (h != null) {
                    values = headerValues(h, "networkPolicy.injectionRules[].headers");
                }
                headers.add(new Rule(r.get("domain").asText().trim().toLowerCase(Locale.ROOT),
                        match(r.get("match"), "networkPolicy.injectionRules[].match"), values));
            }
        }
        Map<String, String> forwards = new LinkedHashMap<>();
        JsonNode fw = node.get("forwardRules");
        if (fw != null) {
            if (!fw.isArray()) {
                throw new BadPolicyException("networkPolicy.forwardRules must be a list");
            }
            for (JsonNode r : fw) {
                if (!r.path("domain").isTextual() || !r.path("forwardURL").isTextual()) {
                    throw new BadPolicyException("networkPolicy.forwardRules[] needs domain and forwardURL");
                }
                forwards.put(r.get("domain").asText(), r.get("forwardURL").asText());
            }
        }
        return new WirePolicy(Mode.CUSTOM, domains, others, cidrs(node.get("allowedCIDRs"), "networkPolicy.allowedCIDRs"),
                cidrs(node.get("deniedCIDRs"), "networkPolicy.deniedCIDRs"), headers, forwards);
    }

    /** Each rule is {match?, transform | forwardURL | response}: exactly one action (vercel.md 5.1). */
    private static void rules(String domain, JsonNode list, List<Rule> headers,
            Map<String, String> forwards) throws BadPolicyException {
        String where = "networkPolicy.allow['" + domain + "']";
        if (!list.isArray()) {
            throw new BadPolicyException(where + " must be a list of rules");
        }
        for (JsonNode rule : list) {
            if (!rule.isObject()) {
                throw new BadPolicyException(where + "[] must be an object");
            }
            onlyKeys(rule, where + "[]", "match", "transform", "forwardURL", "response");
            int actions = (rule.has("transform") ? 1 : 0) + (rule.has("forwardURL") ? 1 : 0)
                    + (rule.has("response") ? 1 : 0);
            if (actions != 1) {
                throw new BadPolicyException(where + "[] needs exactly one of transform, forwardURL or response");
            }
            ObjectNode match = match(rule.get("match"), where + "[].match");
            JsonNode transform = rule.get("transform");
            if (transform != null) {
                if (!transform.isArray()) {
                    throw new BadPolicyException(where + "[].transform must be a list");
                }
                Map<String, String> values = new LinkedHashMap<>();
                for (JsonNode t : transform) {
                    JsonNode h = t.get("headers");
                    if (h == null || !h.isObject()) {
                        throw new BadPolicyException(where + "[].transform[].headers must be an object");
                    }
                    values.putAll(headerValues(h, where + "[].transform[].headers"));
                }
                headers.add(new Rule(domain, match, values));
            } else {
                headers.add(new Rule(domain, match, null)); // a forward or canned response: no header of ours
            }
            JsonNode forward = rule.get("forwardURL");
            if (forward != null) {
                if (!forward.isTextual() || !forward.asText().startsWith("https://")) {
                    throw new BadPolicyException(where + "[].forwardURL must be an https URL");
                }
                forwards.put(domain, forward.asText());
            }
            JsonNode response = rule.get("response");
            if (response != null && (!response.isObject() || !response.path("statusCode").canConvertToInt())) {
                throw new BadPolicyException(where + "[].response needs a statusCode");
            }
        }
    }

    private static Map<String, String> headerValues(JsonNode h, String where) throws BadPolicyException {
        if (!h.isObject()) {
            throw new BadPolicyException(where + " must be an object");
        }
        Map<String, String> values = new LinkedHashMap<>();
        Iterator<Map.Entry<String, JsonNode>> it = h.properties().iterator();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isTextual()) {
                throw new BadPolicyException(where + " values must be strings");
            }
            values.put(e.getKey(), e.getValue().asText());
        }
        return values;
    }

    /**
     * A rule's {@code match} validated: {@code {path?: M, method?: [str], queryString?: [KV], headers?: [KV]}},
     * {@code M} exactly one of {@code exact}, {@code startsWith}, {@code regex} (a string), {@code KV}
     * {@code {key?: M, value?: M}} (vercel.md 5.1, the SDK's {@code network-policy.ts}). Null when absent.
     */
    private static ObjectNode match(JsonNode match, String where) throws BadPolicyException {
        if (match == null) {
            return null;
        }
        if (!match.isObject()) {
            throw new BadPolicyException(where + " must be an object");
        }
        onlyKeys(match, where, "path", "method", "queryString", "headers");
        if (match.has("path")) {
            matcher(match.get("path"), where + ".path");
        }
        JsonNode method = match.get("method");
        if (method != null) {
            if (!method.isArray()) {
                throw new BadPolicyException(where + ".method must be a list of strings");
            }
            for (JsonNode m : method) {
                if (!m.isTextual() || m.asText().isEmpty()) {
                    throw new BadPolicyException(where + ".method must be a list of strings");
                }
            }
        }
        for (String kvs : new String[] {"queryString", "headers"}) {
            JsonNode list = match.get(kvs);
            if (list == null) {
                continue;
            }
            if (!list.isArray()) {
                throw new BadPolicyException(where + "." + kvs + " must be a list");
            }
            for (JsonNode kv : list) {
                if (!kv.isObject()) {
                    throw new BadPolicyException(where + "." + kvs + "[] must be an object");
                }
                onlyKeys(kv, where + "." + kvs + "[]", "key", "value");
                if (kv.has("key")) {
                    matcher(kv.get("key"), where + "." + kvs + "[].key");
                }
                if (kv.has("value")) {
                    matcher(kv.get("value"), where + "." + kvs + "[].value");
                }
            }
        }
        return (ObjectNode) match.deepCopy();
    }

    private static void matcher(JsonNode m, String where) throws BadPolicyException {
        if (m == null || !m.isObject() || m.size() != 1) {
            throw new BadPolicyException(where + " must be one of {exact}, {startsWith} or {regex}");
        }
        onlyKeys(m, where, "exact", "startsWith", "regex");
        if (!m.elements().next().isTextual()) {
            throw new BadPolicyException(where + " must hold a string");
        }
    }

    private static String domain(JsonNode node, String where, boolean starAllowed) throws BadPolicyException {
        if (node == null || !node.isTextual()) {
            throw new BadPolicyException(where + " must be a string");
        }
        String raw = node.asText().trim().toLowerCase(Locale.ROOT);
        if (raw.equals("*") && starAllowed) {
            return raw;
        }
        if (LOOPBACK_NAMES.contains(raw)) {
            return raw;
        }
        String host = raw.startsWith("*.") ? raw.substring(2) : raw;
        if (host.isEmpty() || host.length() > 253) {
            throw new BadPolicyException(where + ": '" + node.asText() + "' is not a domain");
        }
        for (String label : host.split("\\.", -1)) {
            if (!LABEL.matcher(label).matches()) {
                throw new BadPolicyException(where + ": '" + node.asText() + "' is not a domain (wildcards only as '*.')");
            }
        }
        return raw;
    }

    private static List<Cidr> cidrs(JsonNode list, String where) throws BadPolicyException {
        List<Cidr> out = new ArrayList<>();
        if (list == null) {
            return out;
        }
        if (!list.isArray()) {
            throw new BadPolicyException(where + " must be a list of CIDRs");
        }
        for (JsonNode c : list) {
            if (!c.isTextual()) {
                throw new BadPolicyException(where + "[] must be a string");
            }
            try {
                out.add(Cidr.parse(c.asText()));
            } catch (InvalidPolicyException e) {
                throw new BadPolicyException(where + ": " + e.getMessage());
            }
        }
        return out;
    }

    private static void onlyKeys(JsonNode node, String where, String... keys) throws BadPolicyException {
        Set<String> allowed = Set.of(keys);
        Iterator<String> it = node.fieldNames();
        while (it.hasNext()) {
            String k = it.next();
            if (!allowed.contains(k)) {
                throw new BadPolicyException(where + ": unknown key '" + k + "'");
            }
        }
    }

    /** Whether any domain (or {@code *}) carries a rule: transform, forwardURL, response, or a legacy injection or forward rule. */
    private boolean anyRule() {
        return !rules.isEmpty() || !forwards.isEmpty();
    }

    /**
     * Whether the local sandbox gets the host network: for allow-all, for {@code "*"} with no denied
     * subnet, and when the policy lets traffic to loopback (where the egress canary listens) through: a
     * loopback name or a subnet holding a loopback address, which on the host can only mean the host's
     * network (wider than Vercel for whatever else that policy lists; a test rig's convenience, kept).
     * Never with a denied subnet (the host network has no hole to leave out) nor with a rule (see
     * {@link #localPolicy()}). An adapter that drops or weakens the policy it was given then fails the
     * canary.
     */
    public boolean grantsHostNetwork() {
        if (mode == Mode.ALLOW_ALL) {
            return true;
        }
        if (mode == Mode.DENY_ALL || anyRule() || !deniedCidrs.isEmpty()) {
            return false;
        }
        if (allowOthers) {
            return true;
        }
        if (domains.stream().anyMatch(LOOPBACK_NAMES::contains)) {
            return true;
        }
        for (Cidr lo : LOOPBACK) {
            if (allowedCidrs.stream().anyMatch(a -> a.contains(lo))) {
                return true;
            }
        }
        return false;
    }

    /** What the API echoes in {@code session.networkPolicy} (vercel.md 5.2): header names, never values. */
    public ObjectNode responseForm() {
        ObjectNode out = NODES.objectNode();
        if (mode == Mode.ALLOW_ALL) {
            return out.put("mode", "allow-all");
        }
        if (mode == Mode.DENY_ALL) {
            return out.put("mode", "deny-all");
        }
        out.put("mode", "custom");
        ArrayNode d = out.putArray("allowedDomains");
        domains.forEach(d::add);
        if (allowOthers) {
            d.add("*");
        }
        if (!allowedCidrs.isEmpty()) {
            ArrayNode a = out.putArray("allowedCIDRs");
            allowedCidrs.forEach(c -> a.add(c.toString()));
        }
        if (!deniedCidrs.isEmpty()) {
            ArrayNode a = out.putArray("deniedCIDRs");
            deniedCidrs.forEach(c -> a.add(c.toString()));
        }
        if (rules.stream().anyMatch(r -> r.headers != null)) {
            ArrayNode list = out.putArray("injectionRules");
            for (Rule rule : rules) {
                if (rule.headers == null) {
                    continue;
                }
                ObjectNode r = list.addObject().put("domain", rule.domain);
                ArrayNode n = r.putArray("headerNames");
                rule.headers.keySet().forEach(n::add);
                if (rule.match != null) {
                    r.set("match", rule.match.deepCopy());
                }
            }
        }
        if (!forwards.isEmpty()) {
            ArrayNode rules = out.putArray("forwardRules");
            forwards.forEach((domain, url) -> rules.addObject().put("domain", domain).put("forwardURL", url));
        }
        return out;
    }

    /**
     * The egress of the local sandbox, made once per policy (its secret names stay stable) by the emulator (the local runner enforces a
     * list through its egress proxy; what it cannot enforce, {@code LocalMachine} turns into no network):
     * <ul>
     *   <li>allow-all when {@link #grantsHostNetwork()} (allow-all, {@code "*"} without denied subnets or
     *       rules, or a loopback entry: the canary's target);</li>
     *   <li>deny-all for deny-all, and for a policy that allows nothing;</li>
     *   <li>the list form, the record form without rules and the legacy form: default deny, each domain
     *       allowed ({@code *.x} as sandbox4j's {@code *.x}: subdomains at any depth, not x itself, which is
     *       how Vercel matches it), {@code subnets.allow} as allowed CIDRs (one wholly inside a denied
     *       subnet is dropped: deny wins there anyway), {@code subnets.deny} as denied CIDRs, which win over
     *       domains and allowed CIDRs, as Vercel's do;</li>
     *   <li>{@code "*"} with denied subnets: default allow with denied CIDRs, which the local runner does
     *       not enforce (so no network, stricter than Vercel);</li>
     *   <li>with transforms carrying header values (the real firewall would set headers): a default-deny
     *       policy of the domains, CIDRs and one {@link dev.sandbox4j.policy.HeaderRule} per rule and header
     *       (its scope made of the rule's {@code match}), for the local runner's egress proxy; but deny-all
     *       when that cannot give every request exactly the headers Vercel's first matching rule would (a
     *       {@code match} on query, headers, an exact or regex path, lower-case methods; a forward or canned
     *       response in the same policy; the catch-all {@code *}; a brokered domain covering another; an
     *       empty header value; rules whose order the proxy's per-header first rule would not follow);</li>
     *   <li>deny-all, stricter than Vercel, for any other rule ({@code forwardURL}, {@code response},
     *       legacy injection or forward rules without values): the local runner would reach the domain
     *       instead of the forward proxy or the canned answer, so the rule would be widened, not emulated;
     *       and for a domain sandbox4j's model refuses (a single label, a TLD under {@code *.}).</li>
     * </ul>
     * What stays different from Vercel: the proxy matches an allowed domain by TLS SNI or plain HTTP
     * {@code Host} on its domain ports (80, 443 and any a test adds), where Vercel matches the SNI on any
     * port and refuses plain-text HTTP by domain; and a command that is running keeps the egress it started
     * with when the policy changes (the local runner switches the next command).
     */
    public dev.sandbox4j.policy.EgressPolicy localPolicy() {
        return local;
    }

    private dev.sandbox4j.policy.EgressPolicy makeLocalPolicy() {
        if (rules.stream().noneMatch(r -> r.headers != null && !r.headers.isEmpty())) {
            return listPolicy();
        }
        if (mode != Mode.CUSTOM || allowOthers) {
            return dev.sandbox4j.policy.EgressPolicy.denyAll();
        }
        long policy = POLICIES.incrementAndGet();
        try {
            dev.sandbox4j.policy.EgressPolicy.Builder b = dev.sandbox4j.policy.EgressPolicy.builder();
            domains.forEach(b::allowDomain);
            allowedCidrs.forEach(c -> b.allowCidr(c.toString()));
            deniedCidrs.forEach(c -> b.denyCidr(c.toString()));
            Map<String, List<Rule>> byDomain = new LinkedHashMap<>();
            for (Rule r : rules) {
                byDomain.computeIfAbsent(r.domain, d -> new ArrayList<>()).add(r);
            }
            List<dev.sandbox4j.policy.DomainPattern> brokered = new ArrayList<>();
            for (String d : byDomain.keySet()) {
                dev.sandbox4j.policy.DomainPattern p = dev.sandbox4j.policy.DomainPattern.parse(d);
                for (dev.sandbox4j.policy.DomainPattern q : brokered) {
                    if (p.covers(q) || q.covers(p)) {
                        // the proxy applies the rules of both; which key Vercel picks is not documented
                        return dev.sandbox4j.policy.EgressPolicy.denyAll();
                    }
                }
                brokered.add(p);
            }
            int n = 0;
            for (Map.Entry<String, List<Rule>> e : byDomain.entrySet()) {
                List<dev.sandbox4j.policy.HeaderRule> headerRules = new ArrayList<>();
                List<Scope> scopes = new ArrayList<>();
                for (Rule r : e.getValue()) {
                    Scope scope = Scope.of(r.match);
                    if (r.headers == null || scope == null) {
                        return dev.sandbox4j.policy.EgressPolicy.denyAll();
                    }
                    scopes.add(scope);
                    for (Map.Entry<String, String> h : r.headers.entrySet()) {
                        String value = h.getValue();
                        if (value.isEmpty() || value.chars().anyMatch(c -> c < 0x20 && c != '\t' || c == 0x7f)) {
                            return dev.sandbox4j.policy.EgressPolicy.denyAll(); // the proxy refuses to send such a value
                        }
                        // a name per policy and header: never the value, and a new policy is a new secret
                        dev.sandbox4j.policy.SecretRef secret = dev.sandbox4j.policy.SecretRef.of(
                                "vercel-transform-" + policy + "-" + (n++), () -> value);
                        headerRules.add(dev.sandbox4j.policy.HeaderRule.builder(e.getKey(), h.getKey(), secret)
                                .methods(scope.methods).pathPrefix(scope.prefix).build());
                    }
                }
                if (!firstMatchIsPerHeaderFirst(e.getValue(), scopes, headerRules)) {
                    return dev.sandbox4j.policy.EgressPolicy.denyAll();
                }
                headerRules.forEach(b::headerRule);
            }
            return b.build();
        } catch (InvalidPolicyException e) {
            return dev.sandbox4j.policy.EgressPolicy.denyAll();
        }
    }

    /** The egress of a policy without header values (see {@link #localPolicy()}). */
    private dev.sandbox4j.policy.EgressPolicy listPolicy() {
        if (grantsHostNetwork()) {
            return dev.sandbox4j.policy.EgressPolicy.allowAll();
        }
        if (mode != Mode.CUSTOM || anyRule()) {
            return dev.sandbox4j.policy.EgressPolicy.denyAll();
        }
        try {
            if (allowOthers) {
                dev.sandbox4j.policy.EgressPolicy.Builder b = dev.sandbox4j.policy.EgressPolicy.builder(dev.sandbox4j.policy.EgressPolicy.Default.ALLOW);
                deniedCidrs.forEach(c -> b.denyCidr(c.toString()));
                return b.build();
            }
            List<Cidr> opened = allowedCidrs.stream()
                    .filter(a -> deniedCidrs.stream().noneMatch(d -> d.contains(a))).toList();
            if (domains.isEmpty() && opened.isEmpty()) {
                return dev.sandbox4j.policy.EgressPolicy.denyAll();
            }
            dev.sandbox4j.policy.EgressPolicy.Builder b = dev.sandbox4j.policy.EgressPolicy.builder();
            domains.forEach(b::allowDomain);
            opened.forEach(c -> b.allowCidr(c.toString()));
            deniedCidrs.forEach(c -> b.denyCidr(c.toString()));
            return b.build();
        } catch (InvalidPolicyException e) {
            return dev.sandbox4j.policy.EgressPolicy.denyAll(); // an entry Vercel takes that sandbox4j's model does not: no guess
        }
    }

    /** The part of a {@code match} the egress proxy's header rules can hold: methods and a path prefix. */
    private static final class Scope {
        final Set<String> methods;
        final String prefix;

        private Scope(Set<String> methods, String prefix) {
            this.methods = methods;
            this.prefix = prefix;
        }

        /** Null when the match has more than methods (upper case) and a path {@code startsWith} of the proxy's form. */
        static Scope of(ObjectNode match) {
            if (match == null) {
                return new Scope(Set.of(), "/");
            }
            if (match.has("queryString") || match.has("headers")) {
                return null;
            }
            Set<String> methods = new LinkedHashSet<>();
            for (JsonNode m : match.path("method")) {
                String method = m.asText();
                if (!method.equals(method.toUpperCase(Locale.ROOT))) {
                    return null; // the proxy compares upper case; whether Vercel folds case is not documented
                }
                methods.add(method);
            }
            if (match.has("method") && methods.isEmpty()) {
                return null; // an empty method list: what Vercel makes of it is not documented
            }
            String prefix = "/";
            if (match.has("path")) {
                JsonNode start = match.get("path").get("startsWith");
                if (start == null || !start.asText().startsWith("/")) {
                    return null;
                }
                prefix = start.asText();
            }
            return new Scope(methods, prefix);
        }

        boolean holds(String method, String path) {
            return (methods.isEmpty() || methods.contains(method)) && path.startsWith(prefix);
        }
    }

    /**
     * Whether the proxy's header rules (per header name, the first rule that applies) set on every request
     * exactly the headers of the first of {@code rules} whose scope holds it, as Vercel does. Every request
     * falls in one class of (a method named by a rule, or any other) x (the longest path prefix named by a
     * rule that its path starts with, or none): a rule holds all of a class or none of it, and the class's
     * own prefix is a path in it, so checking one request per class checks them all.
     */
    private static boolean firstMatchIsPerHeaderFirst(List<Rule> rules, List<Scope> scopes,
            List<dev.sandbox4j.policy.HeaderRule> headerRules) {
        Set<String> methods = new LinkedHashSet<>();
        Set<String> paths = new LinkedHashSet<>();
        paths.add("/");
        for (Scope s : scopes) {
            methods.addAll(s.methods);
            paths.add(s.prefix);
        }
        methods.add("SANDBOX4J-OTHER-METHOD");
        for (String method : methods) {
            for (String path : paths) {
                Map<String, String> vercel = new LinkedHashMap<>();
                for (int i = 0; i < rules.size(); i++) {
                    if (scopes.get(i).holds(method, path)) {
                        rules.get(i).headers.forEach((k, v) -> vercel.putIfAbsent(k.toLowerCase(Locale.ROOT), v));
                        break;
                    }
                }
                Map<String, String> proxy = new LinkedHashMap<>();
                for (dev.sandbox4j.policy.HeaderRule r : headerRules) {
                    if (r.appliesTo(method, path)) {
                        proxy.putIfAbsent(r.header().toLowerCase(Locale.ROOT), r.secret().resolve());
                    }
                }
                if (!vercel.equals(proxy)) {
                    return false;
                }
            }
        }
        return true;
    }

    @Override
    public String toString() {
        return "WirePolicy" + responseForm();
    }
}
