package dev.sandbox4j.emulators.vercel.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.policy.Cidr;
import dev.sandbox4j.policy.EgressPolicy;
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
 * what the emulator needs from it: the egress of the local sandbox ({@link #localPolicy()}: a domain
 * list goes to the local runner's egress proxy), whether that is the host network, and the response
 * form the API echoes back ({@code mode: custom}, header names only, never values).
 *
 * <p>Accepted request forms (vercel.md section 5.1): {@code {"mode":"allow-all"}},
 * {@code {"mode":"deny-all"}}, the list form {@code {"allow":[domains], "subnets":{allow,deny}}}, the
 * record form {@code {"allow":{domain:[rules]}}} (key {@code "*"} = all other traffic), and the legacy
 * {@code {"mode":"custom", allowedDomains, allowedCIDRs, deniedCIDRs, injectionRules}}. Unknown keys
 * are refused so that a misspelt rule cannot silently widen egress.
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
    /** Domain to the header names its transform rules set (values are never kept). */
    private final Map<String, Set<String>> injectedHeaders;
    private final Map<String, String> forwards;
    /** Whether any domain (or {@code *}) carries a rule: transform, forwardURL or response. */
    private final boolean rules;

    private WirePolicy(Mode mode, List<String> domains, boolean allowOthers, List<Cidr> allowedCidrs,
            List<Cidr> deniedCidrs, Map<String, Set<String>> injectedHeaders, Map<String, String> forwards,
            boolean rules) {
        this.mode = mode;
        this.rules = rules;
        this.domains = List.copyOf(domains);
        this.allowOthers = allowOthers;
        this.allowedCidrs = List.copyOf(allowedCidrs);
        this.deniedCidrs = List.copyOf(deniedCidrs);
        this.injectedHeaders = injectedHeaders;
        this.forwards = forwards;
    }

    /** The default when create carries no policy: allow-all (vercel.md 5.1, the SDK's JSDoc). */
    public static WirePolicy allowAll() {
        return new WirePolicy(Mode.ALLOW_ALL, List.of(), true, List.of(), List.of(), Map.of(), Map.of(), false);
    }

    public static WirePolicy denyAll() {
        return new WirePolicy(Mode.DENY_ALL, List.of(), false, List.of(), List.of(), Map.of(), Map.of(), false);
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
        Map<String, Set<String>> headers = new LinkedHashMap<>();
        Map<String, String> forwards = new LinkedHashMap<>();
        boolean rules = false;
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
                    if (key.equals("*")) {
                        others = true;
                    } else {
                        domains.add(domain(NODES.textNode(key), "networkPolicy.allow key", false));
                    }
                    rules(key, e.getValue(), headers, forwards);
                    rules |= e.getValue().size() > 0;
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
        return new WirePolicy(Mode.CUSTOM, domains, others, allowed, denied, headers, forwards, rules);
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
        Map<String, Set<String>> headers = new LinkedHashMap<>();
        JsonNode rules = node.get("injectionRules");
        if (rules != null) {
            if (!rules.isArray()) {
                throw new BadPolicyException("networkPolicy.injectionRules must be a list");
            }
            for (JsonNode r : rules) {
                if (!r.isObject() || !r.path("domain").isTextual()) {
                    throw new BadPolicyException("networkPolicy.injectionRules[] needs a domain");
                }
                Set<String> names = headers.computeIfAbsent(r.get("domain").asText(), k -> new LinkedHashSet<>());
                JsonNode h = r.get("headers");
                if (h != null) {
                    if (!h.isObject()) {
                        throw new BadPolicyException("networkPolicy.injectionRules[].headers must be an object");
                    }
                    h.fieldNames().forEachRemaining(names::add);
                }
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
        boolean anyRule = (rules != null && rules.size() > 0) || (fw != null && fw.size() > 0);
        return new WirePolicy(Mode.CUSTOM, domains, others, cidrs(node.get("allowedCIDRs"), "networkPolicy.allowedCIDRs"),
                cidrs(node.get("deniedCIDRs"), "networkPolicy.deniedCIDRs"), headers, forwards, anyRule);
    }

    /** Each rule is {match?, transform | forwardURL | response}: exactly one action (vercel.md 5.1). */
    private static void rules(String domain, JsonNode list, Map<String, Set<String>> headers,
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
            JsonNode match = rule.get("match");
            if (match != null && !match.isObject()) {
                throw new BadPolicyException(where + "[].match must be an object");
            }
            JsonNode transform = rule.get("transform");
            if (transform != null) {
                if (!transform.isArray()) {
                    throw new BadPolicyException(where + "[].transform must be a list");
                }
                Set<String> names = headers.computeIfAbsent(domain, k -> new LinkedHashSet<>());
                for (JsonNode t : transform) {
                    JsonNode h = t.get("headers");
                    if (h == null || !h.isObject()) {
                        throw new BadPolicyException(where + "[].transform[].headers must be an object");
                    }
                    Iterator<Map.Entry<String, JsonNode>> it = h.properties().iterator();
                    while (it.hasNext()) {
                        Map.Entry<String, JsonNode> e = it.next();
                        if (!e.getValue().isTextual()) {
                            throw new BadPolicyException(where + "[].transform[].headers values must be strings");
                        }
                        names.add(e.getKey());
                    }
                }
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
        if (mode == Mode.DENY_ALL || rules || !deniedCidrs.isEmpty()) {
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

    /**
     * The egress of the local sandbox, made of this policy by the emulator (the local runner enforces a
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
     *   <li>deny-all, stricter than Vercel, for a policy with any rule ({@code transform},
     *       {@code forwardURL}, {@code response}, legacy injection or forward rules): the local runner would
     *       reach the domain without the rule's header, instead of the forward proxy or instead of the
     *       canned answer, so the rule would be widened, not emulated; and for a domain sandbox4j's model
     *       refuses (a single label, a TLD under {@code *.}).</li>
     * </ul>
     * What stays different from Vercel: the proxy matches an allowed domain by TLS SNI or plain HTTP
     * {@code Host} on its domain ports (80, 443 and any a test adds), where Vercel matches the SNI on any
     * port and refuses plain-text HTTP by domain; and a command that is running keeps the egress it started
     * with when the policy changes (the local runner switches the next command).
     */
    public EgressPolicy localPolicy() {
        if (grantsHostNetwork()) {
            return EgressPolicy.allowAll();
        }
        if (mode != Mode.CUSTOM || rules) {
            return EgressPolicy.denyAll();
        }
        try {
            if (allowOthers) {
                EgressPolicy.Builder b = EgressPolicy.builder(EgressPolicy.Default.ALLOW);
                deniedCidrs.forEach(c -> b.denyCidr(c.toString()));
                return b.build();
            }
            List<Cidr> opened = allowedCidrs.stream()
                    .filter(a -> deniedCidrs.stream().noneMatch(d -> d.contains(a))).toList();
            if (domains.isEmpty() && opened.isEmpty()) {
                return EgressPolicy.denyAll();
            }
            EgressPolicy.Builder b = EgressPolicy.builder();
            domains.forEach(b::allowDomain);
            opened.forEach(c -> b.allowCidr(c.toString()));
            deniedCidrs.forEach(c -> b.denyCidr(c.toString()));
            return b.build();
        } catch (InvalidPolicyException e) {
            return EgressPolicy.denyAll(); // an entry Vercel takes that sandbox4j's model does not: no guess
        }
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
        if (!injectedHeaders.isEmpty()) {
            ArrayNode rules = out.putArray("injectionRules");
            injectedHeaders.forEach((domain, names) -> {
                ObjectNode r = rules.addObject().put("domain", domain);
                ArrayNode n = r.putArray("headerNames");
                names.forEach(n::add);
            });
        }
        if (!forwards.isEmpty()) {
            ArrayNode rules = out.putArray("forwardRules");
            forwards.forEach((domain, url) -> rules.addObject().put("domain", domain).put("forwardURL", url));
        }
        return out;
    }

    @Override
    public String toString() {
        return "WirePolicy" + responseForm();
    }
}
