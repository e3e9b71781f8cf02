package dev.sandbox4j.daytona.internal;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Capabilities.Egress;
import dev.sandbox4j.policy.Capabilities.Feature;
import dev.sandbox4j.policy.Capabilities.Limit;
import dev.sandbox4j.policy.Cidr;
import dev.sandbox4j.policy.DomainPattern;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * What Daytona enforces, and how a policy becomes its create fields.
 *
 * <p>Daytona has three egress fields: {@code networkBlockAll}, {@code networkAllowList} (IPv4 CIDRs)
 * and {@code domainAllowList}. It does not reject a mix (block-all silently wins), so exactly one of
 * them is ever sent, and every policy that would need two is refused here, before any call.
 */
public final class DaytonaPolicy {
    static final String PROVIDER = "daytona";
    static final int MAX_CIDRS = 10;
    static final int MAX_DOMAINS = 10;
    private static final int MIB_PER_GIB = 1024;
    /** The API server's own domain check (network-validation.util.ts); anything else is a 400 there. */
    private static final Pattern DAYTONA_DOMAIN =
            Pattern.compile("^(\\*\\.)?([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\\.)+[a-zA-Z]{2,}$");

    static final String ESSENTIAL_SERVICES = "Daytona's \"essential services\" (package registries, Git hosting,"
            + " container registries, CDNs, AI APIs: https://www.daytona.io/docs/en/network-limits/#essential-services)"
            + " are documented as reachable on every organisation tier; in the open-source runner (v0.190)"
            + " block-all and CIDR allow lists drop them, and whether a domain allow list adds them is not documented";
    static final String DOMAIN_FILTER = "a domain allow list is enforced by Daytona's proxy on web traffic (ports 80/443,"
            + " by host name); Daytona documents neither what other ports to a listed domain do nor whether '*.x'"
            + " matches more than one label below x ('*.x' never matches x itself)";
    static final String ASYNC_RULES = "Daytona's runner applies egress rules after the sandbox container starts"
            + " (open-source runner v0.190: asynchronously, with failures only logged), so the client cannot confirm"
            + " enforcement before the first command; a lock-down after setup (POST /sandbox/{id}/network-settings)"
            + " is confirmed as Daytona reports it, by the sandbox record holding the new rules (the docs: 'The API"
            + " applies the new rules on the runner and persists them on the sandbox record', network-limits.mdx),"
            + " but on runners Daytona drives by jobs (v0.190 runnerAdapter.v2.ts) the record is written when the"
            + " job is queued, and the job's end is visible to runners only";

    private DaytonaPolicy() {
    }

    /**
     * Daytona's capabilities. Resource limits only when sandboxes are created from an image: Daytona
     * refuses cpu, memory and disk with a snapshot.
     */
    public static Capabilities capabilities(boolean fromImage) {
        Capabilities.Builder b = Capabilities.builder(PROVIDER)
                .egress(Egress.DENY_ALL, Egress.ALLOW_ALL, Egress.DEFAULT_DENY_WITH_RULES,
                        Egress.ALLOW_DOMAINS, Egress.ALLOW_WILDCARD_DOMAINS, Egress.ALLOW_CIDRS_IPV4, Egress.LIVE_UPDATE)
                // Every exec is a session command whose log labels stdout and stderr and is followed as it
                // is written (DaytonaDriver.exec): the streams come apart, and a timeout keeps what arrived.
                .features(Feature.SESSIONS, Feature.SETUP_COMMANDS, Feature.INPUT_FILES, Feature.ENV, Feature.READ_FILES,
                        Feature.LIST_FILES, Feature.ATTACH, Feature.STREAMING, Feature.SEPARATE_STDERR,
                        Feature.OUTPUT_ON_TIMEOUT)
                .languages(Language.PYTHON, Language.JAVASCRIPT, Language.BASH)
                .limits(Limit.LIFETIME)
                .maxAllowedCidrs(MAX_CIDRS)
                .maxAllowedDomains(MAX_DOMAINS)
                .maxDeniedCidrs(0)
                .implicitAllowance(ESSENTIAL_SERVICES)
                .implicitAllowance(DOMAIN_FILTER)
                .implicitAllowance(ASYNC_RULES)
                .check(DaytonaPolicy::domainSyntax)
                .check(fromImage ? DaytonaPolicy::wholeGibibytes : DaytonaPolicy::resourcesNeedImage);
        if (fromImage) {
            b.limits(Limit.VCPUS, Limit.MEMORY, Limit.DISK);
        }
        return b.build();
    }

    /** Domains our model accepts but Daytona's validator refuses (a top-level label with digits or hyphens). */
    private static List<String> domainSyntax(EgressPolicy egress, Limits limits) {
        List<String> v = new ArrayList<>();
        for (DomainPattern d : egress.allowedDomains()) {
            if (!DAYTONA_DOMAIN.matcher(d.toString()).matches()) {
                v.add("allowed domain '" + d + "' (Daytona accepts only domains whose last label is two or more letters)");
            }
        }
        return v;
    }

    private static List<String> resourcesNeedImage(EgressPolicy egress, Limits limits) {
        if (limits.vcpus().isPresent() || limits.memoryMib().isPresent() || limits.diskMib().isPresent()) {
            return List.of("Daytona sets vCPU, memory and disk only for sandboxes created from an image"
                    + " (DaytonaSandboxRunner.builder().image(...)); a snapshot keeps its own size");
        }
        return List.of();
    }

