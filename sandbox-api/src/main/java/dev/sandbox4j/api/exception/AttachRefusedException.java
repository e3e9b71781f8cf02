package dev.sandbox4j.api.exception;

import java.util.List;
import java.util.Objects;
import dev.sandbox4j.api.SandboxRunner;

/**
 * {@link SandboxRunner#attach} found the sandbox but refused it: it does not carry this library's
 * label, belongs to another owner, is no longer running, or its recorded or reported policy differs
 * from the spec the caller expects. {@link #reasons()} names each differing rule. The sandbox is left
 * as it was (not destroyed): a caller that cannot prove a sandbox is its own must not be able to kill
 * it by naming its id, and its own lifetime bounds it. Not retriable; no code ran.
 *
 * @since 0.1.0
 */
public final class AttachRefusedException extends SandboxException {
    /** The id the caller asked for; part of the serial form. */
    private final String sandboxId;
    /** One sentence per failed check, never empty; part of the serial form. */
    private final List<String> reasons;

    /**
     * @param provider the runner's provider
     * @param sandboxId the id the caller asked for
     * @param reasons one sentence per failed check, never empty
     */
    public AttachRefusedException(String provider, String sandboxId, List<String> reasons) {
        super(builder("refusing to attach " + provider + " sandbox " + sandboxId + ": " + String.join("; ", reasons)
                + " (the sandbox is left as it was)").provider(provider));
        this.sandboxId = Objects.requireNonNull(sandboxId, "sandboxId");
        this.reasons = List.copyOf(reasons);
        if (this.reasons.isEmpty()) {
            throw new IllegalArgumentException("an attach refusal needs a reason");
        }
    }

    private AttachRefusedException(Builder details, String sandboxId, List<String> reasons) {
        super(details);
        this.sandboxId = sandboxId;
        this.reasons = reasons;
    }

    @Override
    protected SandboxException copyWith(Builder details) {
        return new AttachRefusedException(details, sandboxId, reasons);
    }

    /**
     * The id the caller asked for.
     *
     * @return the sandbox id
     */
    public String sandboxId() {
        return sandboxId;
    }

    /**
     * Each failed check, one sentence naming the rule (for example {@code "egress: ..."} or
     * {@code "lifetime: ..."}).
     *
     * @return the reasons, never empty
     */
    public List<String> reasons() {
        return reasons;
    }
}
