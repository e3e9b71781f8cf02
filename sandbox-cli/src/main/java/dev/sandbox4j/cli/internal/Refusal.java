package dev.sandbox4j.cli.internal;

import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Capabilities.Egress;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A policy refusal for a person at a terminal: each refused rule in words (the library's violations
 * name the capability constant too, which means nothing on a command line), then the {@code --egress}
 * forms this runner does enforce, and where to go for the rest.
 */
public final class Refusal {
    // "(local cannot enforce DEFAULT_DENY_WITH_RULES)": the rule before it already says what was refused
    private static final Pattern CONSTANT = Pattern.compile(" \\([^()]* cannot enforce [A-Z0-9_]+\\)");

    private Refusal() {
    }

    /** One line: what was refused and what would work. */
    public static String describe(UnsupportedPolicyException e, Capabilities capabilities) {
        List<String> rules = new ArrayList<>();
        for (String v : e.violations()) {
            rules.add(CONSTANT.matcher(v).replaceAll(""));
        }
        String runner = e.runner();
        StringBuilder sb = new StringBuilder(runner).append(" cannot enforce this policy exactly: ")
                .append(String.join("; ", rules)).append('.');
        List<String> forms = capabilities == null ? List.of() : forms(capabilities.egress());
        if (!forms.isEmpty()) {
            String last = forms.remove(forms.size() - 1);
            String list = forms.isEmpty() ? last : String.join(", ", forms) + " or " + last;
            sb.append(" With ").append(runner).append(" use ").append(list).append('.');
        }
        if (capabilities == null || !capabilities.egress().contains(Egress.ALLOW_DOMAINS)) {
            sb.append(" For an allow list of domains use a hosted provider (--provider e2b, vercel or daytona,"
                    + " with its key in the environment).");
        }
        return sb.toString();
    }

    /** The --egress values that map onto what the runner enforces. */
    static List<String> forms(Set<Egress> egress) {
        List<String> forms = new ArrayList<>();
        if (egress.contains(Egress.DENY_ALL)) {
            forms.add("--egress deny-all");
        }
        if (egress.contains(Egress.ALLOW_ALL)) {
            forms.add("--egress allow-all");
        }
        if (egress.contains(Egress.DEFAULT_DENY_WITH_RULES)) {
            if (egress.contains(Egress.ALLOW_DOMAINS)) {
                forms.add("--egress allow=example.com");
            }
            if (egress.contains(Egress.ALLOW_CIDRS_IPV4)) {
                forms.add("--egress allow=203.0.113.0/24");
            }
        }
        return forms;
    }
}
