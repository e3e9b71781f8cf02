package dev.sandbox4j.egress;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;

/**
 * A snapshot of what one proxy did: connections accepted and open, requests admitted, refusals by
 * reason, upstream failures, connections closed by a timeout or the byte limit, and bytes relayed up
 * (sandbox to server) and down.
 *
 * <p>Bytes are payload bytes as relayed: for a tunnel the TLS records as they pass, for a brokered
 * host the decrypted HTTP bytes, for plain HTTP the request and response as sent on.
 *
 * @since 0.1.0
 */
public final class EgressStats {
    private final long connectionsAccepted;
    private final long connectionsOpen;
    private final long admitted;
    private final Map<RefusalReason, Long> refusals;
    private final long upstreamFailures;
    private final long idleClosed;
    private final long lifetimeClosed;
    private final long bytesUp;
    private final long bytesDown;

    EgressStats(long connectionsAccepted, long connectionsOpen, long admitted, Map<RefusalReason, Long> refusals,
            long upstreamFailures, long idleClosed, long lifetimeClosed, long bytesUp, long bytesDown) {
        this.connectionsAccepted = connectionsAccepted;
        this.connectionsOpen = connectionsOpen;
        this.admitted = admitted;
        EnumMap<RefusalReason, Long> m = new EnumMap<>(RefusalReason.class);
        refusals.forEach((k, v) -> {
            if (v > 0) {
                m.put(k, v);
            }
        });
        this.refusals = Collections.unmodifiableMap(m);
        this.upstreamFailures = upstreamFailures;
        this.idleClosed = idleClosed;
        this.lifetimeClosed = lifetimeClosed;
        this.bytesUp = bytesUp;
        this.bytesDown = bytesDown;
    }

    /** {@return connections the sandbox opened to the proxy, refused ones included} */
    public long connectionsAccepted() {
        return connectionsAccepted;
    }

    /** {@return connections open when the snapshot was taken} */
    public long connectionsOpen() {
        return connectionsOpen;
    }

    /** {@return requests (CONNECTs, plain HTTP requests, requests inside brokered tunnels) let through} */
    public long admitted() {
        return admitted;
    }

    /** {@return refusals by reason; a reason never seen is absent} */
    public Map<RefusalReason, Long> refusals() {
        return refusals;
    }

    /**
     * {@return the refusals with this reason; 0 when never seen}
     *
     * @param reason the reason
     */
    public long refusals(RefusalReason reason) {
        return refusals.getOrDefault(reason, 0L);
    }

    /** {@return the number of refusals, whatever their reason} */
    public long refusalsTotal() {
        return refusals.values().stream().mapToLong(Long::longValue).sum();
    }

    /** {@return admitted requests whose server could not be reached (answered 502 or 504 when still possible)} */
    public long upstreamFailures() {
        return upstreamFailures;
    }

    /** {@return connections closed because they sat idle for {@link EgressLimits#idleTimeout()}} */
    public long idleClosed() {
        return idleClosed;
    }

    /**
     * {@return connections closed because they were open for {@link EgressLimits#maxConnectionLifetime()}}
     */
    public long lifetimeClosed() {
        return lifetimeClosed;
    }

    /** {@return bytes relayed from the sandbox towards servers} */
    public long bytesUp() {
        return bytesUp;
    }

    /** {@return bytes relayed from servers to the sandbox} */
    public long bytesDown() {
        return bytesDown;
    }

    @Override
    public String toString() {
        return "EgressStats[accepted=" + connectionsAccepted + ", open=" + connectionsOpen + ", admitted=" + admitted
                + ", refusals=" + refusals + ", upstreamFailures=" + upstreamFailures + ", idleClosed=" + idleClosed
                + ", lifetimeClosed=" + lifetimeClosed + ", up=" + bytesUp + ", down=" + bytesDown + "]";
    }
}
