package dev.sandbox4j.policy;

import java.util.List;

/**
 * A valid policy that a runner cannot enforce exactly. Thrown before any sandbox is created (or,
 * when a provider refuses it server-side, after the partly created sandbox was torn down), so no
 * code ever runs under an egress weaker than the one requested.
 *
 * @since 0.1.0
 */
public final class UnsupportedPolicyException extends IllegalArgumentException {
    /** The runner that refused; part of the serial form. */
    private final String runner;
    /** One sentence per rule that cannot be enforced; unmodifiable, part of the serial form. */
    private final List<String> violations;

    /**
     * A refusal by {@code runner}; the message names the runner and joins the violations.
     *
     * @param runner the runner's (provider's) name
     * @param violations one sentence per rule that cannot be enforced, naming the rule
     */
    public UnsupportedPolicyException(String runner, List<String> violations) {
        super(runner + " cannot enforce this policy exactly: " + String.join("; ", violations));
        this.runner = runner;
        this.violations = List.copyOf(violations);
    }

    /** {@return the runner (provider) that refused} */
    public String runner() {
        return runner;
    }

    /** {@return one sentence per rule that cannot be enforced, naming the rule; unmodifiable} */
    public List<String> violations() {
        return violations;
    }
}
