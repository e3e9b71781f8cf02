package dev.sandbox4j.local.internal;

import dev.sandbox4j.policy.EgressPolicy;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The host side of a sandbox whose egress is a list: an egress proxy enforcing the policy, listening
 * on a unix socket in the sandbox's host directory. One per sandbox and policy; closing it closes its
 * connections at once.
 */
public interface EgressGateway extends AutoCloseable {
    /** The PEM certificate of the proxy's per-sandbox CA, present when the policy has header rules. */
    Optional<String> caCertificatePem();

    /** {@return the bytes relayed so far, both directions together} */
    long bytesRelayed();

    /** Stops listening and closes every connection. Idempotent. */
    @Override
    void close();

    /**
     * Starts a gateway for one policy on {@code socket} (which does not exist yet) that relays at most
     * {@code maxBytes} (positive; {@link Long#MAX_VALUE} for no cap beyond the gateway's own).
     */
    interface Factory {
        EgressGateway start(EgressPolicy policy, Path socket, long maxBytes) throws IOException;
    }
}
