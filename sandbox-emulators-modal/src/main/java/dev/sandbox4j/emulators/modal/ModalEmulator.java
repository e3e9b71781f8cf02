package dev.sandbox4j.emulators.modal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.emulators.Faults;
import dev.sandbox4j.emulators.Ledger;
import dev.sandbox4j.emulators.modal.internal.Auth;
import dev.sandbox4j.emulators.modal.internal.ControlPlane;
import dev.sandbox4j.emulators.modal.internal.EmulatedSandbox;
import dev.sandbox4j.emulators.modal.internal.Exec;
import dev.sandbox4j.emulators.modal.internal.Jwts;
import dev.sandbox4j.emulators.modal.internal.Router;
import dev.sandbox4j.emulators.modal.internal.proto.ModalApi;
import dev.sandbox4j.local.LocalSandboxRunner;
import io.grpc.Attributes;
import io.grpc.Server;
import io.grpc.ServerTransportFilter;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A Modal emulator: two gRPC servers on loopback, as in the real service. The control plane
 * ({@code modal.client.ModalClient}) answers lookups, images, secrets and the sandbox lifecycle in the
 * V1 and V2 families; the task command router ({@code modal.task_command_router.TaskCommandRouter}), on
 * its own port, is returned by {@code TaskGetCommandRouterAccess} / {@code SandboxCreateV2} with a JWT
 * for one task that it checks on every call. Each sandbox is a real local bubblewrap sandbox with the
 * {@code network_access} it was created with applied (see {@code WireNetwork.localPolicy}: an ALLOWLIST
 * goes through the local runner's egress proxy), replaced for the next commands by the router's
 * {@code TaskSetNetworkAccess} with the same mapping; execs honour
 * {@code timeout_secs}, PIPE versus DEVNULL and the router's stdio descriptors.
 *
 * <p>The router URL it hands out is {@code https://127.0.0.1:<port>} as Modal's must be, yet the server
 * is plaintext: the official SDKs connect without TLS when the control plane is on localhost
 * (modal.md 3.6), and a Java client must do the same.
 *
 * <p>It lives in its own module so that grpc-java and Netty stay off the REST emulators' classpath, and
 * it compiles its own subset of the upstream protos (field numbers unchanged), sharing no classes with
 * the Modal adapter it checks. Fault knobs ({@link #faults()}: UNAVAILABLE / RESOURCE_EXHAUSTED on
 * create, throttling with an {@code RPCRetryPolicy}, a create whose answer is lost, a stdio stream
 * dropped mid-run, failing terminates, an endless stdio stream for {@code hostileFraming}) and the {@link #ledger()} are those of the other emulators.
 * For tests and local development only.
 *
 * @since 0.1.0
 */
public final class ModalEmulator implements AutoCloseable {
    private final Server control;
    private final Server router;
    private final Router routerService;
    private final ControlPlane plane;
    private final Ledger ledger;
    private final Faults faults;
    private final LocalSandboxRunner runner;
    private final boolean ownsRunner;
    private final ScheduledExecutorService timers;
    private final String tokenId;
    private final String tokenSecret;
    private final boolean instant;
    private final Map<String, AtomicInteger> calls =
            new ConcurrentSkipListMap<>();
    private final AtomicInteger routerConnections = new AtomicInteger();
    private final AtomicInteger routerConnectionsOpen = new AtomicInteger();

    private ModalEmulator(Builder b) throws IOException {
        this.tokenId = b.tokenId;
        this.tokenSecret = b.tokenSecret;
        this.ledger = new Ledger();
        this.faults = new Faults();
        this.instant = b.instant;
        this.ownsRunner = b.runner == null && !b.instant;
        this.runner = b.instant ? null : ownsRunner ? LocalSandboxRunner.create() : b.runner;
        this.timers = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "modal-emulator-timers");
            t.setDaemon(true);
            return t;
        });
        Server started = null;
        Router service = null;
        try {
            Jwts jwts = new Jwts(Clock.systemUTC());
            InetAddress loopback = InetAddress.getLoopbackAddress();
            Server[] routerRef = new Server[1];
            this.plane = new ControlPlane(tokenId, jwts, runner, ledger, faults,
                    () -> "https://" + loopback.getHostAddress() + ":" + routerRef[0].getPort(),
                    b.canaryTargets, timers, b.outputLimit, b.unscheduledPolls);
            service = new Router(plane, faults);
            this.routerService = service;
            started = NettyServerBuilder.forAddress(new InetSocketAddress(loopback, b.routerPort))
                    .addService(ServerInterceptors.intercept(service, Auth.router(jwts), Auth.counting(calls)))
                    .addTransportFilter(countConnections(routerConnections, routerConnectionsOpen))
                    .maxInboundMessageSize(100 * 1024 * 1024)
                    .permitKeepAliveTime(5, TimeUnit.SECONDS).permitKeepAliveWithoutCalls(true)
                    .build().start();
            this.router = started;
            routerRef[0] = started;
            this.control = NettyServerBuilder.forAddress(new InetSocketAddress(loopback, b.port))
                    .addService(ServerInterceptors.intercept(plane, Auth.controlPlane(tokenId, tokenSecret, jwts), Auth.counting(calls)))
                    .maxInboundMessageSize(100 * 1024 * 1024)
                    .permitKeepAliveTime(5, TimeUnit.SECONDS).permitKeepAliveWithoutCalls(true)
                    .build().start();
        } catch (IOException | RuntimeException e) {
            // a port taken or out of range: nothing started here outlives the failed construction
            if (started != null) {
                started.shutdownNow();
                try {
                    started.awaitTermination(5, TimeUnit.SECONDS);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                }
            }
            if (service != null) {
                service.close();
            }
            timers.shutdownNow();
            if (ownsRunner) {
                runner.close();
            }
            throw e;
        }
    }

    /** {@return a new builder; every setting has a default} */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return what {@code MODAL_SERVER_URL} must be: {@code http://127.0.0.1:<port>} (plaintext)} */
    public String serverUrl() {
        return "http://" + InetAddress.getLoopbackAddress().getHostAddress() + ":" + control.getPort();
    }

    /** {@return the port the control plane listens on (the one picked when the builder asked for 0)} */
    public int port() {
        return control.getPort();
    }

    /** {@return the port the task command router listens on (the one picked when the builder asked for 0)} */
    public int routerPort() {
        return router.getPort();
    }

    /** {@return the token id every control-plane call must carry ({@code MODAL_TOKEN_ID})} */
    public String tokenId() {
        return tokenId;
    }

    /** {@return the token secret every control-plane call must carry ({@code MODAL_TOKEN_SECRET})} */
    public String tokenSecret() {
        return tokenSecret;
    }

    /** {@return the sandboxes created and torn down; {@code live()} must be 0 after a well-behaved client} */
    public Ledger ledger() {
        return ledger;
    }

    /**
     * The fault knobs; {@code failCreate(503|429|500, n)}, {@code rateLimitCreate}, {@code loseCreateResponse},
     * {@code dropStream}, {@code failTeardown}, {@code hostileFraming} (stdio reads become one endless line)
     * and {@code slow} (every control-plane answer delayed) are honoured.
     *
     * @return the knobs, live: a change applies to the calls that follow
     */
    public Faults faults() {
        return faults;
    }

    /** {@return the local sandboxes open right now (a second leak count, below the ledger); 0 in instant mode} */
    public int openLocalSandboxes() {
        return runner == null ? 0 : runner.openSandboxes();
    }

    /**
     * {@return whether this emulator is in instant mode ({@link Builder#instant}): sandboxes come and go
     * as usual, no code runs}
     */
    public boolean instant() {
        return instant;
    }

    /**
     * {@return the gRPC calls received since start, both servers together, every call counted once as it
     * arrives (refused ones too)}
     */
    public long callCount() {
        long n = 0;
        for (AtomicInteger c : calls.values()) {
            n += c.get();
        }
        return n;
    }

    /** {@return the TCP connections the command router has accepted since start (a client's channel reuse shows here)} */
    public int routerConnections() {
        return routerConnections.get();
    }

    /** {@return the command router's connections open now} */
    public int routerConnectionsOpen() {
        return routerConnectionsOpen.get();
    }

    private static ServerTransportFilter countConnections(AtomicInteger accepted, AtomicInteger open) {
        return new ServerTransportFilter() {
            @Override
            public Attributes transportReady(Attributes attrs) {
                accepted.incrementAndGet();
                open.incrementAndGet();
                return attrs;
            }

            @Override
            public void transportTerminated(Attributes attrs) {
                open.decrementAndGet();
            }
        };
    }

    /**
     * {@return the gRPC calls received since start, per full method name ({@code
     * modal.client.ModalClient/SandboxCreate}), sorted by name} A copy: later calls do not change it.
     */
    public Map<String, Integer> callCounts() {
        Map<String, Integer> out = new java.util.TreeMap<>();
        calls.forEach((m, n) -> out.put(m, n.get()));
        return out;
    }

    /** {@return the call counts as JSON: {@code {"total":N,"calls":{"<method>":n,...}}}} */
    public String callsJson() {
        ObjectNode root = new ObjectMapper().createObjectNode().put("total", callCount());
        ObjectNode per = root.putObject("calls");
        callCounts().forEach(per::put);
        return root.toString();
    }

    /**
     * What the emulator received, as JSON, for checks against what a client was given: per sandbox its
     * id, family, tags, timeout, resources, network access and whether it got the host network, and per
     * exec its argv, stdio config, timeout and how it ended; the ledger; the calls per RPC; how often each fault knob fired. Secret values are never included (env names
     * only).
     *
     * @return one JSON object with {@code ledger}, {@code faultsFired}, {@code calls} and {@code sandboxes}
     *         (oldest first)
     */
    public String recordJson() {
        ObjectMapper json = new ObjectMapper();
        ObjectNode root = json.createObjectNode();
        root.putObject("ledger").put("created", ledger.created()).put("destroyed", ledger.destroyed()).put("live", ledger.live());
        root.putObject("faultsFired").put("failedCreates", plane.fired().failedCreates.get())
                .put("throttledCreates", plane.fired().throttledCreates.get()).put("lostCreates", plane.fired().lostCreates.get())
                .put("droppedStreams", plane.fired().droppedStreams.get())
                .put("failedTerminates", plane.fired().failedTerminates.get())
                .put("hostileStreams", plane.fired().hostileStreams.get());
        ObjectNode counts = root.putObject("calls");
        calls.forEach((method, n) -> counts.put(method, n.get()));
        ArrayNode list = root.putArray("sandboxes");
        List<EmulatedSandbox> all = new ArrayList<>(plane.sandboxes().values());
        all.sort(Comparator.comparingDouble(EmulatedSandbox::createdAt));
        for (EmulatedSandbox sb : all) {
            ModalApi.Sandbox d = sb.definition();
            ObjectNode s = list.addObject().put("id", sb.id()).put("version", sb.v2() ? "V2" : "V1").put("taskId", sb.taskId())
                    .put("timeoutSecs", d.getTimeoutSecs()).put("milliCpu", d.getResources().getMilliCpu())
                    .put("memoryMb", d.getResources().getMemoryMb()).put("hostNetwork", sb.hostNetwork())
                    .put("finished", sb.finished());
            if (d.hasWorkdir()) {
                s.put("workdir", d.getWorkdir());
            }
            if (d.hasRuntime()) {
                s.put("runtime", d.getRuntime());
            }
            ObjectNode net = s.putObject("networkAccess").put("type", sb.network().type());
            sb.network().cidrs().forEach(net.putArray("allowedCidrs")::add);
            sb.network().domains().forEach(net.putArray("allowedDomains")::add);
            ObjectNode tags = s.putObject("tags");
            sb.tags().forEach(t -> tags.put(t.getTagName(), t.getTagValue()));
            ModalApi.GenericResult r = sb.result().getNow(null);
            if (r != null) {
                s.put("result", r.getStatus().name());
            }
            ArrayNode execs = s.putArray("execs");
            for (Exec e : sb.execs()) {
                ObjectNode x = execs.addObject().put("execId", e.execId());
                e.argv().forEach(x.putArray("argv")::add);
                x.put("stdoutConfig", e.stdoutConfig()).put("stderrConfig", e.stderrConfig());
                if (e.timeoutSecs() != null) {
                    x.put("timeoutSecs", e.timeoutSecs());
                }
                if (e.workdir() != null) {
                    x.put("workdir", e.workdir());
                }
                e.envNames().forEach(x.putArray("envNames")::add);
                Exec.Exit exit = e.done().getNow(null);
                if (exit != null) {
                    x.put(exit.isSignal() ? "signal" : "code", exit.value());
                }
            }
        }
        return root.toString();
    }

    /**
     * Changes one label of a live sandbox, as anyone holding the account's key could through the
     * provider's console or API: for tests of what a client trusts in a label (attach compares the
     * policy label with the spec it expects). The sandbox itself (its network, its clock) is unchanged.
     *
     * @param sandboxId the sandbox's id (V1 or V2)
     * @param key the tag's name
     * @param value its new value
     * @return false when there is no such live sandbox
     */
    public boolean alterLabel(String sandboxId, String key, String value) {
        EmulatedSandbox sb = plane.sandboxes().get(sandboxId);
        if (sb == null || sb.finished()) {
            return false;
        }
        sb.tag(key, value);
        return true;
    }

    /** Stops both servers and destroys every sandbox (each counted as destroyed in the ledger). */
    @Override
    public void close() {
        control.shutdownNow();
        router.shutdownNow();
        plane.endAll();
        routerService.close();
        timers.shutdownNow();
        try {
            control.awaitTermination(5, TimeUnit.SECONDS);
            router.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (ownsRunner) {
            runner.close();
        }
    }

    @Override
    public String toString() {
        return "ModalEmulator[" + serverUrl() + ", router port " + routerPort() + ", " + ledger + "]";
    }

    /**
     * Settings for {@link ModalEmulator}: its control-plane and router ports, the token it accepts, the local runner it executes on, and its output limit.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private int port;
        private int routerPort;
        private String tokenId = "ak-emulator";
        private String tokenSecret = "as-emulator";
        private LocalSandboxRunner runner;
        private List<String> canaryTargets = List.of("127.0.0.1");
        private int outputLimit = 1_000_000;
        private int unscheduledPolls = 1;
        private boolean instant;

        private Builder() {
        }

        /**
         * Instant mode: no local runner is made or used; sandboxes are created, listed, looked up and
         * terminated as usual, but every exec ends at once with exit 0 and no output (stdio reads return
         * nothing and EOF). For measuring what a client costs; the ledger and the call counts count
         * everything. Default off.
         *
         * @param on true for instant mode; a {@link #runner} is then not used
         * @return this builder
         */
        public Builder instant(boolean on) {
            this.instant = on;
            return this;
        }

        /**
         * The control plane's port on loopback; 0 (default) picks a free one.
         *
         * @param port 0 to 65535
         * @return this builder
         */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        /**
         * The command router's port on loopback; 0 (default) picks a free one.
         *
         * @param port 0 to 65535
         * @return this builder
         */
        public Builder routerPort(int port) {
            this.routerPort = port;
            return this;
        }

        /**
         * The credentials every control-plane call must carry ({@code MODAL_TOKEN_ID} / {@code MODAL_TOKEN_SECRET}).
         * Default {@code ak-emulator} / {@code as-emulator}.
         *
         * @param id the token id; not null
         * @param secret the token secret; not null
         * @return this builder
         */
        public Builder token(String id, String secret) {
            this.tokenId = Objects.requireNonNull(id, "id");
            this.tokenSecret = Objects.requireNonNull(secret, "secret");
            return this;
        }

        /**
         * A local runner the caller owns (and closes); by default the emulator makes and closes its own.
         *
         * @param runner the runner to execute on; null for the emulator's own
         * @return this builder
         */
        public Builder runner(LocalSandboxRunner runner) {
            this.runner = runner;
            return this;
        }

        /**
         * The IPv4 addresses a test's canary listener is reached at. An ALLOWLIST with a CIDR containing
         * one of them gets the host network; any other non-empty allowlist goes through the local runner's
         * egress proxy (no network where that runner cannot enforce it exactly). Default {@code 127.0.0.1}.
         *
         * @param targets IPv4 addresses; not null, no null element (copied)
         * @return this builder
         */
        public Builder canaryTargets(List<String> targets) {
            this.canaryTargets = List.copyOf(targets);
            return this;
        }

        /**
         * Characters kept per stream and exec (the rest is cut, and the command killed). Default 1,000,000.
         *
         * @param chars the characters kept per stream
         * @return this builder
         */
        public Builder outputLimit(int chars) {
            this.outputLimit = chars;
            return this;
        }

        /**
         * How many {@code SandboxGetTaskId} calls of a V1 sandbox answer "not scheduled yet" before the
         * task id. Default 1, so a client's polling is exercised as Modal requires; 0 answers at once.
         *
         * @param polls the number of "not scheduled yet" answers per V1 sandbox
         * @return this builder
         */
        public Builder unscheduledPolls(int polls) {
            this.unscheduledPolls = polls;
            return this;
        }

        /**
         * Starts both servers on loopback; outside instant mode and without a {@link #runner}, it first
         * makes the emulator's own local runner.
         *
         * @return the running emulator; close it to stop the servers and destroy its sandboxes
         * @throws IOException when a server cannot bind its port
         * @throws IllegalArgumentException when a port is outside 0 to 65535
         */
        public ModalEmulator build() throws IOException {
            return new ModalEmulator(this);
        }
    }
}
