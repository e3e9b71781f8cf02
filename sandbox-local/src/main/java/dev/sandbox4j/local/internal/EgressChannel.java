package dev.sandbox4j.local.internal;

import dev.sandbox4j.policy.EgressPolicy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;

/**
 * One proxied sandbox's route out: the {@link EgressGateway} listening on {@code root/egress/<name>},
 * and, with header rules, its CA written next to it ({@link EgressForwarder#CA_FILE}, and the system
 * CAs followed by it in {@link EgressForwarder#CA_BUNDLE_FILE}). The CA's key stays in the JVM.
 */
final class EgressChannel implements AutoCloseable {
    /** The longest unix socket path the kernel takes (sun_path is 108 bytes with its NUL). */
    static final int MAX_SOCKET_PATH = 107;
    private static final Path SYSTEM_CAS = Path.of("/etc/ssl/certs/ca-certificates.crt");

    private final EgressGateway gateway;
    private final String socketName;
    private final boolean ca;

    private EgressChannel(EgressGateway gateway, String socketName, boolean ca) {
        this.gateway = gateway;
        this.socketName = socketName;
        this.ca = ca;
    }

    static EgressChannel open(LocalSettings s, Path root, String socketName, EgressPolicy policy) throws IOException {
        EgressGateway.Factory f = s.egressGateways();
        if (f == null) {
            throw new IllegalStateException("no egress proxy is configured");
        }
        Path dir = SandboxDirs.egressDir(s, root);
        Path socket = dir.resolve(socketName);
        if (socket.toString().getBytes(StandardCharsets.UTF_8).length > MAX_SOCKET_PATH) {
            throw new IOException("the proxy socket path " + socket + " is longer than a unix socket path may be ("
                    + MAX_SOCKET_PATH + " bytes): choose a shorter work root");
        }
        EgressGateway g = f.start(policy, socket);
        try {
            // bwrap and the forwarder run as the drop uid; the directory (0700, that uid's) keeps others out
            Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw-rw-"));
            Optional<String> pem = g.caCertificatePem();
            if (pem.isPresent()) {
                String own = pem.get().endsWith("\n") ? pem.get() : pem.get() + "\n";
                String system = Files.isReadable(SYSTEM_CAS) ? Files.readString(SYSTEM_CAS, StandardCharsets.UTF_8) : "";
                if (!system.isEmpty() && !system.endsWith("\n")) {
                    system += "\n";
                }
                SandboxDirs.writeEgressFile(dir, EgressForwarder.CA_FILE, own);
                SandboxDirs.writeEgressFile(dir, EgressForwarder.CA_BUNDLE_FILE, system + own);
            }
            return new EgressChannel(g, socketName, pem.isPresent());
        } catch (IOException | RuntimeException e) {
            g.close();
            throw e;
        }
    }

    /** The socket's path inside the sandbox. */
    String sandboxSocket() {
        return EgressForwarder.MOUNT + "/" + socketName;
    }

    boolean hasCa() {
        return ca;
    }

    @Override
    public void close() {
        gateway.close();
    }
}