    private static List<String> wholeGibibytes(EgressPolicy egress, Limits limits) {
        List<String> v = new ArrayList<>();
        wholeGib(v, limits.memoryMib(), "memory");
        wholeGib(v, limits.diskMib(), "disk");
        return v;
    }

    private static void wholeGib(List<String> v, OptionalInt mib, String what) {
        if (mib.isPresent() && mib.getAsInt() % MIB_PER_GIB != 0) {
            v.add("a " + what + " limit of " + mib.getAsInt() + " MiB (Daytona allocates whole GiB: use a multiple of 1024)");
        }
    }

    /** Whole GiB for a MiB limit the capabilities accepted. */
    static int gib(int mib) {
        return mib / MIB_PER_GIB;
    }

    /**
     * Adds the one egress field for {@code policy} (none for allow-all, Daytona's default).
     *
     * @throws UnsupportedPolicyException for a policy the capabilities refuse (never reached through the
     *         lifecycle, which checks first; kept so no path can send a weaker policy)
     */
    /**
     * For an attach: compares the egress fields Daytona reports for a sandbox ({@code GET /sandbox/{id}})
     * with what a create for {@code expected} sends: {@code networkBlockAll} (absent is false) and the two
     * comma-separated allow lists as sets (absent or empty is none).
     */
    public static void compareReported(EgressPolicy expected, com.fasterxml.jackson.databind.JsonNode detail,
            dev.sandbox4j.spi.Attachable.Builder<?> b) {
        ObjectNode sent = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        putEgress(sent, expected);
        b.compare("networkBlockAll", sent.path("networkBlockAll").asBoolean(false), detail.path("networkBlockAll").asBoolean(false));
        for (String field : List.of("networkAllowList", "domainAllowList")) {
            b.compare(field, commaSet(sent.path(field)), commaSet(detail.path(field)));
        }
    }

    private static java.util.Set<String> commaSet(com.fasterxml.jackson.databind.JsonNode n) {
        java.util.Set<String> out = new java.util.TreeSet<>();
        if (n.isTextual()) {
            for (String part : n.asText().split(",")) {
                if (!part.isBlank()) {
                    out.add(part.strip());
                }
            }
        }
        return out;
    }

    /**
     * The body of {@code POST /sandbox/{id}/network-settings} that leaves exactly {@code policy}: all
     * three fields, the two not used cleared (the service clears a list sent as {@code ""}, and
     * {@code networkBlockAll: false} without a CIDR list clears that list: v0.190
     * {@code sandbox.service.ts updateNetworkSettings}).
     */
    public static ObjectNode networkSettings(EgressPolicy policy) {
        ObjectNode sent = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        putEgress(sent, policy);
        ObjectNode b = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        b.put("networkBlockAll", sent.path("networkBlockAll").asBoolean(false));
        b.put("networkAllowList", sent.path("networkAllowList").asText(""));
        b.put("domainAllowList", sent.path("domainAllowList").asText(""));
        return b;
    }

    /**
     * How a sandbox record ({@code GET /sandbox/{id}}, or the update's answer) differs from
     * {@code policy}, in one sentence; null when it holds exactly the fields a create for it sends.
     */
    public static String reportedDiffers(EgressPolicy policy, com.fasterxml.jackson.databind.JsonNode record) {
        ObjectNode sent = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        putEgress(sent, policy);
        boolean block = sent.path("networkBlockAll").asBoolean(false);
        if (record.path("networkBlockAll").asBoolean(false) != block) {
            return "networkBlockAll is " + record.path("networkBlockAll") + ", not " + block;
        }
        for (String field : List.of("networkAllowList", "domainAllowList")) {
            java.util.Set<String> want = commaSet(sent.path(field));
            java.util.Set<String> got = commaSet(record.path(field));
            if (!want.equals(got)) {
                return field + " is " + got + ", not " + want;
            }
        }
        return null;
    }

    public static void putEgress(ObjectNode body, EgressPolicy policy) {
        if (policy.isAllowAll()) {
            return;
        }
        if (policy.isDenyAll()) {
            body.put("networkBlockAll", true);
            return;
        }
        boolean deny = policy.defaultAction() == EgressPolicy.Default.DENY;
        boolean domains = !policy.allowedDomains().isEmpty();
        boolean cidrs = !policy.allowedCidrs().isEmpty();
        if (deny && policy.deniedCidrs().isEmpty() && policy.headerRules().isEmpty() && domains != cidrs) {
            if (cidrs && policy.allowedCidrs().stream().allMatch(Cidr::isIpv4)
                    && policy.allowedCidrs().size() <= MAX_CIDRS) {
                body.put("networkAllowList", policy.allowedCidrs().stream().map(Cidr::toString)
                        .collect(Collectors.joining(",")));
                return;
            }
            if (domains && policy.allowedDomains().size() <= MAX_DOMAINS
                    && domainSyntax(policy, Limits.defaults()).isEmpty()) {
                body.put("domainAllowList", policy.allowedDomains().stream().map(DomainPattern::toString)
                        .collect(Collectors.joining(",")));
                return;
            }
        }
        List<String> v = capabilities(false).violations(policy, Limits.defaults());
        throw new UnsupportedPolicyException(PROVIDER, v.isEmpty() ? List.of("egress " + policy) : v);
    }
}
