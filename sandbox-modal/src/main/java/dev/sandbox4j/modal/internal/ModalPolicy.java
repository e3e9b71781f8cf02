package dev.sandbox4j.modal.internal;

import dev.sandbox4j.modal.internal.proto.ModalApi;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Cidr;
import dev.sandbox4j.policy.DomainPattern;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;

/**
 * What Modal enforces exactly, and the translation of an {@link EgressPolicy} and {@link Limits} into
 * {@code Sandbox.network_access} and {@code Sandbox.resources}.
 *
 * <p>Modal's outbound policy is one of OPEN, BLOCKED, or ALLOWLIST with allowed IPv4 CIDRs (any
 * protocol) and allowed domains, combined additively. Its domain list is beta and lets only TLS on
 * port 443 through, matched on SNI, with DNS left open: stricter than this library's meaning of a
 * domain (TCP 80 and 443), never weaker, so exact names are accepted and the difference is listed in
 * {@link Capabilities#implicitAllowances()}. Wildcards are refused: whether Modal's {@code *.x} also
 * matches {@code x} itself (ours does not) is not documented. Denied CIDRs, default-allow policies
 * with denies, header rules and IPv6 have no Modal form. A live sandbox's policy is replaced through
 * the router's {@code TaskSetNetworkAccess} ({@link #liveNetworkAccess}); Modal has no call that reads
 * a sandbox's policy back, so the lock-down rests on that call's OK (see {@code ModalDriver#updateEgress}).
 */
public final class ModalPolicy {
    public static final String RUNNER = "modal";
    /** Modal's longest sandbox timeout (docs: 24 hours). */
    static final Duration MAX_LIFETIME = Duration.ofHours(24);
    /** Resources.milli_cpu and memory_mb are uint32. */
    static final long MAX_UINT32 = 0xFFFF_FFFFL;

    private ModalPolicy() {
    }

    /** What the default image ({@code python:3.13-slim}) has: Python and Bash, no Node.js. */
    public static final java.util.Set<Language> DEFAULT_LANGUAGES = java.util.Set.of(Language.PYTHON, Language.BASH);

    /** The capabilities with the default image's languages. */
    public static Capabilities capabilities() {
        return capabilities(DEFAULT_LANGUAGES);
    }

    /**
     * The capabilities of a runner whose image has {@code languages} (the image is a setting; Modal
     * runs what the image carries, so JavaScript needs an image with {@code node}).
     */
    public static Capabilities capabilities(java.util.Set<Language> languages) {
        return Capabilities.builder(RUNNER)
                .egress(Capabilities.Egress.DENY_ALL, Capabilities.Egress.ALLOW_ALL,
                        Capabilities.Egress.DEFAULT_DENY_WITH_RULES, Capabilities.Egress.ALLOW_DOMAINS,
                        Capabilities.Egress.ALLOW_CIDRS_IPV4, Capabilities.Egress.DOMAINS_WITH_CIDRS,
                        Capabilities.Egress.LIVE_UPDATE)
                .limits(Capabilities.Limit.LIFETIME, Capabilities.Limit.VCPUS, Capabilities.Limit.MEMORY)
                .features(Capabilities.Feature.OUTPUT_ON_TIMEOUT, Capabilities.Feature.SEPARATE_STDERR,
                        Capabilities.Feature.SESSIONS, Capabilities.Feature.SETUP_COMMANDS,
                        Capabilities.Feature.INPUT_FILES, Capabilities.Feature.ENV, Capabilities.Feature.ATTACH,
                        Capabilities.Feature.READ_FILES, Capabilities.Feature.LIST_FILES, Capabilities.Feature.STREAMING)
                .languages(languages.toArray(new Language[0]))
                .implicitAllowance("allowed domains are reached over TLS on port 443 only, matched on SNI"
                        + " (Modal's domain allow list, beta): plain HTTP on port 80 to an allowed domain is blocked,"
                        + " which is stricter than a domain here; DNS stays open")
                .check(ModalPolicy::quirks)
                .build();
    }

    /** What the generic check does not know about Modal, one sentence each. */
    static List<String> quirks(EgressPolicy policy, Limits limits) {
        List<String> v = new ArrayList<>();
        limits.lifetime().ifPresent(l -> {
            if (l.compareTo(MAX_LIFETIME) > 0) {
                v.add("a lifetime of " + l + " (Modal's longest sandbox timeout is 24 hours)");
            }
        });
        limits.vcpus().ifPresent(c -> {
            if (c * 1000L > MAX_UINT32) {
                v.add("a vCPU limit of " + c + " (too large for Modal's milli-CPU field)");
            }
        });
        return v;
    }

