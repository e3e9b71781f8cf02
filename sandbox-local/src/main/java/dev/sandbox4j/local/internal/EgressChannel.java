package dev.sandbox4j.local.internal;

import dev.sandbox4j.egress.SandboxForwarder;
import dev.sandbox4j.policy.EgressPolicy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;

/**
 * One proxied sandbox's route out: the {@link EgressGateway} listening on {@code root/egress/<name>},
 * and, with header rules, its CA written next to it ({@link SandboxForwarder#CA_FILE}, and the system
 * CAs followed by it in {@link SandboxForwarder#CA_BUNDLE_FILE}). The CA's key stays in the JVM.
 */
final class EgressChannel implements AutoCloseable {
    /** The longest unix socket path used: sun_path is 108 bytes with its NUL, and the JDK takes no more than 106. */
    static final int MAX_SOCKET_PATH = 100;

    private final EgressGateway gateway;
    private final String socketName;
    private final boolean ca;

    /** Where a socket goes when the sandbox's own directory is too deep for a unix socket path. */
    static final Path SHORT_BASE = Path.of("/tmp");

    private final Path dir;
    private final boolean ownDir;

    private EgressChannel(EgressGateway gateway, Path dir, boolean ownDir, String socketName, boolean ca) {
        this.gateway = gateway;
        this.dir = dir;
        this.ownDir = ownDir;
        this.socketName = socketName;
        this.ca = ca;
    }

    /** As {@link #open(LocalSettings, Path, String, EgressPolicy, long)} with no byte cap of the sandbox's own. */
    static EgressChannel open(LocalSettings s, Path root, String socketName, EgressPolicy policy) throws IOException {
        return open(s, root, socketName, policy, Long.MAX_VALUE);
    }

    /** Starts the sandbox's gateway for {@code policy}, relaying at most {@code maxBytes} (positive). */
    static EgressChannel open(LocalSettings s, Path root, String socketName, EgressPolicy policy, long maxBytes)
            throws IOException {
        EgressGateway.Factory f = s.egressGateways();
        if (f == null) {
            throw new IllegalStateException("no egress proxy is configured");
        }
        Path dir = SandboxDirs.egressDir(s, root);
        boolean ownDir = false;
        if (!fits(dir.resolve(socketName))) {
            // a deep work root: a directory of this channel's own under /tmp (0700, the drop uid's), removed on close
            dir = SandboxDirs.shortEgressDir(s, SHORT_BASE);
            ownDir = true;
        }
        Path socket = dir.resolve(socketName);
        if (!fits(socket)) {
            if (ownDir) {
                SandboxDirs.delete(dir);
            }
            throw new IOException("the proxy socket path " + socket + " is longer than a unix socket path may be ("
                    + MAX_SOCKET_PATH + " bytes)");
        }
        EgressGateway g;
        try {
            g = f.start(policy, socket, maxBytes);
        } catch (IOException | RuntimeException | Error e) {
            if (ownDir) {
                SandboxDirs.delete(dir);
            }
            throw e;
        }
        try {
            // bwrap and the forwarder run as the drop uid; the directory (0700, that uid's) keeps others out
            Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw-rw-"));
            Optional<String> pem = g.caCertificatePem();
            if (pem.isPresent()) {
                SandboxDirs.writeEgressFile(dir, SandboxForwarder.CA_FILE, pem.get());
                SandboxDirs.writeEgressFile(dir, SandboxForwarder.CA_BUNDLE_FILE, SandboxForwarder.caBundle(pem.get()));
            }
            return new EgressChannel(g, dir, ownDir, socketName, pem.isPresent());
        } catch (IOException | RuntimeException | Error e) {
            g.close();
            if (ownDir) {
                SandboxDirs.delete(dir);
            }
            throw e;
        }
    }

    private static boolean fits(Path socket) {
        return socket.toString().getBytes(StandardCharsets.UTF_8).length <= MAX_SOCKET_PATH;
    }

    /** The host directory bound at {@link SandboxForwarder#MOUNT}. */
    Path hostDir() {
        return dir;
    }

    /** The socket's path inside the sandbox. */
    String sandboxSocket() {
        return SandboxForwarder.MOUNT + "/" + socketName;
    }

    boolean hasCa() {
        return ca;
    }

    /** The bytes its gateway relayed so far, both directions together. */
    long bytesRelayed() {
        return gateway.bytesRelayed();
    }

    @Override
    public void close() {
        try {
            gateway.close();
        } finally {
            if (ownDir) {
                try {
                    SandboxDirs.delete(dir);
                } catch (IOException e) {
                    // a dead socket and a public certificate in a 0700 directory: nothing secret is left
                }
            }
        }
    }
}
