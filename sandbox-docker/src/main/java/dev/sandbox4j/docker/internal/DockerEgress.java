package dev.sandbox4j.docker.internal;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.egress.EgressProxy;
import dev.sandbox4j.egress.NetworkAllowance;
import dev.sandbox4j.egress.SandboxForwarder;
import dev.sandbox4j.policy.EgressPolicy;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The route out of a Docker sandbox whose egress is a list: an {@link EgressProxy} in this JVM listening
 * on a unix socket in a host directory of its own, that directory bind-mounted read-only into a container
 * on network {@code none} (loopback only), and the {@link SandboxForwarder} run by the container's first
 * process (root in the container, holding only {@code CAP_KILL}; a uid the code's is not, so the kill of
 * the code's processes after each exec leaves it alone) before the {@code sleep} that keeps the container
 * alive. The proxy variables (and, with header rules, the CA variables) are in the container's
 * environment, so every exec has them.
 *
 * <p>A sandbox whose code gets a list after a setup under another egress has the channel from the create on
 * (the mount and the forwarder cannot be added later), its proxy enforcing the setup's egress until the
 * lock-down: {@link #stopProxy} closes that proxy and every connection it holds, {@link #lockDown} starts the
 * code's on the same socket path (the forwarder connects anew per connection), or nothing for deny-all.
 *
 * <p>A sandbox's network allowance ({@code Limits.networkMib}) is one {@link NetworkAllowance} for the channel:
 * each proxy is capped at what is left of it, {@link #stopProxy} counts what the closed one relayed before
 * {@link #lockDown} starts the next, and when nothing is left no proxy starts (the forwarder's connects fail).
 *
 * <p>The bind mount's source is a path on the machine of this JVM: it works where the engine runs on
 * the same kernel (Linux, including rootless Docker, whose container root is the JVM's user). It does
 * not work with a remote engine ({@code tcp://}), nor where the engine's container root cannot open a
 * socket of this user's 0700 directory (user-namespace remapping). On Docker Desktop (macOS, Windows)
 * the engine runs in a VM and host directories are shared into it by the Desktop's file sharing; whether
 * a unix socket made on the host can be connected to from inside the VM through that share is not tested
 * here. Where it cannot, the forwarder's connect fails and every request of the code fails with a
 * closed connection: nothing goes out another way.
 */
final class DockerEgress implements AutoCloseable {
    static final String SOCKET = "proxy.sock";
    /** Written by the first process once the forwarder listens; root's, in the sticky /dev/shm. */
    static final String READY = "/dev/shm/.sandbox4j-egress-ready";
    private static final int READY_ROUNDS = 600;

    /**
     * The first process: the forwarder (which returns once it listens; its child stays), the ready mark,
     * then the sleep of the lifetime. $1 the forwarder's source, $2 its port, $3 the socket, $4 the seconds.
     */
    static final String FIRST = "python3 -I -S -c \"$1\" \"$2\" \"$3\" || exit 125; : > " + READY + "; exec sleep \"$4\"";
    /** Run as the supervisor after start: waits for the ready mark (at most about 30 s), 1 if the forwarder died. */
    static final String AWAIT = "n=0; while [ ! -e " + READY + " ]; do n=$((n+1)); [ $n -ge " + READY_ROUNDS
            + " ] && exit 1; sleep 0.05; done";

    private final Path dir;
    private final java.util.function.Consumer<EgressProxy.Builder> setup;
    /** Whether the container's environment points at the CA bundle (a policy of the sandbox has header rules). */
    private final boolean ca;
    private final NetworkAllowance allowance;
    // guarded by this; null once closed (or, after a lock-down to deny-all, with nothing listening)
    private EgressProxy proxy;

    private DockerEgress(Path dir, java.util.function.Consumer<EgressProxy.Builder> setup, boolean ca,
            NetworkAllowance allowance) {
        this.dir = dir;
        this.setup = setup;
        this.ca = ca;
        this.allowance = allowance;
    }

    /** True when the egress is neither deny-all nor allow-all: the container gets the proxy as its only way out. */
    static boolean proxied(EgressPolicy egress) {
        return !egress.isDenyAll() && !egress.isAllowAll();
    }

    /**
     * Whether a sandbox made for {@code setupEgress} that runs its code under {@code codeEgress} needs the
     * channel: either is a list (a lock-down to a list needs the socket mount and the forwarder from the
     * create on, since neither can be added to a live container).
     */
    static boolean needed(EgressPolicy setupEgress, EgressPolicy codeEgress) {
        return proxied(setupEgress) || proxied(codeEgress);
    }

    /**
     * Starts the proxy for {@code policy} (deny-all and allow-all included: a sandbox whose code gets a list
     * after a setup under one of them has its channel from the start) in a new host directory (0700, this
     * JVM's user).
     *
     * @param caVariables whether the container gets the CA variables (the setup's or the code's policy has
     *        header rules); the bundle then holds this machine's CAs alone while the proxy has no CA of its own
     * @param allowance the sandbox's network allowance, shared by its proxies (nothing counted yet)
     */
    static DockerEgress open(java.util.function.Consumer<EgressProxy.Builder> setup, EgressPolicy policy,
            boolean caVariables, NetworkAllowance allowance) throws IOException {
        Path dir = Files.createTempDirectory("sandbox4j-egress-", PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwx------")));
        DockerEgress c = new DockerEgress(dir, setup, caVariables, allowance);
        try {
            c.listen(policy);
            return c;
        } catch (IOException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /**
     * A proxy for {@code policy} on the channel's socket, capped at what is left of the allowance, its CA files
     * written. Called with no proxy listening and something left.
     */
    private synchronized void listen(EgressPolicy policy) throws IOException {
        if (allowance.spent()) {
            throw new IllegalStateException("nothing is left of the network allowance: no proxy starts");
        }
        Path socket = dir.resolve(SOCKET);
        // the old proxy's socket file stays behind it: a path that exists is refused by the bind
        Files.deleteIfExists(socket);
        EgressProxy.Builder b = EgressProxy.builder();
        setup.accept(b);
        if (allowance.limited()) {
            b.maxBytesAtMost(allowance.left()); // the sandbox's own allowance, when lower than the runner's limit
        }
        EgressProxy p = b.policy(policy).listen(UnixDomainSocketAddress.of(socket)).name(dir.getFileName().toString()).build();
        try {
            p.start();
        } catch (java.io.UncheckedIOException e) {
            throw new IOException("the egress proxy could not listen on " + socket + ": " + e.getCause().getMessage(), e);
        }
        proxy = p;
        // the container's root connects; the directory keeps every other host user out
        Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw-rw-"));
        Optional<String> pem = p.caCertificatePem();
        Files.deleteIfExists(dir.resolve(SandboxForwarder.CA_FILE));
        if (pem.isPresent()) {
            writeReadable(dir.resolve(SandboxForwarder.CA_FILE), pem.get());
            writeReadable(dir.resolve(SandboxForwarder.CA_BUNDLE_FILE), SandboxForwarder.caBundle(pem.get()));
        } else if (ca) {
            // the variables point here from the create on: the machine's CAs alone until a proxy has a CA
            writeReadable(dir.resolve(SandboxForwarder.CA_BUNDLE_FILE), SandboxForwarder.caBundle(""));
        }
    }

    /**
     * The lock-down's half on the host: stops the proxy of the setup's policy, closing every connection it
     * holds at once (whatever a setup process opened ends here), counts what it relayed against the
     * allowance, and deletes its socket, so until {@link #lockDown} starts the next one nothing listens
     * behind the forwarder.
     */
    synchronized void stopProxy() {
        if (proxy != null) {
            try {
                allowance.retire(proxy);
            } finally {
                proxy = null;
            }
        }
        try {
            Files.deleteIfExists(dir.resolve(SOCKET));
        } catch (IOException e) {
            // the proxy is closed: a socket file left behind reaches no listener
        }
    }

    /**
     * Starts the proxy of the code's policy on the same socket (the forwarder connects anew for every
     * connection, so the code's requests meet it), after {@link #stopProxy}, capped at what the setup's
     * proxy left of the allowance; a deny-all policy, or an allowance with nothing left, starts nothing: the
     * forwarder's connects then fail.
     */
    synchronized void lockDown(EgressPolicy policy) throws IOException {
        stopProxy();
        if (!policy.isDenyAll() && !allowance.spent()) {
            listen(policy);
        }
    }

    /** The sandbox's network allowance, what its proxies relayed counted in it once they closed. */
    NetworkAllowance allowance() {
        return allowance;
    }

    /** The policy the proxy enforces now, or null when none listens. */
    synchronized EgressPolicy policy() {
        return proxy == null ? null : proxy.policy();
    }

    private static void writeReadable(Path f, String content) throws IOException {
        Files.writeString(f, content, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r--r--"));
    }

    /**
     * Puts the channel into a create body made by {@link ContainerSpec#body}: mount, variables, first process.
     * The network mode is the body's ({@code none} for a list or deny-all; the allow-all network for an
     * allow-all setup before a lock-down to a list, which takes the container off it).
     */
    void apply(ObjectNode body, long lifetimeSeconds) {
        ObjectNode host = (ObjectNode) body.get("HostConfig");
        ObjectNode bind = ((ArrayNode) host.get("Mounts")).addObject();
        bind.put("Type", "bind").put("Source", dir.toString()).put("Target", SandboxForwarder.MOUNT).put("ReadOnly", true);
        ArrayNode env = (ArrayNode) body.get("Env");
        // before the spec's own variables would be better, but Env is a list where the last one wins: the
        // spec's are already in it, so only names the spec did not set are added
        Map<String, String> vars = new java.util.LinkedHashMap<>(SandboxForwarder.proxyEnvironment());
        if (ca) {
            vars.putAll(SandboxForwarder.caEnvironment());
        }
        java.util.Set<String> present = new java.util.HashSet<>();
        env.forEach(n -> present.add(n.asText().split("=", 2)[0]));
        vars.forEach((k, v) -> {
            if (!present.contains(k)) {
                env.add(k + "=" + v);
            }
        });
        ArrayNode cmd = body.putArray("Cmd");
        List.of("/bin/sh", "-c", FIRST, "sandbox4j-first", SandboxForwarder.SOURCE, Integer.toString(SandboxForwarder.PORT),
                SandboxForwarder.MOUNT + "/" + SOCKET, Long.toString(lifetimeSeconds)).forEach(cmd::add);
    }

    /** Stops the proxy (its connections at once) and removes the host directory. */
    @Override
    public void close() {
        try {
            stopProxy();
        } finally {
            deleteDir(dir);
        }
    }

    private static void deleteDir(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            // a temp directory holding a dead socket and a certificate: nothing secret, left to the OS
        }
    }
}