    /**
     * {@code network_access} for {@code policy}: BLOCKED for deny-all, OPEN for allow-all, ALLOWLIST
     * with the CIDRs and domains for default deny with allow rules (so an empty list can never mean
     * open).
     *
     * @throws UnsupportedPolicyException for anything else (the capabilities refuse it earlier)
     */
    public static ModalApi.NetworkAccess networkAccess(EgressPolicy policy) {
        List<String> refused = capabilities().violations(policy, Limits.defaults());
        if (!refused.isEmpty()) {
            throw new UnsupportedPolicyException(RUNNER, refused);
        }
        ModalApi.NetworkAccess.Builder b = ModalApi.NetworkAccess.newBuilder();
        if (policy.isDenyAll()) {
            return b.setNetworkAccessType(ModalApi.NetworkAccess.NetworkAccessType.BLOCKED).build();
        }
        if (policy.isAllowAll()) {
            return b.setNetworkAccessType(ModalApi.NetworkAccess.NetworkAccessType.OPEN).build();
        }
        b.setNetworkAccessType(ModalApi.NetworkAccess.NetworkAccessType.ALLOWLIST);
        for (Cidr c : policy.allowedCidrs()) {
            b.addAllowedCidrs(c.toString());
        }
        for (DomainPattern d : policy.allowedDomains()) {
            b.addAllowedDomains(d.toString());
        }
        return b.build();
    }

    /**
     * {@code network_access} for {@code TaskSetNetworkAccess} on a live sandbox, as the official SDKs
     * build it: deny-all is an ALLOWLIST with both lists empty (what JS {@code updateNetworkPolicy} and
     * Python {@code _experimental_set_outbound_network_policy} send for empty lists; the proto says only
     * ALLOWLIST is supported, and an empty one blocks everything), allow rules the same ALLOWLIST as at
     * create, allow-all the proto's "allow-all allowlist": ALLOWLIST with the one CIDR {@code 0.0.0.0/0}
     * (what the JS SDK sends for {@code outboundCidrAllowlist: ["0.0.0.0/0"]}; never more than the
     * Python SDK's OPEN). BLOCKED and OPEN are never sent here.
     *
     * @throws UnsupportedPolicyException for a policy Modal cannot express
     */
    public static ModalApi.NetworkAccess liveNetworkAccess(EgressPolicy policy) {
        ModalApi.NetworkAccess atCreate = networkAccess(policy);
        ModalApi.NetworkAccess.Builder b = ModalApi.NetworkAccess.newBuilder()
                .setNetworkAccessType(ModalApi.NetworkAccess.NetworkAccessType.ALLOWLIST);
        switch (atCreate.getNetworkAccessType()) {
            case BLOCKED:
                return b.build();
            case OPEN:
                return b.addAllowedCidrs(ALL_IPV4).build();
            default:
                return atCreate;
        }
    }

    /** The allow-all allowlist's CIDR. */
    static final String ALL_IPV4 = "0.0.0.0/0";

    /**
     * Resources for {@code limits}, or null when none is set. Each limit is both the reservation and
     * the hard cap ({@code milli_cpu_max}, {@code memory_mb_max}), so it is a limit and not a floor.
     */
    public static ModalApi.Resources resources(Limits limits) {
        OptionalInt cpus = limits.vcpus();
        OptionalInt mib = limits.memoryMib();
        if (cpus.isEmpty() && mib.isEmpty()) {
            return null;
        }
        ModalApi.Resources.Builder r = ModalApi.Resources.newBuilder();
        if (cpus.isPresent()) {
            r.setMilliCpu(cpus.getAsInt() * 1000).setMilliCpuMax(cpus.getAsInt() * 1000);
        }
        if (mib.isPresent()) {
            r.setMemoryMb(mib.getAsInt()).setMemoryMbMax(mib.getAsInt());
        }
        return r.build();
    }

    /** A lifetime as Modal's whole seconds, rounded up (never shorter than asked), at least 1. */
    public static int seconds(Duration d) {
        long s = d.getSeconds() + (d.getNano() > 0 ? 1 : 0);
        return (int) Math.max(1, Math.min(s, Integer.MAX_VALUE));
    }
}
