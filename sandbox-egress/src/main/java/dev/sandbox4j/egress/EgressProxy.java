package dev.sandbox4j.egress;

import dev.sandbox4j.egress.internal.CertificateAuthority;
import dev.sandbox4j.egress.internal.Counters;
import dev.sandbox4j.egress.internal.ProxyEngine;
import dev.sandbox4j.policy.EgressPolicy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * A host-side HTTP egress proxy for one sandbox, enforcing one {@link EgressPolicy}. The runner
 * makes it reachable from the sandbox (a unix socket bind-mounted into an otherwise empty network
 * namespace, or a loopback TCP port for the emulators and tests) and points {@code HTTP_PROXY},
 * {@code HTTPS_PROXY} and {@code ALL_PROXY} at it ({@link #proxyEnvironment}).
 *
 * <h2>What it enforces</h2>
 * <ul>
 *   <li>Only {@code CONNECT host:port} and absolute-URI plain HTTP ({@code GET http://host/...});
 *       anything else is refused.</li>
 *   <li>A host name must be allowed by the policy ({@link EgressPolicy#allowsHost}: the
 *       {@code DomainPattern} rules, {@code *.x} meaning subdomains only), on a
 *       {@linkplain Builder#domainPorts domain port} (80 and 443, as a domain means in the policy).</li>
 *   <li>The proxy resolves the name itself ({@link EgressResolver}) and drops every address in a
 *       denied CIDR, and every private, loopback, link-local, unique-local, multicast, unspecified or
 *       otherwise special-purpose address that no allowed CIDR of the policy contains (DNS rebinding).
 *       It connects to exactly an address it checked. An allowed CIDR opens every port of its
 *       addresses. A name not allowed by a domain rule is refused even if it resolves into an allowed
 *       CIDR (the proxy is stricter than a firewall here: a name is admitted by name).</li>
 *   <li>An IP literal only inside an allowed CIDR, never inside a denied one; a tunnel to an IP
 *       literal is relayed without a TLS check (there is no name to compare).</li>
 *   <li>A tunnel to a host name must begin with a TLS ClientHello whose server name (SNI) is the
 *       CONNECT host. A missing or different name is refused after the {@code 200}: with a TLS
 *       {@code access_denied} alert, or a plain-text reason line when the client did not speak TLS.
 *       A ClientHello with Encrypted Client Hello carries an outer name and is refused the same
 *       way unless the outer name is the host.</li>
 *   <li>Default allow ({@link EgressPolicy#allowAll()}, or default allow with denied CIDRs): every
 *       host, port and address, private ones included (the same as the host network an allow-all
 *       sandbox had before), except the denied CIDRs, which always win; the SNI check still applies.
 *       Deny-all: every request is refused.</li>
 * </ul>
 * Every refusal is answered with {@code 403}, the status line's reason phrase and the plain-text
 * body both saying {@code sandbox4j-egress: refused: <reason>} (for example
 * {@code sandbox4j-egress: refused: host not allowed: evil.test}), the header
 * {@code X-Sandbox4j-Egress-Refusal: <code>} giving the {@link RefusalReason#code()}, and counted in
 * {@link #stats()}. A server that cannot be reached is answered {@code 502} or {@code 504}.
 *
 * <h2>Brokered headers</h2>
 * For a host matched by a {@link dev.sandbox4j.policy.HeaderRule}, the proxy verifies the server's
 * certificate itself (the JVM's trust roots, or {@link Builder#upstreamTrustStore}), answers the
 * CONNECT, terminates the sandbox's TLS with a leaf certificate of its own CA
 * ({@link #caCertificatePem()}, which the runner installs in the sandbox's trust store), and relays
 * HTTP/1.1 requests (keep-alive, {@code Content-Length} and chunked bodies): from each it removes
 * every header a rule of the host names, then sets each rule's header that applies to the request's
 * method and path to {@code valuePrefix + secret}, the secret resolved ({@code SecretRef.resolve()})
 * at that request. The CA's and the leaves' private keys never leave this JVM and live as long as
 * this proxy. Plain HTTP to a brokered host is refused (the secret is sent over TLS only).
 *
 * <p><b>What a server hands back is the code's.</b> A host that echoes request headers (httpbin's
 * {@code /headers}, a debug endpoint, an error page quoting the request) hands the secret to the code
 * in the sandbox. Scope rules by method and path prefix to the requests that need them.
 *
 * <h2>Limits</h2>
 * {@link EgressLimits}: concurrent connections, bytes in both directions over the proxy's life, idle
 * and total connection time. {@link #close()} closes the listener and every open connection at once.
 *
 * <p>Thread-safe. One accept thread, a bounded pool of connection threads (at most two per allowed
 * connection), one watchdog thread; blocking I/O.
 *
 * @since 0.1.0
 */
public final class EgressProxy implements AutoCloseable {
    private final ProxyEngine engine;
    private final EgressPolicy policy;
    private final String name;
    private final CertificateAuthority ca;

    private EgressProxy(Builder b, CertificateAuthority ca, SSLSocketFactory upstreamTls) {
        this.policy = b.policy;
        this.name = b.name;
        this.ca = ca;
        ProxyEngine.Config c = new ProxyEngine.Config();
        c.policy = b.policy;
        c.resolver = b.resolver;
        c.limits = b.limits;
        c.listen = b.listen;
        c.upstreamTls = upstreamTls;
        c.ca = ca;
        c.domainPorts = Set.copyOf(b.domainPorts);
        c.routes = Map.copyOf(b.routes);
        c.name = b.name;
        this.engine = new ProxyEngine(c);
    }

    /** {@return a new builder; {@link Builder#policy} and one {@code listen} are required} */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Binds the listener and starts serving; returns this proxy. Calling it again does nothing.
     *
     * @return this proxy
     * @throws UncheckedIOException when the address cannot be bound (a unix socket path that exists is
     *     refused), or the proxy was closed (a closed proxy does not start again)
     */
    public EgressProxy start() {
        try {
            engine.start();
        } catch (IOException e) {
            throw new UncheckedIOException("egress proxy " + name + " could not listen", e);
        }
        return this;
    }

    /**
     * What the proxy listens on: the {@link UnixDomainSocketAddress} or the bound
     * {@link InetSocketAddress} (with the real port when port 0 was asked for); null before {@link #start()}.
     *
     * @return the address, or null before {@link #start()}
     */
    public SocketAddress address() {
        return engine.address();
    }

    /** {@return the policy this proxy enforces} */
    public EgressPolicy policy() {
        return policy;
    }

    /**
     * The proxy's CA certificate in PEM, present when the policy has header rules. The sandbox must
     * trust it for the brokered hosts (see {@link #caEnvironment}); its key never leaves this JVM.
     *
     * @return the PEM text; empty when the policy has no header rules
     */
    public Optional<String> caCertificatePem() {
        return ca == null ? Optional.empty() : Optional.of(ca.certificatePem());
    }

    /** {@return a snapshot of the counters} */
    public EgressStats stats() {
        Counters c = engine.counters();
        return new EgressStats(c.accepted(), c.open(), c.admitted(), c.refusals(), c.upstreamFailures(), c.idleClosed(),
                c.lifetimeClosed(), c.bytesUp(), c.bytesDown());
    }

    /** Closes the listener and every open connection at once (and deletes a unix socket file). Idempotent. */
    @Override
    public void close() {
        engine.close();
    }

    /**
     * The environment that points clients at a proxy URL such as {@code http://127.0.0.1:3128}:
     * {@code HTTP_PROXY}, {@code HTTPS_PROXY}, {@code ALL_PROXY} and their lower-case forms, and
     * {@code NO_PROXY}/{@code no_proxy} empty (nothing bypasses the proxy; there is no other route
     * anyway). Which clients honour them is in the README ("Egress proxy").
     *
     * @param proxyUrl the proxy's URL as the sandbox reaches it; not null
     * @return the variables, in a new mutable map
     */
    public static Map<String, String> proxyEnvironment(String proxyUrl) {
        Objects.requireNonNull(proxyUrl, "proxyUrl");
        Map<String, String> env = new LinkedHashMap<>();
        for (String v : new String[] {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"}) {
            env.put(v, proxyUrl);
            env.put(v.toLowerCase(Locale.ROOT), proxyUrl);
        }
        env.put("NO_PROXY", "");
        env.put("no_proxy", "");
        return env;
    }

    /**
     * The environment that makes clients trust a CA bundle at {@code bundlePathInSandbox}:
     * {@code SSL_CERT_FILE} (OpenSSL, Python's ssl), {@code REQUESTS_CA_BUNDLE} (requests, pip),
     * {@code CURL_CA_BUNDLE} (curl) and {@code NODE_EXTRA_CA_CERTS} (Node.js). All but the last
     * replace the system roots, so the file must hold the system's roots followed by
     * {@link #caCertificatePem()}, or hosts without a header rule fail verification.
     *
     * @param bundlePathInSandbox the bundle's path as the sandbox sees it; not null
     * @return the variables, in a new mutable map
     */
    public static Map<String, String> caEnvironment(String bundlePathInSandbox) {
        Objects.requireNonNull(bundlePathInSandbox, "bundlePathInSandbox");
        Map<String, String> env = new LinkedHashMap<>();
        env.put("SSL_CERT_FILE", bundlePathInSandbox);
        env.put("REQUESTS_CA_BUNDLE", bundlePathInSandbox);
        env.put("CURL_CA_BUNDLE", bundlePathInSandbox);
        env.put("NODE_EXTRA_CA_CERTS", bundlePathInSandbox);
        return env;
    }

    @Override
    public String toString() {
        SocketAddress a = engine.address();
        return "EgressProxy[" + name + ", " + (a == null ? "not started" : a) + ", " + policy + "]";
    }

    /**
     * Configures a proxy. {@link #policy} and one {@code listen} are required.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private EgressPolicy policy;
        private EgressResolver resolver = EgressResolver.system();
        private EgressLimits limits = EgressLimits.defaults();
        private long maxBytesAtMost = Long.MAX_VALUE;
        private SocketAddress listen;
        private KeyStore upstreamTrust;
        private final Set<Integer> domainPorts = new LinkedHashSet<>(Set.of(80, 443));
        private final Map<String, InetSocketAddress> routes = new LinkedHashMap<>();
        private String name = "egress";
        private Duration caValidity = Duration.ofDays(30);

        private Builder() {
        }

        /**
         * The policy to enforce, fail-closed. Required.
         *
         * @param policy not null
         * @return this builder
         */
        public Builder policy(EgressPolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /**
         * How names are resolved; default the system's resolver.
         *
         * @param resolver not null
         * @return this builder
         */
        public Builder resolver(EgressResolver resolver) {
            this.resolver = Objects.requireNonNull(resolver, "resolver");
            return this;
        }

        /**
         * Sets the proxy's connection, byte and time limits. Default {@link EgressLimits#defaults()}.
         *
         * @param limits not null
         * @return this builder
         */
        public Builder limits(EgressLimits limits) {
            this.limits = Objects.requireNonNull(limits, "limits");
            return this;
        }

        /**
         * Caps the bytes this proxy relays at {@code bytes}, below whatever {@link #limits(EgressLimits)}
         * sets (the lower of the two applies, whichever is set first): for a runner that shares one
         * sandbox's network allowance among the proxies it starts for it, one after another.
         *
         * @param bytes positive
         * @return this builder
         * @throws IllegalArgumentException when not positive
         */
        public Builder maxBytesAtMost(long bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("maxBytesAtMost must be positive: " + bytes);
            }
            this.maxBytesAtMost = bytes;
            return this;
        }

        /**
         * Listens on a unix socket (the channel a runner bind-mounts into the sandbox). The path must not exist.
         *
         * @param path the socket's path; not null
         * @return this builder
         */
        public Builder listen(UnixDomainSocketAddress path) {
            this.listen = Objects.requireNonNull(path, "path");
            return this;
        }

        /**
         * Listens on TCP, for emulators and tests: give a loopback address (port 0 for any free port).
         *
         * @param address not null
         * @return this builder
         */
        public Builder listen(InetSocketAddress address) {
            this.listen = Objects.requireNonNull(address, "address");
            return this;
        }

        /**
         * The roots that verify brokered servers' certificates instead of the JVM's default trust
         * store (for tests with their own CA, or a corporate root).
         *
         * @param trustStore not null
         * @return this builder
         */
        public Builder upstreamTrustStore(KeyStore trustStore) {
            this.upstreamTrust = Objects.requireNonNull(trustStore, "trustStore");
            return this;
        }

        /**
         * The ports a host admitted by a domain rule may use; default 80 and 443. Replaces the set.
         *
         * @param ports each from 1 to 65535
         * @return this builder
         * @throws IllegalArgumentException when a port is out of range
         */
        public Builder domainPorts(Collection<Integer> ports) {
            domainPorts.clear();
            for (int p : ports) {
                if (p < 1 || p > 65535) {
                    throw new IllegalArgumentException("not a port: " + p);
                }
                domainPorts.add(p);
            }
            return this;
        }

        /**
         * For tests and emulators: a request to {@code host:port} goes to {@code target} instead of
         * the resolver's answer. The name and port are still checked against the policy (and the
         * target against denied CIDRs), but the target is exempt from the non-public-address check:
         * the application chose it, not DNS. Lets {@code allow=allowed.test} reach a loopback canary
         * at {@code http://allowed.test/}.
         *
         * @param host the host name as the sandbox asks for it, matched ignoring case and a trailing dot
         * @param port the port as the sandbox asks for it
         * @param target a resolved address; not null
         * @return this builder
         * @throws IllegalArgumentException when the target is unresolved
         */
        public Builder route(String host, int port, InetSocketAddress target) {
            Objects.requireNonNull(target, "target");
            if (target.isUnresolved()) {
                throw new IllegalArgumentException("a route target must be an address, not a name: " + target);
            }
            String h = host.toLowerCase(Locale.ROOT);
            routes.put((h.endsWith(".") ? h.substring(0, h.length() - 1) : h) + ":" + port, target);
            return this;
        }

        /**
         * A name for threads and log lines (a sandbox id, say); default {@code egress}.
         *
         * @param name not null
         * @return this builder
         */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /**
         * How long the CA and leaf certificates are valid; default 30 days (they are made per proxy).
         *
         * @param validity not null
         * @return this builder
         */
        public Builder caValidity(Duration validity) {
            this.caValidity = Objects.requireNonNull(validity, "validity");
            return this;
        }

        /**
         * Builds the proxy, with a fresh CA of its own when the policy has header rules.
         *
         * @return a proxy, not yet listening: call {@link EgressProxy#start()}
         * @throws IllegalStateException when the policy or the address is missing, or no TLS context can be
         *     made
         */
        public EgressProxy build() {
            if (policy == null) {
                throw new IllegalStateException("an egress proxy needs a policy");
            }
            if (listen == null) {
                throw new IllegalStateException("an egress proxy needs an address to listen on");
            }
            if (maxBytesAtMost < limits.maxBytes()) {
                limits = limits.toBuilder().maxBytes(maxBytesAtMost).build();
            }
            SSLSocketFactory tls;
            try {
                SSLContext ctx;
                if (upstreamTrust == null) {
                    ctx = SSLContext.getDefault();
                } else {
                    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                    tmf.init(upstreamTrust);
                    ctx = SSLContext.getInstance("TLS");
                    ctx.init(null, tmf.getTrustManagers(), null);
                }
                tls = ctx.getSocketFactory();
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("no TLS context for the upstream connections", e);
            }
            CertificateAuthority ca = policy.headerRules().isEmpty() ? null
                    : CertificateAuthority.create("sandbox4j egress " + name, caValidity);
            return new EgressProxy(this, ca, tls);
        }

        /**
         * Builds the proxy and starts it.
         *
         * @return {@code build().start()}
         * @throws IllegalStateException as {@link #build()} does
         * @throws UncheckedIOException as {@link EgressProxy#start()} does
         */
        public EgressProxy start() {
            return build().start();
        }
    }
}
