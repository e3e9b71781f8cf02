package dev.sandbox4j.egress.internal;

import dev.sandbox4j.egress.EgressResolver;
import dev.sandbox4j.egress.RefusalReason;
import dev.sandbox4j.policy.Cidr;
import dev.sandbox4j.policy.EgressPolicy;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Decides whether a host and port may be reached, and at which addresses: the policy's names
 * ({@link EgressPolicy#allowsHost}, i.e. {@code DomainPattern} semantics), the resolver's answers
 * checked against non-public ranges and the policy's CIDRs, IP literals against allowed CIDRs only,
 * denied CIDRs first.
 */
final class Admission {
    private static final Pattern IPV4 = Pattern.compile("(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}");
    private static final Pattern IPV6_CHARS = Pattern.compile("[0-9a-fA-F:.]+");
    private static final Pattern HOST = Pattern.compile("[a-z0-9_]([a-z0-9_-]{0,62})(\\.[a-z0-9_]([a-z0-9_-]{0,62}))*");

    /**
     * Addresses that are not the public internet: a name resolving only there is refused unless an
     * allowed CIDR contains the address (RFC 6890 special-purpose registries, and the ranges that embed
     * IPv4 in IPv6 where the embedded address decides).
     */
    private static final List<Cidr> NON_PUBLIC = List.of(
            "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
            "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
            "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4", "255.255.255.255/32",
            "::/128", "::1/128", "::/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32",
            "2002::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8").stream().map(Cidr::parse).toList();

    private final EgressPolicy policy;
    private final EgressResolver resolver;
    private final Set<Integer> domainPorts;
    private final Map<String, InetSocketAddress> routes;

    Admission(EgressPolicy policy, EgressResolver resolver, Set<Integer> domainPorts, Map<String, InetSocketAddress> routes) {
        this.policy = policy;
        this.resolver = resolver;
        this.domainPorts = Set.copyOf(domainPorts);
        this.routes = Map.copyOf(routes);
    }

    /** Where an admitted request goes. */
    static final class Target {
        final String host;
        final int port;
        final boolean literal;
        final List<InetSocketAddress> addresses;

        Target(String host, int port, boolean literal, List<InetSocketAddress> addresses) {
            this.host = host;
            this.port = port;
            this.literal = literal;
            this.addresses = addresses;
        }

        /** host:port as a client writes it ({@code [v6]:port}). */
        String authority() {
            return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
        }
    }

    /** The IP literal in {@code host} (brackets already removed), or null when it is a name. */
    static InetAddress literal(String host) throws Refusal {
        if (IPV4.matcher(host).matches()) {
            return parseLiteral(host);
        }
        if (host.indexOf(':') >= 0) {
            if (!IPV6_CHARS.matcher(host).matches() || host.startsWith(".")) {
                throw new Refusal(RefusalReason.BAD_REQUEST, "bad request: not an IP address: " + sanitize(host));
            }
            return parseLiteral(host);
        }
        return null;
    }

    private static InetAddress parseLiteral(String host) throws Refusal {
        try {
            return InetAddress.getByName(host); // a literal: no lookup
        } catch (UnknownHostException e) {
            throw new Refusal(RefusalReason.BAD_REQUEST, "bad request: not an IP address: " + sanitize(host));
        }
    }

    Target admit(String rawHost, int port) throws Refusal {
        if (port < 1 || port > 65535) {
            throw new Refusal(RefusalReason.BAD_REQUEST, "bad request: port out of range: " + port);
        }
        String host = rawHost.toLowerCase(Locale.ROOT);
        InetAddress literal = literal(host);
        if (literal != null) {
            String text = literal.getHostAddress();
            Cidr a = cidrOf(literal);
            if (denied(a)) {
                throw new Refusal(RefusalReason.DENIED_CIDR, "address in a denied CIDR: " + text);
            }
            if (policy.defaultAction() != EgressPolicy.Default.ALLOW && !allowedCidr(a)) {
                throw new Refusal(RefusalReason.IP_NOT_ALLOWED, "IP address not allowed: " + text
                        + " (only addresses inside an allowed CIDR may be named directly)");
            }
            return new Target(text, port, true, List.of(new InetSocketAddress(literal, port)));
        }
        if (host.endsWith(".")) {
            host = host.substring(0, host.length() - 1);
        }
        if (host.length() > 253 || !HOST.matcher(host).matches()) {
            throw new Refusal(RefusalReason.BAD_REQUEST, "bad request: not a host name: " + sanitize(host));
        }
        boolean allowAll = policy.defaultAction() == EgressPolicy.Default.ALLOW;
        if (!policy.allowsHost(host)) {
            throw new Refusal(RefusalReason.HOST_NOT_ALLOWED, "host not allowed: " + host);
        }
        boolean portOk = allowAll || domainPorts.contains(port);
        if (!portOk && policy.allowedCidrs().isEmpty()) {
            throw new Refusal(RefusalReason.PORT_NOT_ALLOWED, "port not allowed: " + host + ":" + port
                    + " (an allowed domain opens ports " + new java.util.TreeSet<>(domainPorts) + ")");
        }
        InetSocketAddress route = routes.get(host + ":" + port);
        if (route != null) {
            if (!portOk) {
                throw new Refusal(RefusalReason.PORT_NOT_ALLOWED, "port not allowed: " + host + ":" + port);
            }
            if (denied(cidrOf(route.getAddress()))) {
                throw new Refusal(RefusalReason.DENIED_CIDR, host + " is routed into a denied CIDR");
            }
            return new Target(host, port, false, List.of(route));
        }
        List<InetAddress> resolved;
        try {
            resolved = resolver.resolve(host);
        } catch (UnknownHostException | RuntimeException e) {
            throw new Refusal(RefusalReason.UNRESOLVABLE, "host has no address: " + host);
        }
        if (resolved == null || resolved.isEmpty()) {
            throw new Refusal(RefusalReason.UNRESOLVABLE, "host has no address: " + host);
        }
        List<InetSocketAddress> ok = new ArrayList<>();
        Refusal first = null;
        for (InetAddress a : resolved) {
            Cidr c = cidrOf(a);
            Refusal r = null;
            if (denied(c)) {
                r = new Refusal(RefusalReason.DENIED_CIDR, host + " resolves to " + a.getHostAddress() + ", in a denied CIDR");
            } else if (allowAll || allowedCidr(c)) {
                r = null; // an allowed CIDR opens every port of its addresses
            } else if (nonPublic(c)) {
                r = new Refusal(RefusalReason.ADDRESS_NOT_ALLOWED, host + " resolves to " + a.getHostAddress()
                        + ", a non-public address no allowed CIDR contains");
            } else if (!portOk) {
                r = new Refusal(RefusalReason.PORT_NOT_ALLOWED, "port not allowed: " + host + ":" + port
                        + " (an allowed domain opens ports " + new java.util.TreeSet<>(domainPorts) + ")");
            }
            if (r == null) {
                ok.add(new InetSocketAddress(a, port)); // resolved: the connect uses exactly this address
            } else if (first == null) {
                first = r;
            }
        }
        if (ok.isEmpty()) {
            throw first;
        }
        return new Target(host, port, false, List.copyOf(ok));
    }

    private boolean denied(Cidr a) {
        return policy.deniedCidrs().stream().anyMatch(d -> d.contains(a));
    }

    private boolean allowedCidr(Cidr a) {
        return policy.allowedCidrs().stream().anyMatch(d -> d.contains(a));
    }

    static boolean nonPublic(Cidr a) {
        return NON_PUBLIC.stream().anyMatch(d -> d.contains(a));
    }

    /** A single-address CIDR of {@code a}, built from its bytes (no lookup, no scope). */
    static Cidr cidrOf(InetAddress a) {
        byte[] b = a.getAddress();
        if (a instanceof Inet4Address) {
            return Cidr.parse((b[0] & 0xff) + "." + (b[1] & 0xff) + "." + (b[2] & 0xff) + "." + (b[3] & 0xff) + "/32");
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 16; i += 2) {
            if (i > 0) {
                sb.append(':');
            }
            sb.append(Integer.toHexString(((b[i] & 0xff) << 8) | (b[i + 1] & 0xff)));
        }
        return Cidr.parse(sb + "/128");
    }

    /** Host text fit to quote in a reason line: printable ASCII, at most 100 characters. */
    static String sanitize(String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length() && sb.length() < 100; i++) {
            char c = s.charAt(i);
            sb.append(c > 0x20 && c < 0x7f ? c : '?');
        }
        return sb.toString();
    }
}
