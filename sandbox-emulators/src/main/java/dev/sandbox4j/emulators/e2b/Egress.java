package dev.sandbox4j.emulators.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The egress an emulated sandbox received ({@code allow_internet_access} and {@code network.allowOut}
 * / {@code denyOut}), validated as E2B's API does, and what it means for the local sandbox: the host
 * network or none.
 *
 * <p>E2B semantics: no config means everything is allowed; allow entries beat deny entries; anything
 * matched by neither is allowed; {@code allow_internet_access:false} replaces the deny list with
 * {@code 0.0.0.0/0} and keeps the allow list. The local sandbox has only two settings, so the emulator
 * grants the host network when everything is allowed, or when an allow entry names the canary's
 * loopback target (an IP or CIDR containing 127.0.0.1 or ::1, or {@code localhost}); an allow list
 * with domains under a deny of all traffic goes through the local runner's egress proxy
 * ({@link #localPolicy()}); any other restriction gives no network, which is stricter than E2B and
 * enough to make a weakened policy fail the canary.
 */
final class Egress {
    static final String ALL_TRAFFIC = "0.0.0.0/0";
    static final String DOMAINS_REQUIRE_BLOCK_ALL = "When specifying allowed domains in allow out, you must "
            + "include 'ALL_TRAFFIC' in deny out to block all other traffic.";
    private static final Pattern IPV4 = Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");
    private static final byte[] LOOPBACK_V4 = {127, 0, 0, 1};
    private static final byte[] LOOPBACK_V6 = new byte[16];

    static {
        LOOPBACK_V6[15] = 1;
    }

    private final Boolean allowInternetAccess;
    private final List<String> allowOut;
    private final List<String> denyOut;
    private final ObjectNode network;

    private Egress(Boolean allowInternetAccess, List<String> allowOut, List<String> denyOut, ObjectNode network) {
        this.allowInternetAccess = allowInternetAccess;
        this.allowOut = allowOut;
        this.denyOut = denyOut;
        this.network = network;
    }

    /** No egress config at all: everything allowed. */
    static Egress none() {
        return new Egress(null, null, null, null);
    }

    /**
     * Parses and validates the create body's fields (or a network update's flat body, passed as both).
     *
     * @param allowInternetAccess the {@code allow_internet_access} node, or null/missing
     * @param network the object holding {@code allowOut}/{@code denyOut}, or null/missing
     */
    static Egress parse(JsonNode allowInternetAccess, JsonNode network) throws ApiException {
        Boolean allow = null;
        if (allowInternetAccess != null && !allowInternetAccess.isMissingNode() && !allowInternetAccess.isNull()) {
            if (!allowInternetAccess.isBoolean()) {
                throw ApiException.badRequest("request body has an error: doesn't match schema: "
                        + "Error at \"/allow_internet_access\": value must be a boolean");
            }
            allow = allowInternetAccess.booleanValue();
        }
        if (network == null || network.isMissingNode() || network.isNull()) {
            return new Egress(allow, null, null, null);
        }
        if (!network.isObject()) {
            throw ApiException.badRequest("request body has an error: doesn't match schema: "
                    + "Error at \"/network\": value must be an object");
        }
        List<String> allowOut = strings(network.get("allowOut"), "allowOut");
        List<String> denyOut = strings(network.get("denyOut"), "denyOut");
        if (denyOut != null) {
            for (String cidr : denyOut) {
                if (parseIpOrCidr(cidr) == null) {
                    throw ApiException.badRequest("invalid denied CIDR " + cidr);
                }
            }
        }
        if (allowOut != null) {
            boolean domains = false;
            for (String entry : allowOut) {
                if (entry.isBlank()) {
                    throw ApiException.badRequest("invalid allowed domain: " + entry);
                }
                if (looksLikeAddress(entry)) {
                    if (parseIpOrCidr(entry) == null) {
                        throw ApiException.badRequest("invalid allow out entry: " + entry);
                    }
                } else {
                    domains = true;
                }
            }
            if (domains && (denyOut == null || !denyOut.contains(ALL_TRAFFIC))) {
                throw ApiException.badRequest(DOMAINS_REQUIRE_BLOCK_ALL);
            }
        }
        return new Egress(allow, allowOut, denyOut, ((ObjectNode) network).deepCopy());
    }

    private static List<String> strings(JsonNode node, String field) throws ApiException {
        if (node == null || node.isNull()) {
            return null;
        }
        if (!node.isArray()) {
            throw ApiException.badRequest("request body has an error: doesn't match schema: Error at \"/network/"
                    + field + "\": value must be an array");
        }
        List<String> out = new ArrayList<>();
        for (JsonNode n : node) {
            if (!n.isTextual()) {
                throw ApiException.badRequest("request body has an error: doesn't match schema: Error at \"/network/"
                        + field + "\": value must be a string");
            }
            out.add(n.textValue().trim());
        }
        return out;
    }

    /** The deny list in force: {@code allow_internet_access:false} replaces it with all traffic. */
    List<String> effectiveDenyOut() {
        if (Boolean.FALSE.equals(allowInternetAccess)) {
            return List.of(ALL_TRAFFIC);
        }
        return denyOut == null ? List.of() : denyOut;
    }

    List<String> allowOut() {
        return allowOut == null ? List.of() : allowOut;
    }

    /** Whether the local sandbox gets the host network (see the class comment). */
    boolean hostNetwork() {
        for (String entry : allowOut()) {
            if (entry.equalsIgnoreCase("localhost")) {
                return true;
            }
            byte[][] net = parseIpOrCidr(entry);
            if (net != null && (net[1][0] == 0 || contains(net, LOOPBACK_V4) || contains(net, LOOPBACK_V6))) {
                return true; // allows everything (a /0) or the canary's loopback target
            }
        }
        return effectiveDenyOut().isEmpty();
    }

    /**
     * The egress of the local sandbox: allow-all when {@link #hostNetwork()}; a domain list (default
     * deny, the allow entries as domains and CIDRs) when everything else is denied ({@value #ALL_TRAFFIC}
     * in the deny list) and the allow list names domains, so the local runner's egress proxy enforces
     * it for real; deny-all otherwise (stricter than E2B).
     */
    dev.sandbox4j.policy.EgressPolicy localPolicy() {
        if (hostNetwork()) {
            return dev.sandbox4j.policy.EgressPolicy.allowAll();
        }
        if (!effectiveDenyOut().contains(ALL_TRAFFIC) || allowOut().stream().allMatch(Egress::looksLikeAddress)) {
            return dev.sandbox4j.policy.EgressPolicy.denyAll();
        }
        dev.sandbox4j.policy.EgressPolicy.Builder b = dev.sandbox4j.policy.EgressPolicy.builder();
        try {
            for (String entry : allowOut()) {
                if (!looksLikeAddress(entry)) {
                    b.allowDomain(entry);
                } else {
                    b.allowCidr(entry.indexOf('/') >= 0 ? entry : entry + (entry.indexOf(':') >= 0 ? "/128" : "/32"));
                }
            }
            return b.build();
        } catch (dev.sandbox4j.policy.InvalidPolicyException e) {
            // an entry E2B takes that the policy model does not: no network rather than a guess
            return dev.sandbox4j.policy.EgressPolicy.denyAll();
        }
    }

    /** {@code allowInternetAccess} as {@code GET /sandboxes/{id}} shows it: null when not set. */
    Boolean allowInternetAccess() {
        return allowInternetAccess;
    }

    /** The network object as {@code GET /sandboxes/{id}} shows it, or null. */
    ObjectNode networkJson() {
        if (network == null && allowOut == null && denyOut == null) {
            return null;
        }
        ObjectNode n = network == null ? JsonNodeFactory.instance.objectNode() : network.deepCopy();
        ArrayNode deny = n.putArray("denyOut");
        effectiveDenyOut().forEach(deny::add);
        if (allowOut != null) {
            ArrayNode allow = n.putArray("allowOut");
            allowOut.forEach(allow::add);
        }
        return n;
    }

    @Override
    public String toString() {
        return "Egress[allowInternetAccess=" + allowInternetAccess + ", allowOut=" + allowOut() + ", denyOut="
                + effectiveDenyOut() + ", hostNetwork=" + hostNetwork() + "]";
    }

    private static boolean looksLikeAddress(String s) {
        return s.indexOf(':') >= 0 || s.indexOf('/') >= 0 || IPV4.matcher(s).matches();
    }

    /**
     * An IP or CIDR as Go's net package reads it (host bits allowed, masked off): {network bytes,
     * {prefix}}, or null. The unspecified address without a prefix ({@code 0.0.0.0}, {@code ::}) is
     * refused, as E2B refuses it.
     */
    static byte[][] parseIpOrCidr(String text) {
        String s = text.trim();
        int slash = s.indexOf('/');
        String addr = slash < 0 ? s : s.substring(0, slash);
        byte[] bytes = parseAddress(addr);
        if (bytes == null) {
            return null;
        }
        int max = bytes.length * 8;
        int prefix = max;
        if (slash >= 0) {
            String p = s.substring(slash + 1);
            if (!p.matches("\\d{1,3}") || Integer.parseInt(p) > max) {
                return null;
            }
            prefix = Integer.parseInt(p);
        } else if (isZero(bytes)) {
            return null;
        }
        for (int bit = prefix; bit < max; bit++) {
            bytes[bit / 8] &= (byte) ~(0x80 >>> (bit % 8));
        }
        return new byte[][] {bytes, {(byte) prefix}};
    }

    private static byte[] parseAddress(String addr) {
        var m = IPV4.matcher(addr);
        if (m.matches()) {
            byte[] b = new byte[4];
            for (int i = 0; i < 4; i++) {
                int v = Integer.parseInt(m.group(i + 1));
                if (v > 255) {
                    return null;
                }
                b[i] = (byte) v;
            }
            return b;
        }
        if (addr.indexOf(':') >= 0 && addr.matches("[0-9a-fA-F:.]+")) {
            try {
                byte[] b = InetAddress.getByName(addr).getAddress(); // a literal: no lookup
                return b.length == 16 ? b : null;
            } catch (UnknownHostException e) {
                return null;
            }
        }
        return null;
    }

    private static boolean isZero(byte[] b) {
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }

    private static boolean contains(byte[][] net, byte[] ip) {
        byte[] base = net[0];
        int prefix = net[1][0] & 0xff;
        if (base.length != ip.length) {
            return false;
        }
        for (int bit = 0; bit < prefix; bit++) {
            int mask = 0x80 >>> (bit % 8);
            if ((base[bit / 8] & mask) != (ip[bit / 8] & mask)) {
                return false;
            }
        }
        return true;
    }
}
