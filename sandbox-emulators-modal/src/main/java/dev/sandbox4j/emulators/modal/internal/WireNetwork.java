package dev.sandbox4j.emulators.modal.internal;

import dev.sandbox4j.emulators.modal.internal.proto.ModalApi;
import dev.sandbox4j.policy.Cidr;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.InvalidPolicyException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * A sandbox's {@code network_access} as received (modal.md 3.4), validated, and what it means for the
 * local sandbox ({@link #localPolicy}): OPEN is the host's network; BLOCKED and an empty ALLOWLIST are
 * none; an ALLOWLIST is the host's when one of its CIDRs contains an address a test's egress canary
 * listens on (a test rig's convenience), else its domains and CIDRs, together (Modal combines them
 * additively), under default deny through the local runner's egress proxy. What the local runner
 * cannot enforce exactly is no network at all ({@code LocalMachine} fails closed), so an adapter that
 * drops or widens the policy it was given fails the canary. A domain never grants the host network.
 * With no {@code network_access} at all the deprecated {@code block_network} decides (true: none), as
 * the server must for old clients.
 */
public final class WireNetwork {
    private final ModalApi.NetworkAccess.NetworkAccessType type;
    private final List<Cidr> cidrs;
    private final List<String> domains;

    private WireNetwork(ModalApi.NetworkAccess.NetworkAccessType type, List<Cidr> cidrs, List<String> domains) {
        this.type = type;
        this.cidrs = List.copyOf(cidrs);
        this.domains = List.copyOf(domains);
    }

    /** @throws IllegalArgumentException for what the server would refuse (INVALID_ARGUMENT) */
    public static WireNetwork parse(ModalApi.Sandbox definition) {
        if (!definition.hasNetworkAccess()
                || definition.getNetworkAccess().getNetworkAccessType() == ModalApi.NetworkAccess.NetworkAccessType.UNSPECIFIED) {
            if (definition.hasNetworkAccess() && (definition.getNetworkAccess().getAllowedCidrsCount() > 0
                    || definition.getNetworkAccess().getAllowedDomainsCount() > 0)) {
                throw new IllegalArgumentException("network_access lists need network_access_type ALLOWLIST");
            }
            return new WireNetwork(definition.getBlockNetwork() ? ModalApi.NetworkAccess.NetworkAccessType.BLOCKED
                    : ModalApi.NetworkAccess.NetworkAccessType.OPEN, List.of(), List.of());
        }
        ModalApi.NetworkAccess na = definition.getNetworkAccess();
        if (na.getNetworkAccessTypeValue() > 3) {
            throw new IllegalArgumentException("unknown network_access_type " + na.getNetworkAccessTypeValue());
        }
        ModalApi.NetworkAccess.NetworkAccessType t = na.getNetworkAccessType();
        if (t != ModalApi.NetworkAccess.NetworkAccessType.ALLOWLIST
                && (na.getAllowedCidrsCount() > 0 || na.getAllowedDomainsCount() > 0)) {
            throw new IllegalArgumentException("allowed_cidrs and allowed_domains need network_access_type ALLOWLIST");
        }
        if (definition.getBlockNetwork() && t != ModalApi.NetworkAccess.NetworkAccessType.BLOCKED) {
            throw new IllegalArgumentException("block_network contradicts network_access " + t);
        }
        return lists(na);
    }

    /**
     * The policy of the router's {@code TaskSetNetworkAccess} on a live sandbox. Upstream's proto says
     * only ALLOWLIST is supported there ("open access is expressed as an allow-all allowlist"); OPEN is
     * taken too, since the Python SDK at the same commit sends it when no list is given. BLOCKED, an
     * unset type and unknown values are refused.
     *
     * @throws IllegalArgumentException for what the server would refuse (INVALID_ARGUMENT)
     */
    public static WireNetwork parseLive(ModalApi.NetworkAccess na) {
        ModalApi.NetworkAccess.NetworkAccessType t = na.getNetworkAccessTypeValue() > 3 ? null : na.getNetworkAccessType();
        if (t != ModalApi.NetworkAccess.NetworkAccessType.ALLOWLIST && t != ModalApi.NetworkAccess.NetworkAccessType.OPEN) {
            throw new IllegalArgumentException("network_access_type " + (t == null ? String.valueOf(na.getNetworkAccessTypeValue()) : t.name())
                    + " cannot be set on a running sandbox: only ALLOWLIST is supported");
        }
        if (t != ModalApi.NetworkAccess.NetworkAccessType.ALLOWLIST
                && (na.getAllowedCidrsCount() > 0 || na.getAllowedDomainsCount() > 0)) {
            throw new IllegalArgumentException("allowed_cidrs and allowed_domains need network_access_type ALLOWLIST");
        }
        return lists(na);
    }

    /** The type and validated lists of {@code na}, whose type was checked. */
    private static WireNetwork lists(ModalApi.NetworkAccess na) {
        ModalApi.NetworkAccess.NetworkAccessType t = na.getNetworkAccessType();
        List<Cidr> parsed = new ArrayList<>();
        for (String c : na.getAllowedCidrsList()) {
            try {
                parsed.add(Cidr.parse(c));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("invalid CIDR in allowed_cidrs: '" + c + "'");
            }
        }
        for (String d : na.getAllowedDomainsList()) {
            if (!d.matches("(\\*\\.)?([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}")) {
                throw new IllegalArgumentException("invalid domain in allowed_domains: '" + d + "'");
            }
        }
        return new WireNetwork(t, parsed, na.getAllowedDomainsList());
    }

    /**
     * Whether the local sandbox gets the host's network.
     *
     * @param canaryTargets addresses a test's listener is reached at (e.g. 127.0.0.1)
     */
    public boolean hostNetwork(Collection<String> canaryTargets) {
        switch (type) {
            case OPEN:
                return true;
            case ALLOWLIST:
                for (String target : canaryTargets) {
                    Cidr host = Cidr.parse(target);
                    if (cidrs.stream().anyMatch(c -> c.contains(host))) {
                        return true;
                    }
                }
                return false;
            default:
                return false;
        }
    }

    /**
     * The egress of the local sandbox, made of this policy by the emulator, at create and after the
     * router's {@code TaskSetNetworkAccess} alike (a list goes to the local runner's egress proxy; what the
     * local runner cannot enforce, {@code LocalMachine} turns into no network):
     * <ul>
     *   <li>allow-all when {@link #hostNetwork} (OPEN, or an ALLOWLIST with a CIDR holding a canary target,
     *       such as the live update's allow-all allowlist {@code 0.0.0.0/0});</li>
     *   <li>deny-all for BLOCKED and for an ALLOWLIST with both lists empty (Modal: an empty allowlist
     *       blocks all outbound traffic);</li>
     *   <li>any other ALLOWLIST: default deny with its CIDRs and its domains allowed, together (Modal
     *       combines the two lists additively), each domain lower-cased, {@code *.x} as sandbox4j's
     *       {@code *.x} (subdomains at any depth, not x itself: how Modal matches a wildcard is not
     *       documented);</li>
     *   <li>deny-all for a list sandbox4j's model refuses (a name longer than 253 characters).</li>
     * </ul>
     * Wider than Modal: the proxy admits an allowed domain by TLS SNI or by plain HTTP {@code Host}, on its
     * domain ports (80, 443 and any a test adds, such as the list canary's), where Modal lets only TLS on
     * port 443 through, matched on SNI. Narrower: under a list the code reaches the network only through
     * the proxy (HTTP and CONNECT tunnels, no UDP, no DNS of its own), where Modal's CIDRs admit any
     * protocol and its DNS stays open.
     *
     * @param canaryTargets addresses a test's listener is reached at (e.g. 127.0.0.1)
     */
    public EgressPolicy localPolicy(Collection<String> canaryTargets) {
        if (hostNetwork(canaryTargets)) {
            return EgressPolicy.allowAll();
        }
        if (type != ModalApi.NetworkAccess.NetworkAccessType.ALLOWLIST || (cidrs.isEmpty() && domains.isEmpty())) {
            return EgressPolicy.denyAll();
        }
        EgressPolicy.Builder b = EgressPolicy.builder();
        cidrs.forEach(c -> b.allowCidr(c.toString()));
        domains.forEach(b::allowDomain);
        try {
            return b.build();
        } catch (InvalidPolicyException e) {
            return EgressPolicy.denyAll(); // an entry Modal takes that the model does not
        }
    }

    public String type() {
        return type.name();
    }

    public List<String> cidrs() {
        List<String> out = new ArrayList<>();
        cidrs.forEach(c -> out.add(c.toString()));
        return out;
    }

    public List<String> domains() {
        return domains;
    }

    @Override
    public String toString() {
        return "WireNetwork[" + type + ", cidrs=" + cidrs + ", domains=" + domains + "]";
    }
}
