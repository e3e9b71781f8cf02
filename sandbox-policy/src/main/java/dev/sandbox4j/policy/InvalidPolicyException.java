package dev.sandbox4j.policy;

import java.util.List;

/**
 * A policy or limit value that is malformed in itself (a CIDR with host bits set, a wildcard
 * domain {@code *}, a negative duration, a header rule for a host that is not allowed).
 *
 * @since 0.1.0
 */
public final class InvalidPolicyException extends IllegalArgumentException {
    private final List<String> problems;

    public InvalidPolicyException(String problem) {
        this(List.of(problem));
    }

    public InvalidPolicyException(List<String> problems) {
        super(problems.size() == 1 ? problems.get(0)
                : "invalid policy: " + String.join("; ", problems));
        this.problems = List.copyOf(problems);
    }

    /** Every problem found, one sentence each. */
    public List<String> problems() {
        return problems;
    }
}
