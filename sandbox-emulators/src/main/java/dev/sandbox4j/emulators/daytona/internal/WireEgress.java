package dev.sandbox4j.emulators.daytona.internal;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The egress fields of a Daytona create body ({@code networkBlockAll}, {@code networkAllowList},
 * {@code domainAllowList}), validated as the v0.190 API server does
 * ({@code apps/api/src/sandbox/utils/network-validation.util.ts}, see
 * {@code /work/shared/providers/daytona.md} section 2), and what they mean for the local machine.
 *
 * <p>The fields are not mutually exclusive: a mix is accepted, and {@code networkBlockAll} silently
 * wins over the lists (the runner applies block-all first, docs {@code network-limits.mdx:182}).
 * What they mean for the local machine is {@link #localPolicy}: block-all means no network; no field
 * at all means the host's; a CIDR list means the host's when one of its CIDRs contains a canary
 * target (the address a test's listener is reached at, a test rig's convenience); any other list is
 * enforced by the local runner's egress proxy. A domain list never grants the host network: a canary
 * target cannot be named by a domain that passes Daytona's validation ({@code localhost} has no dot).
 */
public final class WireEgress {
    /** Node's {@code net.isIPv4}: dotted quad, no leading zeros. */
    private static final Pattern IPV4 = Pattern.compile(
            "^(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]\\d|\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]\\d|\\d)$");
    private static final Pattern DOMAIN =
            Pattern.compile("^(\\*\\.)?([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\\.)+[a-zA-Z]{2,}$");
    /** JavaScript's parseInt: optional sign, then leading digits; anything else is NaN. */
    private static final Pattern PARSE_INT = Pattern.compile("^\\s*([+-]?\\d+)");
    private static final int MAX_ENTRIES = 10;

    private final boolean blockAll;
    private final String networkAllowList;
    private final String domainAllowList;
    private final List<long[]> networks;

    private WireEgress(boolean blockAll, String networkAllowList, String domainAllowList, List<long[]> networks) {
        this.blockAll = blockAll;
        this.networkAllowList = networkAllowList;
        this.domainAllowList = domainAllowList;
        this.networks = networks;
    }

    /**
     * Reads and validates the egress fields of a create body.
     *
     * @throws WireException 400 with the server's message for a type error or an invalid list
     */
    public static WireEgress parse(JsonNode body) throws WireException {
        JsonNode block = body.path("networkBlockAll");
        if (!block.isMissingNode() && !block.isNull() && !block.isBoolean()) {
            throw WireException.badRequest("networkBlockAll must be a boolean value");
        }
        String networks = optionalString(body, "networkAllowList");
        String domains = optionalString(body, "domainAllowList");
        List<long[]> parsed = new ArrayList<>();
        if (networks != null) {
            parsed = validateNetworks(networks);
        }
        if (domains != null) {
            validateDomains(domains);
        }
        // the service applies a list only when it is truthy: an empty string is no list
        return new WireEgress(block.asBoolean(false), emptyToNull(networks), emptyToNull(domains), parsed);
    }

    /**
     * The settings after a {@code POST /sandbox/{id}/network-settings} body, as the v0.190 service merges
     * it into the stored ones ({@code sandbox.service.ts} {@code updateNetworkSettings}): an empty list
     * clears that list; {@code networkBlockAll: true} also clears the CIDR list; a CIDR list sets
     * block-all to false; {@code networkBlockAll: false} without a CIDR list clears the CIDR list.
     *
     * @throws WireException 400 for a body with none of the three fields, a type error or an invalid list
     */
    public WireEgress update(JsonNode body) throws WireException {
        JsonNode block = body.path("networkBlockAll");
        boolean blockGiven = !block.isMissingNode() && !block.isNull();
        if (blockGiven && !block.isBoolean()) {
            throw WireException.badRequest("networkBlockAll must be a boolean value");
        }
        String networks = optionalString(body, "networkAllowList");
        String domains = optionalString(body, "domainAllowList");
        if (!blockGiven && networks == null && domains == null) {
            throw WireException.badRequest(
                    "At least one of networkBlockAll, networkAllowList or domainAllowList must be provided");
        }
        List<long[]> parsed = networks == null ? null : validateNetworks(networks);
        if (domains != null) {
            validateDomains(domains);
        }
        boolean b = blockAll;
        String n = networkAllowList;
        String d = domainAllowList;
        List<long[]> nets = this.networks;
        if (domains != null) {
            d = domains.trim().isEmpty() ? null : domains;
        }
        if (blockGiven) {
            b = block.asBoolean();
            if (b) {
                n = null;
                nets = List.of();
            }
        }
        if (networks != null) {
            if (networks.trim().isEmpty()) {
                n = null;
                nets = List.of();
            } else {
                n = networks;
                nets = parsed;
                b = false;
            }
        } else if (blockGiven && !b) {
            n = null;
            nets = List.of();
        }
        return new WireEgress(b, n, d, nets);
    }

    private static String optionalString(JsonNode body, String field) throws WireException {
        JsonNode n = body.path(field);
        if (n.isMissingNode() || n.isNull()) {
            return null;
        }
        if (!n.isTextual()) {
            throw WireException.badRequest(field + " must be a string");
        }
        return n.asText();
    }

    private static String emptyToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    /** v0.190's checks, in its order; the count includes empty entries (a trailing comma counts). */
    private static List<long[]> validateNetworks(String list) throws WireException {
        String[] entries = list.split(",", -1);
        List<long[]> parsed = new ArrayList<>();
        for (String raw : entries) {
            String network = raw.trim();
            if (network.isEmpty()) {
                continue;
            }
            String[] parts = network.split("/", -1);
            String ip = parts[0];
            String prefix = parts.length > 1 ? parts[1] : "";
            if (!IPV4.matcher(ip).matches()) {
                throw WireException.badRequest("Invalid IP address: \"" + ip + "\" in network \"" + network
                        + "\". Must be a valid IPv4 address");
            }
            if (prefix.isEmpty()) {
                throw WireException.badRequest("Invalid network format: \"" + network
                        + "\". Missing CIDR prefix length (e.g., /24)");
            }
            Matcher m = PARSE_INT.matcher(prefix);
            if (!m.find()) {
                // parseInt gave NaN, which passes both range checks: accepted, but it grants nothing here
                continue;
            }
            long bits;
            try {
                bits = Long.parseLong(m.group(1));
            } catch (NumberFormatException e) {
                bits = Long.MAX_VALUE;
            }
            if (bits < 0 || bits > 32) {
                throw WireException.badRequest("Invalid CIDR prefix length: " + network
                        + ". Prefix must be between 0 and 32");
            }
            parsed.add(new long[] {ipv4(ip), bits});
        }
        if (entries.length > MAX_ENTRIES) {
            throw WireException.badRequest("Network allow list cannot contain more than 10 networks");
        }
        return parsed;
    }

    private static void validateDomains(String list) throws WireException {
        String[] entries = list.split(",", -1);
        for (String raw : entries) {
            String domain = raw.trim();
            if (!domain.isEmpty() && !DOMAIN.matcher(domain).matches()) {
                throw WireException.badRequest("Invalid domain: \"" + domain + "\". Must be a valid domain name");
            }
        }
        if (entries.length > MAX_ENTRIES) {
            throw WireException.badRequest("Domain allow list cannot contain more than 10 domains");
        }
    }

    /**
     * Whether the machine gets the host's network.
     *
     * @param canaryTargets dotted IPv4 addresses a test's listener is reached at (e.g. 127.0.0.1)
     */
    public boolean hostNetwork(Collection<String> canaryTargets) {
        if (blockAll) {
            return false;
        }
        if (networkAllowList == null && domainAllowList == null) {
            return true;
        }
        for (String target : canaryTargets) {
            if (!IPV4.matcher(target).matches()) {
                continue;
            }
            long address = ipv4(target);
            for (long[] net : networks) {
                long mask = net[1] == 0 ? 0 : (0xFFFFFFFFL << (32 - net[1])) & 0xFFFFFFFFL;
                if ((address & mask) == (net[0] & mask)) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The egress of the local machine, made of these settings by the emulator (a list goes to the local
     * runner's egress proxy; what the local runner cannot enforce, {@code LocalMachine} turns into no
     * network):
     * <ul>
     *   <li>allow-all when {@link #hostNetwork} (no field at all, or a CIDR holding a canary target);</li>
     *   <li>deny-all for block-all, which wins over the lists as on Daytona;</li>
     *   <li>a CIDR list: default deny with those IPv4 ranges allowed (an entry whose prefix JavaScript's
     *       {@code parseInt} reads as NaN is accepted by Daytona but grants nothing here);</li>
     *   <li>a domain list: default deny with those domains allowed, lower-cased, {@code *.x} as
     *       sandbox4j's {@code *.x} (subdomains, not x: Daytona's example lists the apex too);</li>
     *   <li>both lists: deny-all, stricter than Daytona, because how Daytona combines them (either, or
     *       both) is not known (daytona.md, open question 1): neither guess is made.</li>
     * </ul>
     * The proxy matches an allowed domain by TLS SNI or plain HTTP {@code Host} on its domain ports;
     * Daytona's private enforcement of the domain list is not known in that detail.
     */
    public dev.sandbox4j.policy.EgressPolicy localPolicy(Collection<String> canaryTargets) {
        if (hostNetwork(canaryTargets)) {
            return dev.sandbox4j.policy.EgressPolicy.allowAll();
        }
        if (blockAll || (networkAllowList != null && domainAllowList != null)) {
            return dev.sandbox4j.policy.EgressPolicy.denyAll();
        }
        dev.sandbox4j.policy.EgressPolicy.Builder b = dev.sandbox4j.policy.EgressPolicy.builder();
        boolean any = false;
        for (long[] net : networks) {
            long mask = net[1] == 0 ? 0 : (0xFFFFFFFFL << (32 - net[1])) & 0xFFFFFFFFL;
            long base = net[0] & mask;
            b.allowCidr((base >>> 24) + "." + ((base >>> 16) & 0xFF) + "." + ((base >>> 8) & 0xFF) + "."
                    + (base & 0xFF) + "/" + net[1]);
            any = true;
        }
        if (domainAllowList != null) {
            for (String raw : domainAllowList.split(",", -1)) {
                if (!raw.trim().isEmpty()) {
                    b.allowDomain(raw.trim());
                    any = true;
                }
            }
        }
        if (!any) {
            return dev.sandbox4j.policy.EgressPolicy.denyAll();
        }
        try {
            return b.build();
        } catch (dev.sandbox4j.policy.InvalidPolicyException e) {
            return dev.sandbox4j.policy.EgressPolicy.denyAll(); // an entry Daytona takes that the model does not
        }
    }

    public boolean blockAll() {
        return blockAll;
    }

    /** The list as received, or null when absent or empty. */
    public String networkAllowList() {
        return networkAllowList;
    }

    /** The list as received, or null when absent or empty. */
    public String domainAllowList() {
        return domainAllowList;
    }

    private static long ipv4(String dotted) {
        long v = 0;
        for (String part : dotted.split("\\.")) {
            v = (v << 8) | Integer.parseInt(part);
        }
        return v;
    }

    @Override
    public String toString() {
        return "WireEgress[blockAll=" + blockAll + ", networkAllowList=" + networkAllowList
                + ", domainAllowList=" + domainAllowList + "]";
    }
}
