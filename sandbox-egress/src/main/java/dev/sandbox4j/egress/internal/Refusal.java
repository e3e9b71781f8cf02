package dev.sandbox4j.egress.internal;

import dev.sandbox4j.egress.RefusalReason;

/** A request the proxy refuses; the message is the reason line the sandbox reads (no secrets, ever). */
final class Refusal extends Exception {
    final RefusalReason reason;

    Refusal(RefusalReason reason, String message) {
        super(message, null, false, false);
        this.reason = reason;
    }
}
