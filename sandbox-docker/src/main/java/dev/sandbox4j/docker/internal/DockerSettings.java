package dev.sandbox4j.docker.internal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import okhttp3.HttpUrl;

/**
 * The Docker runner's settings, as the builder made them. Sizes in bytes.
 *
 * @param endpoint where the engine listens
 * @param image the image every sandbox starts from (never pulled by the runner)
 * @param user the uid:gid code runs as
 * @param initUser the uid:gid of the container's first process and of the kill helper (root in the container with
 *     CAP_KILL only: another user, so code cannot signal it, and the one the engine gives the capability to)
 * @param allowAllNetwork the network mode for allow-all egress ({@code bridge} unless set)
 * @param memoryBytes memory per sandbox when Limits.memoryMib is unset
 * @param diskBytes the work directory, /tmp and /dev/shm together, when Limits.diskMib is unset
 * @param pidsLimit processes per sandbox
 * @param argvLimitBytes code longer than this goes by file
 * @param requestTimeout the deadline of each control call
 * @param killGrace how long a killed exec may take to end before the container itself is killed
 */
public record DockerSettings(Endpoint endpoint, String image, String user, String initUser, String allowAllNetwork,
        long memoryBytes, long diskBytes, int pidsLimit, int argvLimitBytes, Duration requestTimeout, Duration killGrace) {
    public static final long MIB = 1024L * 1024;
    /** Where code runs and files go: a sized tmpfs volume, kept across the execs of a session. */
    public static final String WORK_DIR = "/sandbox";

    /** The numeric uid of {@link #user()}. */
    public String uid() {
        return user.split(":", 2)[0];
    }

    /** The numeric gid of {@link #user()} (the uid when none is given). */
    public String gid() {
        String[] p = user.split(":", 2);
        return p.length > 1 ? p[1] : p[0];
    }

    /**
     * How the runner reaches the engine: a Unix socket (the usual, and Docker Desktop's, Colima's and
     * Podman's) or plain TCP.
     *
     * @param socket the Unix socket, or null for TCP
     * @param baseUrl the HTTP base URL (a placeholder host for a socket)
     * @param described as the user wrote it, for messages
     */
    public record Endpoint(Path socket, HttpUrl baseUrl, String described) {
        @Override
        public String toString() {
            return described;
        }

        public static Endpoint unix(Path socket) {
            return new Endpoint(socket, HttpUrl.get("http://docker/"), "unix://" + socket);
        }

        /**
         * Parses a {@code DOCKER_HOST} value: {@code unix:///path} or {@code tcp://host:port} (plain HTTP).
         *
         * @throws IllegalArgumentException for anything else, saying what works
         */
        public static Endpoint parse(String dockerHost) {
            String v = dockerHost.trim();
            String lower = v.toLowerCase(Locale.ROOT);
            if (lower.startsWith("unix://")) {
                return unix(Path.of(v.substring("unix://".length())));
            }
            if (lower.startsWith("tcp://") || lower.startsWith("http://")) {
                HttpUrl u = HttpUrl.parse("http://" + v.substring(v.indexOf("://") + 3));
                if (u == null) {
                    throw new IllegalArgumentException("DOCKER_HOST '" + v + "' is not tcp://host:port");
                }
                return new Endpoint(null, u, v);
            }
            if (lower.startsWith("npipe://")) {
                throw new IllegalArgumentException("DOCKER_HOST " + v + ": Windows named pipes are not supported; in Docker Desktop"
                        + " enable \"Expose daemon on tcp://localhost:2375 without TLS\" and set DOCKER_HOST=tcp://localhost:2375,"
                        + " or run the application inside WSL2");
            }
            throw new IllegalArgumentException("DOCKER_HOST '" + v + "' is not supported: use unix:///path/to/docker.sock"
                    + " or tcp://host:port (plain HTTP; for TLS or ssh:// use an SSH tunnel to the socket)");
        }

        /**
         * {@code DOCKER_HOST} when set (TLS refused), else the first socket that exists among the usual places:
         * {@code /var/run/docker.sock}, Docker Desktop's {@code ~/.docker/run/docker.sock}, Colima's
         * {@code ~/.colima/default/docker.sock}, Podman's {@code $XDG_RUNTIME_DIR/podman/podman.sock}
         * (defaulting to the first when none exists, so the error names it).
         */
        public static Endpoint fromEnv(Map<String, String> env) {
            String host = env.get("DOCKER_HOST");
            if (host != null && !host.isBlank()) {
                String tls = env.get("DOCKER_TLS_VERIFY");
                if (tls != null && !tls.isBlank() && !tls.equals("0")) {
                    throw new IllegalArgumentException("DOCKER_TLS_VERIFY is set: the Docker runner speaks plain HTTP only;"
                            + " reach a remote engine through an SSH tunnel to its socket");
                }
                return parse(host);
            }
            for (Path p : candidates(env)) {
                if (Files.exists(p)) {
                    return unix(p);
                }
            }
            return unix(candidates(env).get(0));
        }

        static List<Path> candidates(Map<String, String> env) {
            List<Path> l = new ArrayList<>();
            l.add(Path.of("/var/run/docker.sock"));
            String home = env.getOrDefault("HOME", System.getProperty("user.home"));
            if (home != null && !home.isBlank()) {
                l.add(Path.of(home, ".docker", "run", "docker.sock"));
                l.add(Path.of(home, ".colima", "default", "docker.sock"));
                l.add(Path.of(home, ".rd", "docker.sock"));
            }
            String xdg = env.get("XDG_RUNTIME_DIR");
            if (xdg != null && !xdg.isBlank()) {
                l.add(Path.of(xdg, "podman", "podman.sock"));
                l.add(Path.of(xdg, "docker.sock"));
            }
            return l;
        }
    }
}
