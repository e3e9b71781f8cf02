package dev.sandbox4j.docker;

import dev.sandbox4j.api.ForwardingSandboxRunner;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.SweepRequest;
import dev.sandbox4j.api.SweepResult;
import dev.sandbox4j.spi.RunnerBuilder;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import dev.sandbox4j.docker.internal.DockerDriver;
import dev.sandbox4j.docker.internal.DockerHandle;
import dev.sandbox4j.docker.internal.DockerSettings;
import dev.sandbox4j.policy.Capabilities;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Runs code in a local Docker container: the embedded runner where bubblewrap is not available (macOS and
 * Windows with Docker Desktop, Colima or Podman; Linux with an engine).
 *
 * <pre>{@code
 * try (SandboxRunner docker = DockerSandboxRunner.fromEnv()) {   // DOCKER_HOST, SANDBOX4J_DOCKER_IMAGE
 *     RunResult r = docker.run(RunRequest.python("print(6 * 7)"));
 * }
 * }</pre>
 *
 * <p>One container per sandbox, kept between the {@code exec} calls of a session and force-removed with
 * its volume at teardown (retried; a one-shot's, below, removed without force). It is created in one call with everything decided: no network at all
 * for deny-all ({@code none}), the configured network for allow-all ({@code bridge} by default); a
 * read-only root file system; every capability dropped but {@code CAP_KILL} (which only the runner's root kill
 * helper holds), {@code no-new-privileges} and the runner's own seccomp profile (no io_uring, no ptrace, no
 * 32-bit calls, sockets only of the families {@code AF_UNIX}, {@code AF_INET}, {@code AF_INET6} and
 * {@code AF_NETLINK}: no vsock); code runs as a non-root user ({@code 1000:1000} by default); pids, memory (no swap) and
 * CPU from {@code Limits}; the work directory {@value DockerSettings#WORK_DIR} a sized tmpfs volume kept
 * across execs, with {@code /tmp} and {@code /dev/shm} inside the same disk bound; labels with the run id.
 * The container's first process is the engine's init running {@code sleep <lifetime>} as root in the container
 * (with {@code CAP_KILL} alone; the engine gives an exec the container's capabilities only then), so
 * the engine removes the container when the lifetime ends even if this JVM is gone. Domain and CIDR lists go
 * through an egress proxy in this JVM: the container is on {@code none} with the proxy's unix socket
 * bind-mounted in and a forwarder on its loopback, as with the local runner.
 *
 * <p>A network allowance ({@code Limits.networkMib}, {@code Capabilities.Limit.NETWORK}: the bytes a sandbox
 * sends and receives together over its whole life) is counted in these proxies, as with the local runner: the
 * first proxy relays at most the allowance; at the lock-down the setup's proxy is closed and what it relayed
 * counted before the code's starts with what is left (nothing left: no proxy, so no route out). A connection
 * that would pass it is closed, and every later request is refused. Allow-all, as the code's or the setup's
 * egress, puts the container on the allow-all network, past the proxy, so an allowance with it is refused
 * ({@code UnsupportedPolicyException}) before any engine call; deny-all moves nothing. The allowance is this
 * JVM's count, not the engine's: an attach refuses one with allow-all, as a create does, and a deny-all
 * container holds any (an attached container never has a list's proxy, which stays with its creator).
 *
 * <p>Lock-down after trusted setup ({@code Capabilities.Egress.LIVE_UPDATE}; a setup egress other than the
 * code's): the setup commands run under the setup egress; then, before the first line of the code, the kill
 * helper (below) SIGKILLs every process of the code's uid (which the setup ran as) until none is left, or the
 * container is killed; the proxy of the setup's policy is closed with every connection it holds; a container
 * created on the allow-all network is disconnected from every network it is on; the engine's inspect must then
 * report it running on no network but {@code none}; and a proxy for the code's list starts on the same socket
 * (nothing listens for deny-all). Any step that fails tears the sandbox down before code runs. Refused before
 * any call: a code egress of allow-all after another setup egress (no engine gives a container on {@code none}
 * an interface), and an allow-all setup egress on a network the engine cannot disconnect ({@code host},
 * {@code container:<id>}); use a domain or CIDR list as the setup egress there, which goes through the proxy.
 *
 * <p>Sessions across requests: {@link dev.sandbox4j.api.Sandbox#detach()} releases the container without
 * removing it, and {@link #attach(String, dev.sandbox4j.api.SandboxSpec) attach(id, expected)} (the
 * container's name, {@code sandbox4j-<run id>}, or its engine id) takes it back after checking the labels,
 * that it runs, and what the engine itself reports of its policy against a create for {@code expected}:
 * network mode, the init's {@code sleep} and the expiry label against the engine's creation time, the
 * read-only root, dropped capabilities, {@code no-new-privileges}, the users, image, limits and
 * environment, and that the only mount is its own work volume (a tmpfs volume of the expected size with
 * the same run id). Any difference is refused naming the rule, and the container is left alone.
 *
 * <p>What ends an exec's processes: the Engine API cannot kill an exec, and Docker Desktop hides container
 * PIDs from the host, so every command runs as the one uid that only code uses. When the exec's stream ends
 * (the command returned, or the code killed the wrapper that ran it, after which the engine closes the
 * stream), at budget expiry, at the output cap, when the stream breaks and on an interrupt, the runner
 * starts a kill helper: an exec as root in the container, holding {@code CAP_KILL}, that the code (another
 * uid, without capabilities, {@code ptrace} denied) can neither signal nor alter. It SIGKILLs every process
 * of the code's uid (double forks, {@code setsid}, fork bombs under the pids limit) until {@code /proc}
 * shows none; when it cannot show that (it fails, cannot start, or finds survivors after its rounds), the
 * container is killed and the sandbox is gone (fail closed). So nothing outlives an exec, as with the local
 * runner.
 *
 * <p>A one-shot {@link #run run()} that needs no session (no input files, setup commands, lock-down or files
 * to collect, deny-all or allow-all egress, code that fits the command line) runs its code as its container's
 * own process, the way {@code docker run} does ({@code SandboxDriver.runsAsFirstProcess}): the container is
 * created with the code as its command (under the engine's init, as the code's user, with {@code timeout -s
 * KILL <lifetime>} in front so the engine's side ends it at the lifetime; every other setting as above, but no
 * {@code CAP_KILL}, which only the kill helper used, and log driver {@code none}); then its output is attached
 * before its start, the start is sent once (a lost answer counts as code that may have run), and its exit
 * code is the container's ({@code wait}). Five Engine API calls: create, attach, start, wait, and a removal
 * without force (the container has exited: nothing is killed; one the engine says still runs falls back to the
 * forced removal). The budget, the output cap and an interrupt kill the whole container: its init is its
 * PID 1, so every process of the code ends with it. Such a container is not {@code AutoRemove} (its exit code
 * is read after it stopped); when this JVM dies mid-run, its lifetime stops it and the gone-owner sweep below
 * removes it. {@link Builder#oneShotAsContainerProcess(boolean) oneShotAsContainerProcess(false)} runs every
 * one-shot's code as an exec in a session's container instead.
 *
 * <p>Leftovers of a JVM that died without teardown (SIGKILL, a crash): each container and work volume is
 * labelled with its creating JVM (host, the start of pid 1, pid namespace, pid and start time); the
 * runner's first contact with the engine, and every {@link #sweep}, removes those whose creator is on this
 * host, boot and pid namespace and provably no longer runs. A container without this library's labels, one
 * whose creator may be alive or lives elsewhere, and one that was detached (another JVM may attach it) are
 * never removed by it; their lifetime ends them.
 *
 * <p>The client: the Engine API is HTTP/1.1 with JSON over the engine's Unix socket, so this module speaks
 * it through the transport the REST adapters use ({@code sandbox-http}, on OkHttp and Jackson, with a small
 * socket adapter over the JDK's Unix-domain {@code SocketChannel}) rather than docker-java, whose core
 * brings Guava, Bouncy Castle and Commons libraries (several MiB) into every application and the CLI jar.
 * So the engine's calls get what the adapters' get: each request is put on the wire at most once (a
 * create, a start, an exec and a copy are never re-sent; lookups, kills and removals are retried), every
 * control call ends within {@link Builder#requestTimeout(Duration)}, an exec's stream within its budget
 * plus the kill grace and one request timeout (no read timeout: code may print nothing for its whole
 * budget), and the engine's error statuses map to the same exceptions (401/403
 * {@link dev.sandbox4j.api.exception.SandboxAuthenticationException}, 404 {@link dev.sandbox4j.api.exception.SandboxNotFoundException},
 * 429 {@link dev.sandbox4j.api.exception.SandboxRateLimitException}, 409 and 5xx retriable, a 5xx to a create or an
 * exec flagged as an unknown outcome). {@code DOCKER_HOST} may also be {@code tcp://host:port} (plain HTTP).
 *
 * <p>The image is never pulled: a missing one is an error naming the pull command. The default,
 * {@value #DEFAULT_IMAGE}, is a Debian slim image with Python 3.12, Node.js 22 and Bash; any image with
 * {@code python3}, {@code node}, {@code bash}, a POSIX {@code sh}, coreutils and GNU find works.
 *
 * <p>Security model: a container shares the host's kernel, like bubblewrap; a kernel bug is an escape.
 * That is weaker than the hosted providers' microVMs (E2B, Vercel, Daytona, Modal): use those for code you
 * have reason to distrust strongly.
 *
 * @since 0.1.0
 */
public final class DockerSandboxRunner extends ForwardingSandboxRunner<SandboxRunner> {
    // held here, not in the superclass's type: the public signature names no handle of the internal package
    private final ManagedSandboxRunner<DockerHandle> lifecycle;
    /** Docker's own variable: where the engine listens ({@code unix:///path} or {@code tcp://host:port}). */
    public static final String DOCKER_HOST_VARIABLE = "DOCKER_HOST";
    /** sandbox4j's own: the image to start sandboxes from. */
    public static final String IMAGE_VARIABLE = "SANDBOX4J_DOCKER_IMAGE";
    /**
     * sandbox4j's own: the image's languages, a comma list ({@code python,javascript,bash}) for {@code
     * Builder.languages}, or {@code probe} for {@code Builder.probeLanguages}; unset declares all three
     * (the default image has them).
     */
    public static final String LANGUAGES_VARIABLE = "SANDBOX4J_DOCKER_LANGUAGES";
    /** sandbox4j's own: the network mode for allow-all egress ({@code bridge} by default). */
    public static final String NETWORK_VARIABLE = "SANDBOX4J_DOCKER_NETWORK";
    /** The default image: Python 3.12, Node.js 22 and Bash on Debian slim, user 1000. */
    public static final String DEFAULT_IMAGE = "nikolaik/python-nodejs:python3.12-nodejs22-slim";

    private final DockerDriver driver;
    private final String description;

    private DockerSandboxRunner(ManagedSandboxRunner<DockerHandle> lifecycle, DockerDriver driver, String description) {
        super(lifecycle);
        this.lifecycle = lifecycle;
        this.driver = driver;
        this.description = description;
    }

    /**
     * A builder with the defaults: the engine from {@code DOCKER_HOST} or the usual socket, the default image.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Configured from the process environment; see {@link #fromEnv(Map)}.
     *
     * @return the runner
     */
    public static DockerSandboxRunner fromEnv() {
        return fromEnv(System.getenv());
    }

    /**
     * Configured from {@code DOCKER_HOST}, {@code SANDBOX4J_DOCKER_IMAGE}, {@code SANDBOX4J_DOCKER_NETWORK}
     * and {@code SANDBOX4J_DOCKER_LANGUAGES}.
     *
     * @param env the environment to read
     * @return the runner
     * @throws SandboxConfigurationException for a {@code DOCKER_HOST} it cannot use, saying what works
     */
    public static DockerSandboxRunner fromEnv(Map<String, String> env) {
        return builderFromEnv(env).build();
    }

    /**
     * The builder {@link #fromEnv(Map)} builds, for settings the environment does not carry (a lifecycle
     * listener, limits).
     *
     * @param env the environment to read
     * @return a builder configured from {@code env}
     */
    public static Builder builderFromEnv(Map<String, String> env) {
        Builder b = builder().env(env);
        String image = env.get(IMAGE_VARIABLE);
        if (image != null && !image.isBlank()) {
            b.image(image.trim());
        }
        String network = env.get(NETWORK_VARIABLE);
        if (network != null && !network.isBlank()) {
            b.allowAllNetwork(network.trim());
        }
        return b.languagesSetting(LANGUAGES_VARIABLE, env.get(LANGUAGES_VARIABLE));
    }

    /**
     * Checks now that the engine answers and holds the image (otherwise done at the first open).
     *
     * @throws SandboxConfigurationException saying what to start or pull
     * @throws InterruptedException when interrupted
     */
    public void verify() throws InterruptedException {
        driver.verify();
    }

    /**
     * The engine's version line once {@link #verify()} (or a first open) has reached it, else empty.
     *
     * @return e.g. {@code Engine 24.0.7 (API 1.43, linux/arm64)}
     */
    public java.util.Optional<String> engine() {
        return java.util.Optional.ofNullable(driver.engine());
    }

    /**
     * How each limit is enforced, one line per limit.
     *
     * @return human-readable lines
     */
    public List<String> enforcement() {
        DockerSettings s = driver.settings();
        return List.of("egress: network mode none (deny-all), none and the host egress proxy (domain and CIDR lists), or "
                        + s.allowAllNetwork() + " (allow-all); a lock-down after setup kills the setup's processes, replaces"
                        + " the proxy and disconnects the container from " + s.allowAllNetwork()
                        + (DockerDriver.disconnectable(s.allowAllNetwork()) ? "" : " (it cannot: a lock-down from allow-all is refused)"),
                "processes: pids limit " + s.pidsLimit() + " per container; code as uid " + s.user() + ", init as " + s.initUser(),
                "memory: cgroup limit per container, swap included, " + s.memoryBytes() / DockerSettings.MIB
                        + " MiB by default (Limits.memoryMib)",
                "vCPUs: CPU quota (NanoCpus) when Limits.vcpus is set",
                "disk: " + s.diskBytes() / DockerSettings.MIB + " MiB by default (Limits.diskMib) over the work directory"
                        + " (a tmpfs volume), /tmp and /dev/shm; the root file system is read-only",
                "privileges: all capabilities dropped but CAP_KILL (the root kill helper's; code holds none), no-new-privileges,"
                        + " the runner's seccomp profile (no io_uring, ptrace, 32-bit calls; sockets AF_UNIX, AF_INET,"
                        + " AF_INET6, AF_NETLINK only)",
                "exec end: a root kill helper SIGKILLs every process of the code's uid at end of stream, budget,"
                        + " output cap and interrupt, and checks /proc; the container is killed when it cannot show that",
                "lifetime: the container's init sleeps for the lifetime, then the engine removes it");
    }

    /**
     * Open sandboxes of this runner (for tests and metrics).
     *
     * @return the count
     */
    public int openSandboxes() {
        return driver.openSandboxes();
    }

    /**
     * What Docker enforces here: deny-all and allow-all egress, the domain and CIDR lists and header rules
     * of its egress proxy, the lock-down after setup, the network allowance, lifetime, memory, vCPUs and
     * the disk bound, and the languages of its image ({@code Builder.languages}, {@code probeLanguages}).
     */
    @Override
    public Capabilities capabilities() {
        return super.capabilities();
    }

    /**
     * Sweeps first what JVMs that are gone left on the engine (as at the runner's first contact with it:
     * containers and work volumes labelled with a creator on this host, boot and pid namespace that no
     * longer runs, never one without this library's labels, never a detached one), then as the request says
     * (which, for expired or all-of-owner, needs the runner's {@code owner}).
     */
    @Override
    public SweepResult sweep(SweepRequest request) {
        java.util.Objects.requireNonNull(request, "request");
        SweepResult gone;
        boolean interrupted = Thread.interrupted();
        try {
            gone = driver.sweepGoneOwners();
        } catch (InterruptedException e) {
            interrupted = true;
            gone = SweepResult.builder().build();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        SweepResult asked = super.sweep(request);
        List<String> destroyed = new java.util.ArrayList<>(gone.destroyed());
        destroyed.addAll(asked.destroyed());
        List<String> already = new java.util.ArrayList<>(gone.alreadyGone());
        already.addAll(asked.alreadyGone());
        List<String> failed = new java.util.ArrayList<>(gone.failed());
        failed.addAll(asked.failed());
        return SweepResult.builder().listed(gone.listed() + asked.listed()).destroyed(destroyed).alreadyGone(already)
                .failed(failed).build();
    }

    /** The lifecycle and, through it, the driver (for this module's tests). */
    ManagedSandboxRunner<DockerHandle> lifecycle() {
        return lifecycle;
    }

    DockerDriver driver() {
        return driver;
    }

    @Override
    public String toString() {
        return description;
    }

    /**
     * Settings for {@link DockerSandboxRunner}: the engine's and the container's here, the lifecycle's
     * (teardown, retries, owner, lost-create window, listener) from {@link RunnerBuilder}.
     *
     * @since 0.1.0
     */
    public static final class Builder extends RunnerBuilder<Builder> {
        private Map<String, String> env = Map.of();
        private String dockerHost;
        private String image = DEFAULT_IMAGE;
        private String user = "1000:1000";
        // root in the container, holding only CAP_KILL: the engine grants an exec's capabilities only when the
        // container's own user is root, and the kill helper needs CAP_KILL (see Scripts)
        private String initUser = "0:0";
        private String allowAllNetwork = "bridge";
        private java.util.function.Consumer<dev.sandbox4j.egress.EgressProxy.Builder> egressProxy = b -> { };
        private long memoryMib = 1024;
        private long diskMib = 512;
        private int pidsLimit = 256;
        private int argvLimitBytes = 64 * 1024;
        private Duration requestTimeout = Duration.ofSeconds(60);
        private Duration killGrace = Duration.ofSeconds(5);
        private boolean oneShotAsContainerProcess = true;

        private Builder() {
        }

        @Override
        protected Builder self() {
            return this;
        }

        Builder env(Map<String, String> env) {
            this.env = Map.copyOf(env);
            return this;
        }

        /**
         * Where the engine listens, as {@code DOCKER_HOST} would say it. Default: {@code DOCKER_HOST}, else the
         * first of {@code /var/run/docker.sock}, {@code ~/.docker/run/docker.sock} (Docker Desktop),
         * {@code ~/.colima/default/docker.sock}, {@code ~/.rd/docker.sock} (Rancher Desktop),
         * {@code $XDG_RUNTIME_DIR/podman/podman.sock} that exists.
         *
         * @param dockerHost {@code unix:///path} or {@code tcp://host:port}
         * @return this builder
         */
        public Builder dockerHost(String dockerHost) {
            this.dockerHost = Objects.requireNonNull(dockerHost, "dockerHost");
            return this;
        }

        /**
         * The image every sandbox starts from; it must be on the engine already (never pulled).
         *
         * @param image a name and tag or an id
         * @return this builder
         */
        public Builder image(String image) {
            this.image = Objects.requireNonNull(image, "image");
            return this;
        }

        /**
         * The non-root {@code uid:gid} code runs as (numeric; it need not exist in the image). Default {@code 1000:1000}.
         *
         * @param user numeric uid and gid
         * @return this builder
         */
        public Builder user(String user) {
            this.user = numericUser(user, "user");
            return this;
        }

        /**
         * The network mode for allow-all egress: {@code bridge} (default), {@code host}, or a network's name.
         * A lock-down after setup takes a container off this network ({@code POST /networks/{id}/disconnect});
         * the engine cannot do that for {@code host} (nor {@code container:<id>}), so there an allow-all setup
         * egress before a narrower code egress is refused before any call.
         *
         * @param network the network mode
         * @return this builder
         */
        public Builder allowAllNetwork(String network) {
            if (Objects.requireNonNull(network, "network").isBlank() || network.equals("none")) {
                throw new IllegalArgumentException("allowAllNetwork must name a network that reaches out (bridge, host, a network name)");
            }
            this.allowAllNetwork = network;
            return this;
        }

        /**
         * Memory per sandbox when {@code Limits.memoryMib} is unset. Default 1024 MiB.
         *
         * @param mib mebibytes
         * @return this builder
         */
        public Builder defaultMemoryMib(long mib) {
            this.memoryMib = atLeast(mib, 16, "defaultMemoryMib");
            return this;
        }

        /**
         * The disk bound (work directory, /tmp and /dev/shm together) when {@code Limits.diskMib} is unset. Default 512 MiB.
         *
         * @param mib mebibytes
         * @return this builder
         */
        public Builder defaultDiskMib(long mib) {
            this.diskMib = atLeast(mib, 8, "defaultDiskMib");
            return this;
        }

        /**
         * Processes per sandbox. Default 256.
         *
         * @param n the pids limit
         * @return this builder
         */
        public Builder pidsLimit(int n) {
            this.pidsLimit = (int) atLeast(n, 8, "pidsLimit");
            return this;
        }

        /**
         * The deadline of each Engine API control call. Default 60 s.
         *
         * @param timeout positive
         * @return this builder
         */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = positive(timeout, "requestTimeout");
            return this;
        }

        /**
         * How long a killed command may take to end before its container is killed. Default 5 s.
         *
         * @param grace positive
         * @return this builder
         */
        public Builder killGrace(Duration grace) {
            this.killGrace = positive(grace, "killGrace");
            return this;
        }

        /**
         * Whether a one-shot {@code run()} that needs no session (no input files, setup commands, lock-down,
         * collected files, egress list or code file) runs its code as its container's own process, the way
         * {@code docker run} does: create, attach, start, wait, and a removal without force; no exec. Off,
         * every run's code is an exec in a session's container, as {@code open} gives (for an image without
         * {@code timeout}, which ends such a container's code at its lifetime). Default on.
         *
         * @param on whether to
         * @return this builder
         */
        public Builder oneShotAsContainerProcess(boolean on) {
            this.oneShotAsContainerProcess = on;
            return this;
        }

        /**
         * Sets up the egress proxy of each sandbox whose egress is a list (its resolver, default the
         * system's; limits; the trust store that verifies brokered servers; domain ports; for tests, routes
         * of a {@code host:port} to a loopback listener). Called on a fresh {@code EgressProxy.Builder} per
         * sandbox; the runner sets the policy and the socket afterwards, so nothing here can widen a policy.
         * Default: the proxy's defaults.
         *
         * @param setup applied to each proxy's builder
         * @return this builder
         */
        public Builder egressProxy(java.util.function.Consumer<dev.sandbox4j.egress.EgressProxy.Builder> setup) {
            this.egressProxy = java.util.Objects.requireNonNull(setup, "setup");
            return this;
        }

        /**
         * Builds the runner; the engine is first called at the first open (or {@link DockerSandboxRunner#verify()}).
         *
         * @return the runner
         * @throws SandboxConfigurationException for a {@code DOCKER_HOST} it cannot use
         */
        public DockerSandboxRunner build() {
            DockerSettings.Endpoint endpoint;
            try {
                endpoint = dockerHost != null ? DockerSettings.Endpoint.parse(dockerHost) : DockerSettings.Endpoint.fromEnv(env);
            } catch (IllegalArgumentException e) {
                throw new SandboxConfigurationException("docker: " + e.getMessage());
            }
            DockerSettings s = new DockerSettings(endpoint, image, user, initUser, allowAllNetwork, memoryMib * DockerSettings.MIB,
                    diskMib * DockerSettings.MIB, pidsLimit, argvLimitBytes, requestTimeout, killGrace);
            DockerDriver driver = new DockerDriver(s, egressProxy);
            driver.oneShotAsContainerProcess(oneShotAsContainerProcess);
            ManagedSandboxRunner<DockerHandle> lifecycle = ManagedSandboxRunner.builder(driver)
                    .options(lifecycleOptions()).build();
            return new DockerSandboxRunner(lifecycle, driver, "DockerSandboxRunner[" + endpoint + ", image=" + image + "]");
        }

        private static String numericUser(String user, String what) {
            if (user == null || !user.matches("[0-9]+(:[0-9]+)?")) {
                throw new IllegalArgumentException(what + " must be a numeric uid or uid:gid, was " + user);
            }
            if (user.split(":")[0].equals("0")) {
                throw new IllegalArgumentException(what + " must not be root (uid 0)");
            }
            return user;
        }

        private static long atLeast(long n, long min, String what) {
            if (n < min) {
                throw new IllegalArgumentException(what + " must be at least " + min + ", was " + n);
            }
            return n;
        }

        private static Duration positive(Duration d, String what) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be positive, was " + d);
            }
            return d;
        }

        @Override
        public String toString() {
            return "DockerSandboxRunner.Builder[image=" + image + "]";
        }
    }
}
