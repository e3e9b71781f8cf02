package dev.sandbox4j.policy;

import java.util.List;

/**
 * A policy or limit value that is malformed in itself (a CIDR with host bits set, a wildcard
 * domain {@code *}, a negative duration, a header rule for a host that is not allowed).
 *
 * @since 0.1.0
 */
public final class InvalidPolicyException extends IllegalArgumentException {
    /** Every problem found, one sentence each; unmodifiable, part of the serial form. */
    private final List<String> problems;

    /**
     * A single problem.
     *
     * @param problem one sentence naming what is wrong, which is also the message
     */
    public InvalidPolicyException(String problem) {
        this(List.of(problem));
    }

    /**
     * Several problems at once; the message joins them.
     *
     * @param problems one sentence each, at least one
     */
    public InvalidPolicyException(List<String> problems) {
        super(problems.size() == 1 ? problems.get(0)
                : "invalid policy: " + String.join("; ", problems));
        this.problems = List.copyOf(problems);
    }

    /** {@return every problem found, one sentence each; unmodifiable} */
    public List<String> problems() {
        return problems;
    }
}
