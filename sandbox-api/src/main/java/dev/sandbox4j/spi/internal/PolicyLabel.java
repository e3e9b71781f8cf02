package dev.sandbox4j.spi.internal;

import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.policy.EgressPolicy;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.TreeSet;
import dev.sandbox4j.spi.CreateRequest;

/**
 * The policy a sandbox was created with, recorded in the {@value CreateRequest#POLICY_LABEL} label as
 * {@code <lifetime seconds>s-<digest of the code's egress>}: short enough for every provider's label
 * limits, and what {@link dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner#attach} compares with the expected spec. A label is
 * only the client's own claim; where the provider reports the egress, the driver compares that too.
 */
public final class PolicyLabel {
    private PolicyLabel() {
    }

    /**
     * The label's value for a lifetime and the code's egress.
     *
     * @param lifetime the sandbox's lifetime
     * @param egress the code's egress
     * @return the label value
     */
    public static String of(Duration lifetime, EgressPolicy egress) {
        return lifetime.getSeconds() + "s-" + digest(egress);
    }

    /** The differing rules between a recorded label (null when absent) and the expected spec; empty when equal. */
    public static List<String> differences(String recorded, SandboxSpec expected) {
        List<String> out = new ArrayList<>();
        if (recorded == null) {
            out.add("policy: the sandbox has no " + CreateRequest.POLICY_LABEL + " label, so its egress and lifetime"
                    + " cannot be checked");
            return out;
        }
        int dash = recorded.indexOf("s-");
        String lifetime = dash < 0 ? "" : recorded.substring(0, dash);
        String egress = dash < 0 ? "" : recorded.substring(dash + 2);
        long expectedSeconds = expected.effectiveLifetime().getSeconds();
        if (!lifetime.equals(Long.toString(expectedSeconds))) {
            out.add("lifetime: recorded " + (lifetime.isEmpty() ? "unreadable" : lifetime + " s") + ", expected "
                    + expectedSeconds + " s");
        }
        if (!egress.equals(digest(expected.egress()))) {
            out.add("egress: the recorded egress differs from the expected " + expected.egress());
        }
        return out;
    }

    /** Order-free: the same rules in another order are the same policy. Header rules hold secret references, not values. */
    private static String digest(EgressPolicy p) {
        StringBuilder sb = new StringBuilder("v1|").append(p.defaultAction()).append('|');
        sb.append(new TreeSet<>(strings(p.allowedDomains()))).append('|');
        sb.append(new TreeSet<>(strings(p.allowedCidrs()))).append('|');
        sb.append(new TreeSet<>(strings(p.deniedCidrs()))).append('|');
        sb.append(new TreeSet<>(strings(p.headerRules())));
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(sb.toString().getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    private static List<String> strings(List<?> items) {
        List<String> out = new ArrayList<>();
        items.forEach(i -> out.add(String.valueOf(i)));
        return out;
    }
}
