package dev.sandbox4j.local.internal;

import dev.sandbox4j.egress.EgressProxy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.UnixDomainSocketAddress;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/** The {@link EgressGateway}s of the local runner: one {@link EgressProxy} per sandbox and policy. */
public final class ProxyGateways {
    private ProxyGateways() {
    }

    /**
     * Gateways whose proxy builder {@code setup} configures first (resolver, limits, upstream trust, domain
     * ports, routes); the policy and the socket are set after it, so {@code setup} cannot change them.
     */
    public static EgressGateway.Factory of(Consumer<EgressProxy.Builder> setup) {
        Objects.requireNonNull(setup, "setup");
        return (policy, socket, maxBytes) -> {
            EgressProxy.Builder b = EgressProxy.builder();
            setup.accept(b);
            if (maxBytes < Long.MAX_VALUE) {
                b.maxBytesAtMost(maxBytes); // the sandbox's own network limit, when lower than the runner's
            }
            EgressProxy proxy = b.policy(policy).listen(UnixDomainSocketAddress.of(socket))
                    .name(String.valueOf(socket.getParent().getParent().getFileName())).build();
            try {
                proxy.start();
            } catch (UncheckedIOException e) {
                proxy.close();
                throw new IOException("the egress proxy could not listen on " + socket + ": " + e.getCause().getMessage(), e);
            }
            return new EgressGateway() {
                @Override
                public Optional<String> caCertificatePem() {
                    return proxy.caCertificatePem();
                }

                @Override
                public long bytesRelayed() {
                    dev.sandbox4j.egress.EgressStats st = proxy.stats();
                    return st.bytesUp() + st.bytesDown();
                }

                @Override
                public void close() {
                    proxy.close();
                }
            };
        };
    }
}
