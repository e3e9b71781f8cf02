package dev.sandbox4j.emulators.e2b;

import dev.sandbox4j.emulators.Machine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.sandbox4j.emulators.HttpEmulator;
import dev.sandbox4j.emulators.InstantMachine;
import dev.sandbox4j.emulators.LocalMachines;
import dev.sandbox4j.local.LocalSandboxRunner;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An E2B emulator: the control-plane API ({@code POST /v2/sandboxes} and the deprecated
 * {@code POST /sandboxes}, kill, set timeout, get, list by metadata, network update), envd's Connect
 * process API and {@code /files}, and the code interpreter's {@code /execute}, all on one loopback
 * port, in E2B's own wire formats. Each sandbox really runs its commands in a local sandbox with the
 * egress it received applied (see {@link Egress}).
 *
 * <p>Sandbox traffic is told apart from API traffic as E2B's edge proxy does: by a Host of the form
 * {@code <port>-<sandboxId>.<domain>}, or by the {@code E2b-Sandbox-Id} and {@code E2b-Sandbox-Port}
 * headers that the official SDK always sends to envd and the code interpreter. So the SDK works with
 * {@code E2B_API_URL} and {@code E2B_SANDBOX_URL} both set to {@link #baseUrl()}.
 *
 * @since 0.1.0
 */
public final class E2bEmulator extends HttpEmulator {
    private static final Logger log = LoggerFactory.getLogger(E2bEmulator.class);
    static final int ENVD_PORT = 49983;
    static final int INTERPRETER_PORT = 49999;
    static final String HOME = "/home/user";
    static final String DEBUG_SANDBOX_ID = "debug_sandbox_id";
    static final String API_KEY_HELP =
            "Invalid API key, please visit https://e2b.dev/docs/quickstart/api-key for more information.";
    private static final Pattern SANDBOX_HOST = Pattern.compile("^(\\d{1,5})-([A-Za-z0-9_-]+)\\..+$");
    static final Pattern SANDBOX_PATH = Pattern.compile("^/sandboxes/([^/]+)(/[a-z]+)?$");
    static final Pattern CONNECT_PATH = Pattern.compile("^/v2/sandboxes/([^/]+)/connect$");
    private static final SecureRandom RANDOM = new SecureRandom();

    final byte[] apiKey;
    final String domain;
    final Duration maxTimeout;
    private final boolean debugSandbox;
    final EmulatedSandbox.Opener workspaces;
    private final Machine.Factory machines;
    private final Duration machineLifetime;
    private final LocalSandboxRunner ownRunner;
    final long hardCapBytes;
    final int maxUploadBytes;
    final Duration interpreterKeepalive;
    final String envdVersion;
    final Map<String, EmulatedSandbox> sandboxes = new ConcurrentHashMap<>();
    final ExecutorService commands = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "E2bEmulator-command");
        t.setDaemon(true);
        return t;
    });
    private final ScheduledExecutorService clock = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "E2bEmulator-clock");
        t.setDaemon(true);
        return t;
    });
    private final Envd envd = new Envd(this);
    private final ControlPlane controlPlane = new ControlPlane(this);
    private final Interpreter interpreter = new Interpreter(this);
    private volatile HostileFrame hostileFrame = HostileFrame.HUGE_LENGTH_PREFIX;

    /**
     * What a command stream sends when {@code faults().hostileFraming(true)} is on.
     *
     * @since 0.1.0
     */
    public enum HostileFrame {
        /** A Connect envelope whose length prefix is 0xFFFFFFFF, then endless payload. */
        HUGE_LENGTH_PREFIX,
        /** A Connect envelope declaring and streaming one gigabyte (an NDJSON line of a gigabyte on /execute). */
        GIGABYTE_FRAME
    }

    private E2bEmulator(Builder b) throws IOException {
        super(b.port, b.instant);
        this.apiKey = b.apiKey.getBytes(StandardCharsets.UTF_8);
        this.domain = b.domain;
        this.maxTimeout = b.maxTimeout;
        this.debugSandbox = b.debugSandbox;
        trace(b.trace);
        if (b.instant) {
            this.machines = InstantMachine.FACTORY;
            this.ownRunner = null;
        } else if (b.machines != null) {
            this.machines = b.machines;
            this.ownRunner = null;
        } else {
            this.ownRunner = b.localRunner == null ? LocalSandboxRunner.create() : null;
            this.machines = LocalMachines.using(b.localRunner != null ? b.localRunner : ownRunner);
        }
        // the emulator's clock (the E2B timeout) ends a sandbox first; the machine's own is the backstop
        this.machineLifetime = b.maxTimeout.plusMinutes(1);
        this.workspaces = this::openMachine;
        this.hardCapBytes = b.hardCapBytes;
        this.maxUploadBytes = b.maxUploadBytes;
        this.interpreterKeepalive = b.interpreterKeepalive;
        this.envdVersion = b.envdVersion;
    }

    /**
     * {@return a new builder with the defaults; an API key must be set before {@link Builder#build()}}
     */
    public static Builder builder() {
        return new Builder();
    }

    Machine openMachine(dev.sandbox4j.policy.EgressPolicy egress, Map<String, String> env) {
        try {
            return machines.open(egress, env, machineLifetime);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("the machine did not open: " + e.getMessage(), e);
        }
    }

    /**
     * Chooses the hostile frame sent while {@code faults().hostileFraming(true)} is on.
     *
     * @param frame the frame to send; not null ({@link HostileFrame#HUGE_LENGTH_PREFIX} until changed)
     * @return this emulator
     */
    public E2bEmulator hostileFrame(HostileFrame frame) {
        this.hostileFrame = Objects.requireNonNull(frame);
        return this;
    }

    HostileFrame hostileFrameKind() {
        return hostileFrame;
    }

    @Override
    protected void handle(HttpExchange exchange) throws Exception {
        route(exchange);
    }

    private void route(HttpExchange exchange) throws Exception {
        String host = exchange.getRequestHeaders().getFirst("Host");
        Matcher m = host == null ? null : SANDBOX_HOST.matcher(host.trim());
        if (m != null && m.matches()) {
            sandboxRoute(exchange, m.group(2), Integer.parseInt(m.group(1)));
            return;
        }
        String sandboxId = exchange.getRequestHeaders().getFirst("E2b-Sandbox-Id");
        String sandboxPort = exchange.getRequestHeaders().getFirst("E2b-Sandbox-Port");
        if (sandboxId != null && sandboxPort != null) {
            int port;
            try {
                port = Integer.parseInt(sandboxPort.trim());
            } catch (NumberFormatException e) {
                sendJson(exchange, 400, error(400, "invalid E2b-Sandbox-Port header"));
                return;
            }
            sandboxRoute(exchange, sandboxId.trim(), port);
            return;
        }
        controlPlane.handle(exchange);
    }

    @Override
    protected Kind kind(HttpExchange exchange) {
        String method = exchange.getRequestMethod();
        String path = exchange.getRequestURI().getRawPath();
        boolean api = exchange.getRequestHeaders().getFirst("E2b-Sandbox-Id") == null
                && !SANDBOX_HOST.matcher(String.valueOf(exchange.getRequestHeaders().getFirst("Host")).trim()).matches();
        if (!api) {
            return method.equals("POST") && (path.equals("/process.Process/Start") || path.equals("/execute"))
                    ? Kind.EXEC : Kind.OTHER;
        }
        if (path.equals("/v2/sandboxes") || path.equals("/sandboxes")) {
            return method.equals("POST") ? Kind.CREATE : method.equals("GET") ? Kind.LOOKUP : Kind.OTHER;
        }
        return method.equals("DELETE") && SANDBOX_PATH.matcher(path).matches() ? Kind.TEARDOWN : Kind.OTHER;
    }

    /** The create-late knob, for the control plane's create. */
    boolean late(HttpExchange exchange) throws InterruptedException {
        return createLate(exchange);
    }

    @Override
    protected JsonNode error(int status, String message) {
        ObjectNode n = object();
        n.put("code", status);
        n.put("message", message);
        return n;
    }

    @Override
    protected void destroyAll() {
        for (String id : List.copyOf(sandboxes.keySet())) {
            destroy(id);
        }
        commands.shutdownNow();
        clock.shutdownNow();
        if (ownRunner != null) {
            ownRunner.close();
        }
    }

    // ---------------------------------------------------------------- routing to sandboxes (the edge proxy)

    private void sandboxRoute(HttpExchange exchange, String sandboxId, int port) throws Exception {
        EmulatedSandbox sb = sandboxes.get(sandboxId);
        if (sb == null && debugSandbox && sandboxId.equals(DEBUG_SANDBOX_ID)) {
            sb = debugSandbox();
        }
        if (sb == null || sb.isKilled()) {
            ObjectNode n = object();
            n.put("sandboxId", sandboxId);
            n.put("message", "The sandbox was not found");
            n.put("code", 502);
            sendJson(exchange, 502, n);
            return;
        }
        boolean interpreterOpen = sb.alias.startsWith("code-interpreter") || sandboxId.equals(DEBUG_SANDBOX_ID);
        if (port == ENVD_PORT) {
            envd.handle(exchange, sb);
        } else if (port == INTERPRETER_PORT && interpreterOpen) {
            interpreter.handle(exchange, sb);
        } else {
            ObjectNode n = object();
            n.put("sandboxId", sandboxId);
            n.put("message", "The sandbox is running but port is not open");
            n.put("port", port);
            n.put("code", 502);
            sendJson(exchange, 502, n);
        }
    }

    /** The SDK's debug mode creates nothing: its envd calls name {@code debug_sandbox_id} and carry no token. */
    private synchronized EmulatedSandbox debugSandbox() {
        EmulatedSandbox existing = sandboxes.get(DEBUG_SANDBOX_ID);
        if (existing != null) {
            return existing;
        }
        Egress egress = Egress.none();
        Instant now = Instant.now();
        EmulatedSandbox sb = new EmulatedSandbox(DEBUG_SANDBOX_ID, templateId("base"), "base", null, Map.of(), Map.of(),
                egress, openMachine(egress.localPolicy(), Map.of()), now, now.plus(Duration.ofDays(3650)));
        sandboxes.put(DEBUG_SANDBOX_ID, sb);
        ledger.created(DEBUG_SANDBOX_ID);
        log.info("E2B emulator: debug sandbox opened for the SDK's debug mode");
        return sb;
    }

    // ---------------------------------------------------------------- control-plane API

    /**
     * Changes one label of a live sandbox, as anyone holding the account's key could through the
     * provider's console or API: for tests of what a client trusts in a label (attach compares the
     * policy label with the spec it expects). The sandbox itself (its network, its clock) is unchanged.
     *
     * @param sandboxId the id of the sandbox
     * @param key the metadata key to set
     * @param value its new value
     * @return false when there is no such live sandbox
     */
    public boolean alterLabel(String sandboxId, String key, String value) {
        EmulatedSandbox sb = sandboxes.get(sandboxId);
        if (sb == null || sb.isKilled()) {
            return false;
        }
        Map<String, String> m = new java.util.HashMap<>(sb.metadata);
        m.put(key, value);
        sb.metadata = Map.copyOf(m);
        return true;
    }

    /** Removes, kills and records a sandbox. False when there was none. */
    boolean destroy(String id) {
        EmulatedSandbox sb = sandboxes.remove(id);
        if (sb == null) {
            return false;
        }
        sb.kill();
        ledger.destroyed(id);
        log.debug("E2B emulator: killed {}", id);
        return true;
    }

    private void expire(String id) {
        EmulatedSandbox sb = sandboxes.get(id);
        if (sb != null && !sb.endAt().isAfter(Instant.now().plusMillis(50))) {
            log.debug("E2B emulator: {} reached its timeout", id);
            destroy(id);
        }
    }

    /** Schedules a new sandbox's end at its timeout. */
    void expireAt(EmulatedSandbox sb, Instant endAt, int seconds) {
        sb.expiry(endAt, clock.schedule(() -> expire(sb.id), seconds, TimeUnit.SECONDS));
    }

    void reschedule(EmulatedSandbox sb, int seconds) {
        sb.expiry(Instant.now().plusSeconds(seconds), clock.schedule(() -> expire(sb.id), seconds, TimeUnit.SECONDS));
    }

    // ---------------------------------------------------------------- ids

    static String randomId(int length) {
        String alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
        StringBuilder sb = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            sb.append(alphabet.charAt(RANDOM.nextInt(alphabet.length())));
        }
        return sb.toString();
    }

    /** A stable 20-character template id for a template name, as E2B returns ids rather than names. */
    static String templateId(String alias) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(alias.getBytes(StandardCharsets.UTF_8));
            String alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
            StringBuilder sb = new StringBuilder(20);
            for (int i = 0; i < 20; i++) {
                sb.append(alphabet.charAt((h[i] & 0xff) % alphabet.length()));
            }
            return sb.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String toString() {
        return "E2bEmulator[" + baseUrl() + ", " + ledger + "]";
    }

    /**
     * Settings for {@link E2bEmulator}: its port, the API key it accepts, its domain, the machines it runs sandboxes on, and its caps.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private int port;
        private String apiKey;
        private String domain;
        private Duration maxTimeout = Duration.ofHours(24);
        private boolean debugSandbox;
        private boolean trace;
        private Machine.Factory machines;
        private LocalSandboxRunner localRunner;
        private long hardCapBytes = 64L * 1024 * 1024;
        private int maxUploadBytes = 64 * 1024 * 1024;
        private Duration interpreterKeepalive = Duration.ofSeconds(5);
        private String envdVersion = "0.6.13";
        private boolean instant;

        private Builder() {
        }

        /**
         * Instant mode ({@link HttpEmulator#instant()}): no local sandbox is opened; {@code Start} and
         * {@code /execute} answer at once (exit 0, no output), {@code /files} writes are accepted and
         * dropped, reads find nothing. Default off.
         *
         * @param on whether to run in instant mode
         * @return this builder
         */
        public Builder instant(boolean on) {
            this.instant = on;
            return this;
        }

        /**
         * The loopback port to listen on; 0 (the default) picks a free port.
         *
         * @param port the port number, or 0
         * @return this builder
         */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        /**
         * The key the API accepts in {@code X-API-Key}; E2B keys start with {@code e2b_}. Required.
         *
         * @param apiKey the key, starting with {@code e2b_} and at least 8 characters long
         * @return this builder
         * @throws IllegalArgumentException if {@code apiKey} is null, does not start with {@code e2b_}
         *         or is shorter than 8 characters
         */
        public Builder apiKey(String apiKey) {
            if (apiKey == null || !apiKey.startsWith("e2b_") || apiKey.length() < 8) {
                throw new IllegalArgumentException("an E2B API key starts with e2b_");
            }
            this.apiKey = apiKey;
            return this;
        }

        /**
         * The {@code domain} returned by create (null, the default, makes the SDK use its own).
         *
         * @param domain the domain, or null
         * @return this builder
         */
        public Builder domain(String domain) {
            this.domain = domain;
            return this;
        }

        /**
         * The longest sandbox timeout accepted (E2B's team limit). Default 24 hours.
         *
         * @param maxTimeout the limit; not null
         * @return this builder
         */
        public Builder maxTimeout(Duration maxTimeout) {
            this.maxTimeout = Objects.requireNonNull(maxTimeout);
            return this;
        }

        /**
         * Serve the SDK's debug mode, which creates nothing and talks to sandbox {@code debug_sandbox_id}.
         * Default off.
         *
         * @param on whether to open that sandbox on the first request for it
         * @return this builder
         */
        public Builder debugSandbox(boolean on) {
            this.debugSandbox = on;
            return this;
        }

        /**
         * Prints every request to standard error: method, target, headers (API key, access token and
         * Authorization masked), the start of the body (Connect envelopes decoded) and the status.
         * Default off.
         *
         * @param on whether to trace requests
         * @return this builder
         */
        public Builder trace(boolean on) {
            this.trace = on;
            return this;
        }

        /**
         * The local runner whose sandboxes run the commands. By default the emulator creates one
         * ({@code LocalSandboxRunner.create()}) and closes it with itself.
         *
         * @param runner the runner to use; not null, and not closed by the emulator
         * @return this builder
         */
        public Builder localRunner(LocalSandboxRunner runner) {
            this.localRunner = Objects.requireNonNull(runner);
            return this;
        }

        /**
         * Where sandboxes run instead of local sandboxes on {@link #localRunner}: any machines (the
         * wire tests bring their own). The emulator does not close the factory. Ignored in instant mode.
         *
         * @param machines the factory to open machines from; not null
         * @return this builder
         */
        public Builder machines(Machine.Factory machines) {
            this.machines = Objects.requireNonNull(machines);
            return this;
        }

        /**
         * Bytes per stream after which the emulator kills a command that nobody stopped (E2B itself
         * has no such cap; this bounds the disk a flood can fill). Default 64 MiB.
         *
         * @param bytes the cap in bytes, per stream
         * @return this builder
         */
        public Builder hardCapBytes(long bytes) {
            this.hardCapBytes = bytes;
            return this;
        }

        /**
         * The largest {@code /files} upload accepted. Default 64 MiB.
         *
         * @param bytes the limit in bytes
         * @return this builder
         */
        public Builder maxUploadBytes(int bytes) {
            this.maxUploadBytes = bytes;
            return this;
        }

        /**
         * How often {@code /execute} sends a keepalive line while a cell runs. Default 5 s, as E2B.
         *
         * @param every the interval; not null
         * @return this builder
         */
        public Builder interpreterKeepalive(Duration every) {
            this.interpreterKeepalive = Objects.requireNonNull(every);
            return this;
        }

        /**
         * Starts the server on its port, ready for requests.
         *
         * @return the running emulator; close it to destroy its sandboxes and stop the server
         * @throws IllegalStateException if no API key was set
         * @throws IOException if the server cannot bind the port
         */
        public E2bEmulator build() throws IOException {
            if (apiKey == null) {
                throw new IllegalStateException("apiKey is required");
            }
            return new E2bEmulator(this);
        }
    }
}
