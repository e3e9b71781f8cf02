package dev.sandbox4j.emulators.kubernetes;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.OutputListener;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.emulators.Faults;
import dev.sandbox4j.emulators.Faults.Fault;
import dev.sandbox4j.emulators.Ledger;
import dev.sandbox4j.emulators.Machine;
import dev.sandbox4j.emulators.WebSockets;
import dev.sandbox4j.emulators.ShellWords;
import dev.sandbox4j.policy.Language;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Kubernetes API server with the agent-sandbox controller in it, on loopback, for tests without a
 * cluster. It serves the few REST paths a sandbox runner uses, in Kubernetes' own JSON: Sandboxes
 * ({@code agents.x-k8s.io/v1beta1}), NetworkPolicies and pods (read-only) with create, get, list by
 * label selector and delete, and the pod exec WebSocket upgrade with the channel protocols
 * {@code v5.channel.k8s.io} and {@code v4.channel.k8s.io} (stdout on channel 1, stderr on 2, the
 * status object on 3).
 *
 * <p>The controller part does what agent-sandbox v0.5.x does, as far as a runner can see: for each
 * new Sandbox it starts a pod (here a {@link Machine}, a local bubblewrap sandbox for
 * {@code LocalMachines}) named after the Sandbox and labelled with the template's labels and
 * {@code agents.x-k8s.io/sandbox-name-hash}, then sets the Sandbox's status as the real controller does
 * (condition {@code Ready} True with reason {@code DependenciesReady} and message {@code Pod is Ready},
 * {@code selector}, {@code podIPs}, {@code nodeName}); at {@code shutdownTime} it deletes the pod and,
 * with {@code shutdownPolicy: Delete}, the Sandbox (with {@code Retain}, Ready False
 * {@code SandboxExpired}). Deleting a Sandbox deletes its pod.
 *
 * <p>What it checks that a cluster would: a pod spec that the "restricted" Pod Security Standard
 * refuses (root allowed, privilege escalation, capabilities not dropped, no RuntimeDefault seccomp)
 * never starts (Ready False, {@code ReconcilerError}), as under a namespace labelled
 * {@code pod-security.kubernetes.io/enforce: restricted}. Egress from the NetworkPolicies that select the
 * pod when it starts: the machine gets the host's network only when they allow every destination (or
 * no policy selects the pod, which is Kubernetes' default); any narrower policy (CIDR lists) gets no
 * network at all, stricter than a cluster.
 *
 * <p>A test can hold Sandboxes short of Ready ({@link #holdPending(int)}): their pods stay
 * {@code Pending}, as on a cluster that cannot schedule them or pull their image, until
 * {@link #releasePending()} starts them.
 *
 * <p>It also answers the legacy discovery documents ({@code /api}, {@code /apis}, and the resource lists
 * of its three group versions), so kubectl applies, gets and deletes Sandboxes against it (with
 * {@code --validate=false}: there is no OpenAPI document).
 *
 * <p>Faults ({@link #faults()}, the knobs {@link #knobs()} lists) act where a cluster's API server fails:
 * on the Sandbox (and SandboxClaim) create a 5xx or another status, a 429 with {@code Retry-After} (and
 * {@code details.retryAfterSeconds}), an answer lost after the create took effect, a late create (the
 * connection hangs and drops; the Sandbox is stored only afterwards, as an API server that finishes a
 * write its client gave up on, and after the client's read-back by name when one comes within 2 s, so
 * the read-back never settles it) and a garbled 201; a hung list of Sandboxes by label selector (the
 * runner's lookup by run id); a garbled 2xx body on any other REST answer; on a pod exec an error status
 * instead of the upgrade, a lost answer (the command starts and runs on, the connection drops before
 * the upgrade is answered) and a stream cut after the first output; a failing Sandbox delete. Two
 * delays that are no knob counts: {@link Faults#slow} holds every request (REST or exec upgrade) before it
 * is handled, and {@link Faults#createDelay} every Sandbox and SandboxClaim create before anything is
 * stored, as a cluster that takes that long to admit it (past a client's deadline, the create still
 * takes effect). {@link #alterLabel} changes a label of a stored Sandbox, as anyone with write access to
 * the namespace could. The
 * {@link #ledger()} records what it did: each Sandbox a client created (named, with its labels), each
 * one torn down (a delete, an expiry, a claim's garbage collection, the emulator's close), whether a
 * client's delete reached it, and each command a pod received, with the network the pod was given.
 *
 * <p>What it does not do, and a real cluster does: scheduling, images, resource limits (the local
 * runner's own apply), RBAC, admission beyond the check above, watches, SandboxClaims, templates and
 * warm pools. Closing an exec stream kills the command here; on a cluster it does not (the runner kills
 * by a second exec, which works on both).
 *
 * @since 0.1.0
 */
public final class AgentSandboxEmulator implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AgentSandboxEmulator.class);
    static final ObjectMapper JSON = new ObjectMapper();
    /** agent-sandbox's pod label, an FNV-1a hash of the Sandbox's name. */
    static final String NAME_HASH_LABEL = "agents.x-k8s.io/sandbox-name-hash";
    private static final Pattern PATH = Pattern.compile(
            "^/(?:api/(v1)|apis/([^/]+)/([^/]+))/namespaces/([a-z0-9-]+)/([a-z]+)(?:/([^/]+))?(?:/([a-z]+))?$");
    /** Output the emulator streams per exec at most; past it the command is killed (a runner's own cap comes first). */
    static final int EXEC_OUTPUT_CHARS = 72 << 20;

    private final Machine.Factory machines;
    /** When set, pods start here with the memory and CPU limits of their spec (else through {@link #machines}). */
    private final dev.sandbox4j.local.LocalSandboxRunner local;
    private final ServerSocket server;
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "agent-sandbox-emulator");
        t.setDaemon(true);
        return t;
    });
    final ScheduledExecutorService clock = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "agent-sandbox-emulator-expiry");
        t.setDaemon(true);
        return t;
    });
    private final Faults faults = new Faults();
    private final Ledger ledger = new Ledger();
    /** The same Sandboxes, with what each exec's command printed on stdout in place of the command received. */
    private final Ledger printed = new Ledger();
    private final AtomicInteger inFlight = new AtomicInteger();
    /** The requests in hand, each as {@code METHOD path since <epoch ms>}. */
    private final Map<Object, String> inHand = new ConcurrentHashMap<>();
    /** Objects by "resource/namespace/name". */
    final Map<String, ObjectNode> store = new LinkedHashMap<>();
    /** Late creates not yet stored, by key, each waiting for the client's read-back by name (see create). */
    private final Map<String, java.util.concurrent.CountDownLatch> lateLooks = new java.util.concurrent.ConcurrentHashMap<>();
    /** How long a late create waits for that read-back before it is stored anyway. */
    static final Duration LATE_LOOK_WAIT = Duration.ofSeconds(2);
    /** The extensions controller: templates, warm pools, claims. */
    private final Extensions extensions = new Extensions(this);
    private final AtomicInteger claimsCreated = new AtomicInteger();
    private final Map<String, Pod> pods = new ConcurrentHashMap<>();
    private final AtomicLong resourceVersion = new AtomicLong(1000);
    private final List<String> calls = Collections.synchronizedList(new ArrayList<>());
    /** "resource/name" of each create received (well-formed, before any fault acts), in order. */
    private final List<String> creates = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger created = new AtomicInteger();
    /** Sandboxes still to be held Pending when they start ({@link #holdPending}). */
    private final AtomicInteger toHold = new AtomicInteger();
    /** "namespace/name" of the Sandboxes held Pending now, oldest first; guarded by this. */
    private final Set<String> held = new java.util.LinkedHashSet<>();
    private final List<Socket> sockets = Collections.synchronizedList(new ArrayList<>());
    private volatile boolean closed;

    /** A started pod: its machine, one exec at a time. */
    private static final class Pod {
        final Machine machine;
        final ReentrantLock lock = new ReentrantLock();
        final boolean hostNetwork;

        Pod(Machine machine, boolean hostNetwork) {
            this.machine = machine;
            this.hostNetwork = hostNetwork;
        }
    }

    private AgentSandboxEmulator(Machine.Factory machines, dev.sandbox4j.local.LocalSandboxRunner local) throws IOException {
        this.machines = machines;
        this.local = local;
        this.server = new ServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        threads.execute(this::accept);
    }

    /**
     * Starts the emulator on an ephemeral loopback port.
     *
     * @param machines where pods run ({@code LocalMachines.create()} for real execution)
     * @return the running emulator
     * @throws IOException when no port can be bound
     */
    public static AgentSandboxEmulator start(Machine.Factory machines) throws IOException {
        return new AgentSandboxEmulator(machines, null);
    }

    /**
     * Starts the emulator with pods as local sandboxes on {@code runner} (the caller closes it), each
     * with the memory and CPU limits of its container's {@code resources.limits} where the local runner
     * enforces them, as a cluster's cgroups do.
     *
     * @param runner the local runner
     * @return the running emulator
     * @throws IOException when no port can be bound
     */
    public static AgentSandboxEmulator start(dev.sandbox4j.local.LocalSandboxRunner runner) throws IOException {
        return new AgentSandboxEmulator(null, java.util.Objects.requireNonNull(runner, "runner"));
    }

    /** @return the API server's URL, {@code http://127.0.0.1:<port>} */
    public String url() {
        return "http://" + server.getInetAddress().getHostAddress() + ":" + server.getLocalPort();
    }

    /** The knobs this emulator honours (see the class comment for where each acts). */
    private static final Set<Fault> KNOBS = Collections.unmodifiableSet(EnumSet.of(Fault.FAIL_CREATE, Fault.RATE_LIMIT_CREATE,
            Fault.LOSE_CREATE_RESPONSE, Fault.LATE_CREATE, Fault.HANG_LOOKUP, Fault.GARBLE_CREATE, Fault.GARBLE_ANSWER,
            Fault.LOSE_EXEC_RESPONSE, Fault.DROP_STREAM, Fault.FAIL_TEARDOWN, Fault.FAIL_EXEC));

    /**
     * The fault knobs. The create knobs (fail, rate limit, lost, late, garbled) act on Sandboxes and
     * SandboxClaims, the lookup hang on a list of Sandboxes by label selector, the answer garble on any
     * other 2xx REST answer, failExec, loseExecResponse and dropStream on a pod's exec, failTeardown on
     * the delete of a Sandbox or a SandboxClaim; the answer delay ({@link Faults#slow}) holds every
     * request before it is handled, the create delay every Sandbox and SandboxClaim create before it is
     * stored; hostile framing is not honoured.
     *
     * @return the fault knobs
     */
    public Faults faults() {
        return faults;
    }

    /** @return the knobs {@link #faults()} honours here: every {@link Fault} but {@link Fault#HOSTILE_FRAMING} */
    public Set<Fault> knobs() {
        return KNOBS;
    }

    /**
     * The record of what this emulator did: the Sandboxes clients created (by name, with their labels;
     * SandboxClaims and the Sandboxes of warm pools are not recorded), their teardowns, and each command a
     * pod of theirs received.
     *
     * @return the ledger
     */
    public Ledger ledger() {
        return ledger;
    }

    /**
     * The same Sandboxes and teardowns as {@link #ledger()}, with each exec recorded by what its command
     * printed on stdout (its first 4096 characters; nothing when it printed nothing) rather than by the
     * command received: the proof that code ran, for a client whose command line can decide not to run
     * its code (a request delivered twice, where the second start does nothing).
     *
     * @return the ledger of what the pods' commands printed
     */
    public Ledger printedLedger() {
        return printed;
    }

    /** @return requests being handled right now (an exec until its command ends, a late create until it is stored) */
    public int inFlight() {
        return inFlight.get();
    }

    /** @return the requests being handled right now, as {@code METHOD path since <epoch ms>}, in no order */
    public List<String> inFlightRequests() {
        return List.copyOf(inHand.values());
    }

    /** @return pods running now (machines open): the leak count */
    public int runningPods() {
        return pods.size();
    }

    /** @return stored objects (Sandboxes, NetworkPolicies, pods) */
    public synchronized int objects() {
        return store.size();
    }

    /**
     * @param resource the resource's plural name, such as {@code sandboxes}
     * @return stored objects of one resource ({@code sandboxes}, {@code networkpolicies}, {@code pods})
     */
    public synchronized int objects(String resource) {
        int n = 0;
        for (String k : store.keySet()) {
            if (k.startsWith(resource + "/")) {
                n++;
            }
        }
        return n;
    }

    /**
     * Holds the next {@code times} Sandboxes to start (created by a client, for a claim or by a warm
     * pool) short of Ready, as a cluster that cannot schedule their pods or pull their image: each gets
     * a pod object in phase {@code Pending} (no machine runs) and the condition Ready False, reason
     * {@code DependenciesNotReady}, message {@code Pod exists with phase: Pending} (the controller's
     * words), which is no terminal reason, and stays so until {@link #releasePending()}. A claim bound to
     * one mirrors that condition. Deleting a held Sandbox deletes its pod as usual. Adds to the count.
     *
     * @param times how many of the next Sandboxes to hold; not negative
     * @return this emulator
     * @throws IllegalArgumentException when {@code times} is negative
     */
    public AgentSandboxEmulator holdPending(int times) {
        if (times < 0) {
            throw new IllegalArgumentException("times must not be negative, was " + times);
        }
        toHold.addAndGet(times);
        return this;
    }

    /**
     * Starts the pods of every Sandbox held Pending that is still stored, on the calling thread, and
     * forgets the holds still to come: when it returns, each released Sandbox is Ready (or failed as
     * any start can); a claim bound to one follows on the extensions controller's next pass.
     *
     * @return how many held Sandboxes were started
     */
    public int releasePending() {
        List<String> release;
        synchronized (this) {
            toHold.set(0);
            release = List.copyOf(held);
            held.clear();
        }
        int n = 0;
        for (String k : release) {
            String[] nsName = k.split("/", 2);
            if (object("sandboxes", nsName[0], nsName[1]) != null) {
                reconcile(nsName[0], nsName[1]);
                n++;
            }
        }
        return n;
    }

    /** @return the Sandboxes held Pending now (those deleted meanwhile not counted) */
    public synchronized int heldPending() {
        held.removeIf(k -> !store.containsKey("sandboxes/" + k));
        return held.size();
    }

    /** Whether this starting Sandbox is to be held Pending: counts the hold down and notes it. */
    private synchronized boolean takeHold(String ns, String name) {
        if (toHold.getAndUpdate(n -> n > 0 ? n - 1 : 0) == 0) {
            return false;
        }
        held.add(ns + "/" + name);
        return true;
    }

    /** @return Sandboxes created since start */
    public int sandboxesCreated() {
        return created.get();
    }

    /** @return SandboxClaims created by clients since start */
    public int claimsCreated() {
        return claimsCreated.get();
    }

    /**
     * What a client left behind, pools aside: every stored object except templates, warm pools, the
     * NetworkPolicies templates own, the Sandboxes pools own (unclaimed) and their pods; and every
     * running pod whose Sandbox is not a pool's. Zero when nothing leaked.
     *
     * @return how many stored objects and running pods are left outside the pools
     */
    public synchronized int leaksOutsidePools() {
        Set<String> poolOwned = new java.util.HashSet<>();
        Set<String> owners = new java.util.HashSet<>();
        for (Map.Entry<String, ObjectNode> e : store.entrySet()) {
            if (e.getKey().startsWith("sandboxwarmpools/") || e.getKey().startsWith("sandboxtemplates/")) {
                owners.add(e.getValue().path("metadata").path("uid").asText());
            }
        }
        int n = 0;
        for (Map.Entry<String, ObjectNode> e : store.entrySet()) {
            String k = e.getKey();
            if (k.startsWith("sandboxwarmpools/") || k.startsWith("sandboxtemplates/")) {
                continue;
            }
            boolean ownedByPool = false;
            for (JsonNode ref : e.getValue().path("metadata").path("ownerReferences")) {
                ownedByPool |= owners.contains(ref.path("uid").asText());
            }
            // a pod is stored after its Sandbox, so a pool's Sandbox is seen before its pod
            if (ownedByPool) {
                if (k.startsWith("sandboxes/")) {
                    poolOwned.add(k.substring("sandboxes/".length()));
                }
                continue;
            }
            if (k.startsWith("pods/") && poolOwned.contains(k.substring("pods/".length()))) {
                continue;
            }
            n++;
        }
        for (String pod : pods.keySet()) {
            if (!poolOwned.contains(pod) && !store.containsKey("pods/" + pod)) {
                n++; // a machine running without its pod object
            }
        }
        return n;
    }

    /**
     * @param namespace the pool's namespace
     * @param pool the SandboxWarmPool's name
     * @return the pool's Sandboxes that are Ready and unclaimed
     */
    public synchronized int readyWarm(String namespace, String pool) {
        ObjectNode p = store.get("sandboxwarmpools/" + namespace + "/" + pool);
        return p == null ? 0 : p.path("status").path("readyReplicas").asInt(0);
    }

    long nextResourceVersion() {
        return resourceVersion.incrementAndGet();
    }

    boolean podRunning(String ns, String name) {
        return pods.containsKey(ns + "/" + name);
    }

    /** Starts the pod of a Sandbox the controller stored itself. */
    void startPod(String ns, String name) {
        threads.execute(() -> reconcile(ns, name));
    }

    /** Garbage collection: deletes what names {@code uid} as its controller, and what those own in turn. */
    void collectOwnedBy(String ns, String uid) {
        List<String[]> gone = new ArrayList<>();
        synchronized (this) {
            for (Iterator<Map.Entry<String, ObjectNode>> it = store.entrySet().iterator(); it.hasNext();) {
                Map.Entry<String, ObjectNode> e = it.next();
                String[] k = e.getKey().split("/", 3);
                if (k[1].equals(ns) && Extensions.ownedBy(e.getValue(), uid)) {
                    it.remove();
                    gone.add(new String[] {k[0], k[2], e.getValue().path("metadata").path("uid").asText()});
                }
            }
        }
        for (String[] g : gone) {
            if (g[0].equals("sandboxes")) {
                stopPod(ns, g[1]);
            }
            collectOwnedBy(ns, g[2]);
        }
    }

    /** @return every request so far as {@code METHOD path}, in order (for counting API calls per run) */
    public List<String> calls() {
        synchronized (calls) {
            return List.copyOf(calls);
        }
    }

    /**
     * The creates received, as {@code <resource>/<name>} (such as {@code sandboxes/sandbox4j-abc}), in order:
     * each well-formed create of any resource, whether a fault then failed it, dropped its answer or it
     * met a 409; a client's re-sent create shows its name again.
     *
     * @return the creates received since the start or the last {@link #clearCalls()}
     */
    public List<String> createsReceived() {
        synchronized (creates) {
            return List.copyOf(creates);
        }
    }

    /** Forgets the recorded calls and creates. */
    public void clearCalls() {
        calls.clear();
        creates.clear();
    }

    /**
     * @param resource the resource's plural name, such as {@code sandboxes} or {@code sandboxclaims}
     * @param namespace the object's namespace
     * @param name the object's name
     * @return a stored object as JSON, or null
     */
    public synchronized JsonNode object(String resource, String namespace, String name) {
        ObjectNode o = store.get(resource + "/" + namespace + "/" + name);
        return o == null ? null : o.deepCopy();
    }

    /**
     * Changes one label of a stored Sandbox (in any namespace), as anyone allowed to patch Sandboxes in
     * its namespace could after the create: for tests of what a client trusts in a label (attach
     * compares the policy label with the spec it expects). Its pod, its network and its clock are
     * unchanged; the Sandbox's {@code resourceVersion} moves on, as after a patch.
     *
     * @param name the Sandbox's name
     * @param key the label to set
     * @param value its new value
     * @return false when no Sandbox of that name is stored, or its pod is gone (expired or deleted)
     */
    public synchronized boolean alterLabel(String name, String key, String value) {
        for (Map.Entry<String, ObjectNode> e : store.entrySet()) {
            String k = e.getKey();
            if (k.startsWith("sandboxes/") && k.endsWith("/" + name) && k.split("/").length == 3) {
                String ns = k.split("/")[1];
                if (!pods.containsKey(ns + "/" + name)) {
                    return false;
                }
                ObjectNode meta = (ObjectNode) e.getValue().get("metadata");
                meta.with("labels").put(key, value);
                meta.put("resourceVersion", Long.toString(resourceVersion.incrementAndGet()));
                return true;
            }
        }
        return false;
    }

    private void accept() {
        while (!closed) {
            try {
                Socket s = server.accept();
                s.setTcpNoDelay(true);
                sockets.add(s);
                threads.execute(() -> serve(s));
            } catch (IOException e) {
                if (!closed) {
                    log.debug("accept failed: {}", e.toString());
                }
            }
        }
    }

    private void serve(Socket s) {
        try (s) {
            InputStream in = new BufferedInputStream(s.getInputStream());
            OutputStream out = new BufferedOutputStream(s.getOutputStream());
            while (!closed) {
                Wire.Request r = Wire.read(in);
                if (r == null) {
                    return;
                }
                calls.add(r.method + " " + r.path + (r.query.isEmpty() || r.isUpgrade() ? "" : " " + r.query));
                Object token = new Object();
                inHand.put(token, r.method + " " + r.path + " since " + System.currentTimeMillis());
                inFlight.incrementAndGet();
                try {
                    try {
                        faults.pause(); // the answer delay: every request held before it is handled
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return; // the emulator is closing
                    }
                    if (r.isUpgrade()) {
                        exec(r, in, out, s);
                        return;
                    }
                    Answer a;
                    try {
                        a = handle(r, s);
                    } catch (RuntimeException e) {
                        log.warn("emulator failed on {} {}", r.method, r.path, e);
                        a = status(500, "InternalError", e.toString());
                    }
                    if (a == null) {
                        return; // a lost answer: the connection drops
                    }
                    byte[] body = JSON.writeValueAsBytes(a.body);
                    if (a.code >= 200 && a.code <= 299 && (a.create ? faults.takeGarbledCreate() : faults.takeGarbledAnswer())) {
                        body = garbled(body.length);
                    }
                    Wire.respond(out, a.code, reason(a.code), "application/json", body,
                            a.retryAfter >= 0 ? "Retry-After: " + a.retryAfter + "\r\n" : "");
                } finally {
                    inHand.remove(token);
                    inFlight.decrementAndGet();
                }
            }
        } catch (IOException e) {
            log.debug("connection ended: {}", e.toString());
        } finally {
            sockets.remove(s);
        }
    }

    private static String reason(int code) {
        switch (code) {
            case 200: return "OK";
            case 201: return "Created";
            case 400: return "Bad Request";
            case 404: return "Not Found";
            case 405: return "Method Not Allowed";
            case 409: return "Conflict";
            case 422: return "Unprocessable Entity";
            case 429: return "Too Many Requests";
            default: return code >= 500 ? "Server Error" : "Status";
        }
    }

    /**
     * One answer: its status and body; whether it answers a create (the garbled-create knob, not the
     * garbled-answer one); the {@code Retry-After} seconds to send, or -1 for none.
     */
    private record Answer(int code, JsonNode body, boolean create, int retryAfter) {
        Answer(int code, JsonNode body) {
            this(code, body, false, -1);
        }
    }

    /** {@code n} bytes of garbage in place of a JSON body (the same garbage as the REST emulators'). */
    private static byte[] garbled(int n) {
        byte[] junk = "#garbled\u0000<{".getBytes(StandardCharsets.ISO_8859_1);
        byte[] out = new byte[n];
        for (int i = 0; i < n; i++) {
            out[i] = junk[i % junk.length];
        }
        return out;
    }

    private static Answer status(int code, String reason, String message) {
        ObjectNode s = JSON.createObjectNode();
        s.put("kind", "Status").put("apiVersion", "v1");
        s.putObject("metadata");
        s.put("status", "Failure").put("message", message).put("reason", reason).put("code", code);
        return new Answer(code, s);
    }

    /** The resources served, with their API version and kind. */
    private static final Map<String, String[]> RESOURCES = Map.of(
            "sandboxes", new String[] {"agents.x-k8s.io/v1beta1", "Sandbox"},
            "sandboxtemplates", new String[] {Extensions.API_VERSION, "SandboxTemplate"},
            "sandboxclaims", new String[] {Extensions.API_VERSION, "SandboxClaim"},
            "sandboxwarmpools", new String[] {Extensions.API_VERSION, "SandboxWarmPool"},
            "networkpolicies", new String[] {"networking.k8s.io/v1", "NetworkPolicy"},
            "pods", new String[] {"v1", "Pod"});

    private Answer handle(Wire.Request r, Socket s) {
        if (r.path.equals("/version")) {
            ObjectNode v = JSON.createObjectNode();
            v.put("major", "1").put("minor", "33").put("gitVersion", "v1.33.0-sandbox4j-emulator").put("platform", "linux/amd64");
            return new Answer(200, v);
        }
        JsonNode discovery = discovery(r.path);
        if (discovery != null) {
            return new Answer(200, discovery);
        }
        Matcher m = PATH.matcher(r.path);
        if (!m.matches()) {
            return status(404, "NotFound", "the server could not find the requested resource");
        }
        String apiVersion = m.group(1) != null ? m.group(1) : m.group(2) + "/" + m.group(3);
        String ns = m.group(4);
        String resource = m.group(5);
        String name = m.group(6);
        String sub = m.group(7);
        String[] def = RESOURCES.get(resource);
        if (def == null || !def[0].equals(apiVersion) || sub != null) {
            return status(404, "NotFound", "the server could not find the requested resource");
        }
        String kind = def[1];
        switch (r.method) {
            case "POST":
                if (name != null) {
                    return status(405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
                }
                if (resource.equals("pods")) {
                    return status(403, "Forbidden", "pods are made by the controller in this emulator");
                }
                return create(resource, apiVersion, kind, ns, r.body, s);
            case "GET":
                if (name == null && resource.equals("sandboxes") && r.param("labelSelector") != null) {
                    // a lookup by label (the runner's by run id after an ambiguous create): the hang knob
                    Duration hang = faults.takeHungLookup();
                    if (hang != null && (!sleep(hang) || ThreadLocalRandom.current().nextBoolean())) {
                        return null; // dropped after the hang (or the emulator closed meanwhile)
                    }
                }
                return name == null ? list(resource, apiVersion, kind, ns, r.param("labelSelector")) : get(resource, kind, ns, name);
            case "DELETE":
                if (name == null || resource.equals("pods")) {
                    return status(405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
                }
                return delete(resource, kind, ns, name);
            default:
                return status(405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
        }
    }

    /** The legacy discovery documents a client such as kubectl reads first: only what is served. */
    private JsonNode discovery(String path) {
        String p = path.endsWith("/") && path.length() > 1 ? path.substring(0, path.length() - 1) : path;
        switch (p) {
            case "/api": {
                ObjectNode v = JSON.createObjectNode().put("kind", "APIVersions");
                v.putArray("versions").add("v1");
                v.putArray("serverAddressByClientCIDRs").addObject().put("clientCIDR", "0.0.0.0/0")
                        .put("serverAddress", "127.0.0.1:" + server.getLocalPort());
                return v;
            }
            case "/apis": {
                ObjectNode l = JSON.createObjectNode().put("kind", "APIGroupList").put("apiVersion", "v1");
                ArrayNode groups = l.putArray("groups");
                for (String[] g : new String[][] {{"agents.x-k8s.io", "v1beta1"}, {"extensions.agents.x-k8s.io", "v1beta1"},
                    {"networking.k8s.io", "v1"}}) {
                    ObjectNode group = groups.addObject().put("name", g[0]);
                    ObjectNode v = JSON.createObjectNode().put("groupVersion", g[0] + "/" + g[1]).put("version", g[1]);
                    group.putArray("versions").add(v);
                    group.set("preferredVersion", v.deepCopy());
                }
                return l;
            }
            case "/api/v1":
                return resources("v1", new String[][] {{"pods", "pod", "Pod", "get,list"}, {"pods/exec", "", "PodExecOptions", "create,get"}});
            case "/apis/agents.x-k8s.io/v1beta1":
                return resources("agents.x-k8s.io/v1beta1", new String[][] {{"sandboxes", "sandbox", "Sandbox", "create,delete,get,list"}});
            case "/apis/extensions.agents.x-k8s.io/v1beta1":
                return resources(Extensions.API_VERSION, new String[][] {
                    {"sandboxtemplates", "sandboxtemplate", "SandboxTemplate", "create,delete,get,list"},
                    {"sandboxclaims", "sandboxclaim", "SandboxClaim", "create,delete,get,list"},
                    {"sandboxwarmpools", "sandboxwarmpool", "SandboxWarmPool", "create,delete,get,list"}});
            case "/apis/networking.k8s.io/v1":
                return resources("networking.k8s.io/v1", new String[][] {{"networkpolicies", "networkpolicy", "NetworkPolicy",
                    "create,delete,get,list"}});
            default:
                return null;
        }
    }

    private static JsonNode resources(String groupVersion, String[][] rows) {
        ObjectNode l = JSON.createObjectNode().put("kind", "APIResourceList").put("apiVersion", "v1").put("groupVersion", groupVersion);
        ArrayNode items = l.putArray("resources");
        for (String[] r : rows) {
            ObjectNode o = items.addObject().put("name", r[0]).put("singularName", r[1]).put("namespaced", true).put("kind", r[2]);
            ArrayNode verbs = o.putArray("verbs");
            for (String v : r[3].split(",")) {
                verbs.add(v);
            }
            String shortName = switch (r[0]) {
                case "sandboxes" -> "sandbox";
                case "sandboxtemplates" -> "sandboxtemplate";
                case "sandboxclaims" -> "sandboxclaim";
                case "sandboxwarmpools" -> "swp";
                default -> null;
            };
            if (shortName != null) {
                o.putArray("shortNames").add(shortName);
            }
        }
        return l;
    }

    /** Sleeps {@code d}; false when interrupted (the emulator is closing), with the flag set again. */
    private static boolean sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private Answer create(String resource, String apiVersion, String kind, String ns, byte[] body, Socket s) {
        JsonNode parsed;
        try {
            parsed = JSON.readTree(body);
        } catch (IOException e) {
            return status(400, "BadRequest", "the body is not JSON");
        }
        if (!(parsed instanceof ObjectNode o) || !apiVersion.equals(o.path("apiVersion").asText())
                || !kind.equals(o.path("kind").asText())) {
            return status(400, "BadRequest", "the object is not a " + kind + " of " + apiVersion);
        }
        String name = o.path("metadata").path("name").asText("");
        if (!name.matches("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")) {
            return status(422, "Invalid", kind + " \"" + name + "\" is invalid: metadata.name must be a DNS label");
        }
        if (!o.path("metadata").path("namespace").asText(ns).equals(ns)) {
            return status(400, "BadRequest", "the namespace of the object does not match the namespace on the request");
        }
        String invalid = resource.equals("sandboxes") ? invalidSandbox(o) : Extensions.invalid(resource, o);
        if (invalid != null) {
            return status(422, "Invalid", kind + "." + apiVersion.substring(0, apiVersion.indexOf('/')) + " \"" + name
                    + "\" is invalid: " + invalid);
        }
        this.creates.add(resource + "/" + name);
        boolean creates = resource.equals("sandboxes") || resource.equals("sandboxclaims");
        Duration[] late = null;
        if (creates) {
            try {
                faults.pauseCreate(); // held before anything is stored; stored after, whatever the client did
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null; // the emulator is closing
            }
            int failure = faults.takeCreateFailure();
            if (failure == 429) {
                // the API server's throttling answer: Retry-After, and the same seconds in the Status's details
                Answer a = status(429, "TooManyRequests", "injected failure: the server has received too many requests");
                int after = faults.retryAfterSeconds();
                if (after >= 0) {
                    ((ObjectNode) a.body).putObject("details").put("retryAfterSeconds", after);
                }
                return new Answer(429, a.body, false, after);
            }
            if (failure != 0) {
                return status(failure, "InternalError", "injected failure");
            }
            late = faults.takeLateCreate();
            if (late != null) {
                // the connection hangs, then drops; the object is stored only some time after (a late write),
                // and after the client's read-back by name when it makes one within LATE_LOOK_WAIT: a write
                // that lands after the client looked, which the read-back cannot settle (a lost answer to a
                // stored create is the other knob's); else how many late creates a runner that reads back
                // could resolve would depend on how loaded the machine is
                String key = resource + "/" + ns + "/" + name;
                java.util.concurrent.CountDownLatch looked = new java.util.concurrent.CountDownLatch(1);
                lateLooks.put(key, looked);
                try {
                    if (!sleep(late[0])) {
                        return null;
                    }
                    closeQuietly(s);
                    if (!sleep(late[1].minus(late[0]))) {
                        return null;
                    }
                    try {
                        looked.await(LATE_LOOK_WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return null;
                    }
                } finally {
                    lateLooks.remove(key, looked);
                }
            }
        }
        ObjectNode stored;
        synchronized (this) {
            if (closed) {
                return null;
            }
            String key = resource + "/" + ns + "/" + name;
            if (store.containsKey(key)) {
                return status(409, "AlreadyExists", kind.toLowerCase() + " \"" + name + "\" already exists");
            }
            stored = o.deepCopy();
            ObjectNode meta = (ObjectNode) stored.get("metadata");
            meta.put("namespace", ns).put("uid", UUID.randomUUID().toString())
                    .put("resourceVersion", Long.toString(resourceVersion.incrementAndGet()))
                    .put("creationTimestamp", Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString())
                    .put("generation", 1);
            stored.remove("status");
            store.put(key, stored);
        }
        if (resource.equals("sandboxes")) {
            created.incrementAndGet();
            Map<String, String> labels = new LinkedHashMap<>();
            stored.path("metadata").path("labels").fields().forEachRemaining(e -> labels.put(e.getKey(), e.getValue().asText()));
            ledger.created(name, labels);
            printed.created(name, labels);
            threads.execute(() -> reconcile(ns, name));
        } else if (resource.equals("sandboxclaims")) {
            claimsCreated.incrementAndGet();
        }
        extensions.kick();
        if (late != null) {
            return null; // the client is long gone
        }
        if (creates && faults.takeLostCreate()) {
            return null;
        }
        return new Answer(201, stored.deepCopy(), creates, -1);
    }

    /** The CRD's schema checks a runner could trip (required fields, enums). */
    private static String invalidSandbox(ObjectNode o) {
        JsonNode spec = o.path("spec");
        JsonNode containers = spec.path("podTemplate").path("spec").path("containers");
        if (!containers.isArray() || containers.isEmpty()) {
            return "spec.podTemplate.spec.containers: Required value";
        }
        String mode = spec.path("operatingMode").asText("Running");
        if (!mode.equals("Running") && !mode.equals("Suspended")) {
            return "spec.operatingMode: Unsupported value: \"" + mode + "\"";
        }
        String policy = spec.path("shutdownPolicy").asText("Retain");
        if (!policy.equals("Delete") && !policy.equals("Retain")) {
            return "spec.shutdownPolicy: Unsupported value: \"" + policy + "\"";
        }
        if (spec.has("shutdownTime")) {
            try {
                Instant.parse(spec.get("shutdownTime").asText());
            } catch (DateTimeParseException e) {
                return "spec.shutdownTime: Invalid value: must be a date-time";
            }
        }
        return null;
    }

    private synchronized Answer get(String resource, String kind, String ns, String name) {
        ObjectNode o = store.get(resource + "/" + ns + "/" + name);
        if (o == null) {
            java.util.concurrent.CountDownLatch late = lateLooks.get(resource + "/" + ns + "/" + name);
            if (late != null) {
                late.countDown(); // a late create waits for this answer before it is stored
            }
            return status(404, "NotFound", resource + " \"" + name + "\" not found");
        }
        return new Answer(200, o.deepCopy());
    }

    private synchronized Answer list(String resource, String apiVersion, String kind, String ns, String selector) {
        ObjectNode l = JSON.createObjectNode();
        l.put("apiVersion", apiVersion).put("kind", kind + "List");
        l.putObject("metadata").put("resourceVersion", Long.toString(resourceVersion.get()));
        ArrayNode items = l.putArray("items");
        for (Map.Entry<String, ObjectNode> e : store.entrySet()) {
            if (e.getKey().startsWith(resource + "/" + ns + "/") && matches(selector, e.getValue().path("metadata").path("labels"))) {
                items.add(e.getValue().deepCopy());
            }
        }
        return new Answer(200, l);
    }

    /** Equality ({@code k=v}, {@code k==v}), inequality ({@code k!=v}) and existence ({@code k}, {@code !k}). */
    static boolean matches(String selector, JsonNode labels) {
        if (selector == null || selector.isBlank()) {
            return true;
        }
        for (String term : selector.split(",")) {
            term = term.trim();
            if (term.contains("!=")) {
                String[] kv = term.split("!=", 2);
                if (kv[1].equals(labels.path(kv[0]).asText(null))) {
                    return false;
                }
            } else if (term.contains("=")) {
                String[] kv = term.split("==?", 2);
                if (!kv[1].equals(labels.path(kv[0]).asText(null))) {
                    return false;
                }
            } else if (term.startsWith("!")) {
                if (labels.has(term.substring(1))) {
                    return false;
                }
            } else if (!labels.has(term)) {
                return false;
            }
        }
        return true;
    }

    private Answer delete(String resource, String kind, String ns, String name) {
        if (resource.equals("sandboxes") || resource.equals("sandboxclaims")) {
            int failure = faults.takeTeardownFailure();
            if (failure != 0) {
                return status(failure, "InternalError", "injected failure");
            }
        }
        ObjectNode o;
        synchronized (this) {
            o = store.remove(resource + "/" + ns + "/" + name);
        }
        if (o == null) {
            return status(404, "NotFound", resource + " \"" + name + "\" not found");
        }
        if (resource.equals("sandboxes")) {
            ledger.killedByClient(name);
            printed.killedByClient(name);
            stopPod(ns, name); // the pod is owned by the Sandbox: garbage-collected with it
        } else {
            collectOwnedBy(ns, o.path("metadata").path("uid").asText()); // what the object owned goes with it
        }
        extensions.kick();
        return new Answer(200, o);
    }

    void stopPod(String ns, String name) {
        synchronized (this) {
            store.remove("pods/" + ns + "/" + name);
        }
        ledger.destroyed(name); // its pod is gone: whatever the Sandbox object does next, it runs nothing more
        printed.destroyed(name);
        Pod p = pods.remove(ns + "/" + name);
        if (p != null) {
            p.machine.close();
        }
    }

    // ---- the controller

    private void reconcile(String ns, String name) {
        ObjectNode sb;
        synchronized (this) {
            ObjectNode o = store.get("sandboxes/" + ns + "/" + name);
            if (o == null) {
                return;
            }
            sb = o.deepCopy();
        }
        JsonNode spec = sb.path("spec");
        if (spec.path("operatingMode").asText("Running").equals("Suspended")) {
            setReady(ns, name, false, "SandboxSuspended", "Sandbox is suspended", null);
            return;
        }
        JsonNode podSpec = spec.path("podTemplate").path("spec");
        List<String> refused = restrictedViolations(podSpec);
        if (!refused.isEmpty()) {
            setReady(ns, name, false, "ReconcilerError", "Error seen: pods \"" + name + "\" is forbidden: violates PodSecurity"
                    + " \"restricted:latest\": " + String.join(", ", refused), null);
            return;
        }
        Map<String, String> podLabels = new LinkedHashMap<>();
        spec.path("podTemplate").path("metadata").path("labels").fields()
                .forEachRemaining(e -> podLabels.put(e.getKey(), e.getValue().asText()));
        podLabels.put(NAME_HASH_LABEL, nameHash(name));
        if (takeHold(ns, name)) {
            synchronized (this) {
                if (!closed && store.containsKey("sandboxes/" + ns + "/" + name)) {
                    ObjectNode pending = pod(sb, name, ns, podLabels, podSpec);
                    ((ObjectNode) pending.get("spec")).remove("nodeName"); // never scheduled
                    ObjectNode status = pending.putObject("status");
                    status.put("phase", "Pending");
                    status.putArray("conditions").addObject().put("type", "PodScheduled").put("status", "False")
                            .put("reason", "Unschedulable");
                    store.put("pods/" + ns + "/" + name, pending);
                }
            }
            setReady(ns, name, false, "DependenciesNotReady", "Pod exists with phase: Pending", null);
            return;
        }
        boolean hostNetwork = egressAllowsEverything(ns, podLabels);
        Map<String, String> env = new LinkedHashMap<>();
        for (JsonNode e : podSpec.path("containers").path(0).path("env")) {
            env.put(e.path("name").asText(), e.path("value").asText());
        }
        Instant shutdown = spec.has("shutdownTime") ? Instant.parse(spec.get("shutdownTime").asText()) : null;
        Duration lifetime = shutdown == null ? Duration.ofHours(1)
                : Duration.between(Instant.now(), shutdown).plusSeconds(30);
        Machine machine;
        try {
            Duration backstop = lifetime.isNegative() ? Duration.ofSeconds(1) : lifetime;
            machine = local != null
                    ? dev.sandbox4j.emulators.LocalMachine.open(local, hostNetwork, env, backstop,
                            limits(podSpec.path("containers").path(0).path("resources").path("limits")))
                    : machines.open(hostNetwork, env, backstop);
        } catch (Exception e) {
            log.warn("emulated pod {} could not start: {}", name, e.toString());
            setReady(ns, name, false, "PodFailed", "Pod failed", null);
            return;
        }
        synchronized (this) {
            if (closed || !store.containsKey("sandboxes/" + ns + "/" + name)) {
                machine.close(); // deleted while starting
                return;
            }
            pods.put(ns + "/" + name, new Pod(machine, hostNetwork));
            store.put("pods/" + ns + "/" + name, pod(sb, name, ns, podLabels, podSpec));
        }
        setReady(ns, name, true, "DependenciesReady", "Pod is Ready", podLabels.get(NAME_HASH_LABEL));
        if (shutdown != null) {
            long delay = Math.max(0, Duration.between(Instant.now(), shutdown).toMillis());
            String policy = spec.path("shutdownPolicy").asText("Retain");
            clock.schedule(() -> expire(ns, name, policy), delay, TimeUnit.MILLISECONDS);
        }
    }

    private void expire(String ns, String name, String policy) {
        stopPod(ns, name);
        if (policy.equals("Delete")) {
            synchronized (this) {
                store.remove("sandboxes/" + ns + "/" + name);
            }
        } else {
            setReady(ns, name, false, "SandboxExpired", "Sandbox has expired", null);
        }
        extensions.kick();
    }

    private synchronized void setReady(String ns, String name, boolean ready, String reason, String message, String hash) {
        ObjectNode sb = store.get("sandboxes/" + ns + "/" + name);
        if (sb == null) {
            return;
        }
        ObjectNode status = JSON.createObjectNode();
        ArrayNode conditions = status.putArray("conditions");
        ObjectNode c = conditions.addObject();
        c.put("type", "Ready").put("status", ready ? "True" : "False")
                .put("observedGeneration", sb.path("metadata").path("generation").asLong(1))
                .put("lastTransitionTime", Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString())
                .put("reason", reason).put("message", message);
        if (ready) {
            status.put("selector", NAME_HASH_LABEL + "=" + hash);
            status.putArray("podIPs").add("127.0.0.1");
            status.put("nodeName", "sandbox4j-emulator");
        }
        sb.set("status", status);
        ((ObjectNode) sb.get("metadata")).put("resourceVersion", Long.toString(resourceVersion.incrementAndGet()));
        extensions.kick(); // pools count their Ready Sandboxes, claims mirror their Sandbox's Ready
    }

    private ObjectNode pod(ObjectNode sandbox, String name, String ns, Map<String, String> labels, JsonNode podSpec) {
        ObjectNode p = JSON.createObjectNode();
        p.put("apiVersion", "v1").put("kind", "Pod");
        ObjectNode meta = p.putObject("metadata");
        meta.put("name", name).put("namespace", ns).put("uid", UUID.randomUUID().toString())
                .put("resourceVersion", Long.toString(resourceVersion.incrementAndGet()));
        ObjectNode l = meta.putObject("labels");
        labels.forEach(l::put);
        ObjectNode owner = meta.putArray("ownerReferences").addObject();
        owner.put("apiVersion", "agents.x-k8s.io/v1beta1").put("kind", "Sandbox").put("name", name)
                .put("uid", sandbox.path("metadata").path("uid").asText()).put("controller", true);
        p.set("spec", podSpec.deepCopy());
        ((ObjectNode) p.get("spec")).put("nodeName", "sandbox4j-emulator");
        ObjectNode status = p.putObject("status");
        status.put("phase", "Running").put("podIP", "127.0.0.1");
        status.putArray("podIPs").addObject().put("ip", "127.0.0.1");
        status.putArray("conditions").addObject().put("type", "Ready").put("status", "True");
        return p;
    }

    /** Memory ({@code Mi}, {@code Gi}) and whole CPUs from a container's limits; other forms are left to the default. */
    static dev.sandbox4j.policy.Limits limits(JsonNode limits) {
        dev.sandbox4j.policy.Limits.Builder b = dev.sandbox4j.policy.Limits.builder();
        String mem = limits.path("memory").asText("");
        if (mem.matches("[0-9]+Mi")) {
            b.memoryMib(Integer.parseInt(mem.substring(0, mem.length() - 2)));
        } else if (mem.matches("[0-9]+Gi")) {
            b.memoryMib(Integer.parseInt(mem.substring(0, mem.length() - 2)) * 1024);
        }
        String cpu = limits.path("cpu").asText("");
        if (cpu.matches("[0-9]+")) {
            b.vcpus(Integer.parseInt(cpu));
        }
        return b.build();
    }

    /** What the "restricted" Pod Security Standard refuses in a pod spec, one phrase per rule (as the API server words them). */
    static List<String> restrictedViolations(JsonNode podSpec) {
        List<String> v = new ArrayList<>();
        JsonNode podSc = podSpec.path("securityContext");
        if (podSpec.path("hostNetwork").asBoolean(false) || podSpec.path("hostPID").asBoolean(false)
                || podSpec.path("hostIPC").asBoolean(false)) {
            v.add("host namespaces");
        }
        for (JsonNode c : podSpec.path("containers")) {
            JsonNode sc = c.path("securityContext");
            String n = c.path("name").asText();
            if (sc.path("privileged").asBoolean(false)) {
                v.add("privileged (container \"" + n + "\")");
            }
            if (!sc.path("allowPrivilegeEscalation").isBoolean() || sc.path("allowPrivilegeEscalation").asBoolean()) {
                v.add("allowPrivilegeEscalation != false (container \"" + n + "\")");
            }
            boolean dropsAll = false;
            for (JsonNode d : sc.path("capabilities").path("drop")) {
                dropsAll |= d.asText().equals("ALL");
            }
            if (!dropsAll || sc.path("capabilities").path("add").size() > 0) {
                v.add("unrestricted capabilities (container \"" + n + "\")");
            }
            boolean nonRoot = sc.has("runAsNonRoot") ? sc.path("runAsNonRoot").asBoolean() : podSc.path("runAsNonRoot").asBoolean(false);
            long uid = sc.has("runAsUser") ? sc.path("runAsUser").asLong() : podSc.path("runAsUser").asLong(-1);
            if (!nonRoot || uid == 0) {
                v.add("runAsNonRoot != true (container \"" + n + "\")");
            }
            String seccomp = sc.path("seccompProfile").path("type").asText(podSc.path("seccompProfile").path("type").asText(""));
            if (!seccomp.equals("RuntimeDefault") && !seccomp.equals("Localhost")) {
                v.add("seccompProfile (container \"" + n + "\")");
            }
        }
        return v;
    }

    /**
     * Whether the NetworkPolicies selecting these pod labels leave every destination open: Kubernetes'
     * default when none selects the pod for egress; else some rule with no {@code to} and no {@code ports}.
     */
    private synchronized boolean egressAllowsEverything(String ns, Map<String, String> podLabels) {
        boolean selected = false;
        for (Map.Entry<String, ObjectNode> e : store.entrySet()) {
            if (!e.getKey().startsWith("networkpolicies/" + ns + "/")) {
                continue;
            }
            JsonNode spec = e.getValue().path("spec");
            if (!selects(spec.path("podSelector"), podLabels)) {
                continue;
            }
            boolean egress = false;
            for (JsonNode t : spec.path("policyTypes")) {
                egress |= t.asText().equals("Egress");
            }
            if (!spec.has("policyTypes")) {
                egress = spec.has("egress");
            }
            if (!egress) {
                continue;
            }
            selected = true;
            for (JsonNode rule : spec.path("egress")) {
                if ((!rule.has("to") || rule.path("to").isEmpty()) && (!rule.has("ports") || rule.path("ports").isEmpty())) {
                    return true;
                }
            }
        }
        return !selected;
    }

    private static boolean selects(JsonNode selector, Map<String, String> labels) {
        if (selector.has("matchExpressions") && selector.path("matchExpressions").size() > 0) {
            return true; // not emulated: taken as selecting the pod, the stricter reading
        }
        Iterator<Map.Entry<String, JsonNode>> it = selector.path("matchLabels").fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().asText().equals(labels.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    /** agent-sandbox's NameHash: FNV-1a (32 bit) of the name, 8 lower-case hex digits. */
    static String nameHash(String name) {
        int h = 0x811c9dc5;
        for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
            h ^= b & 0xff;
            h *= 0x01000193;
        }
        return String.format("%08x", h);
    }

    // ---- exec

    private void exec(Wire.Request r, InputStream in, OutputStream out, Socket s) throws IOException {
        Matcher m = Pattern.compile("^/api/v1/namespaces/([a-z0-9-]+)/pods/([^/]+)/exec$").matcher(r.path);
        if (!m.matches()) {
            respondStatus(out, status(404, "NotFound", "the server could not find the requested resource"));
            return;
        }
        String ns = m.group(1);
        String name = m.group(2);
        Pod pod = pods.get(ns + "/" + name);
        JsonNode podObject = object("pods", ns, name);
        if (pod == null || podObject == null) {
            respondStatus(out, status(404, "NotFound", "pods \"" + name + "\" not found"));
            return;
        }
        int failure = faults.takeExecFailure();
        if (failure != 0) {
            respondStatus(out, status(failure, failure == 429 ? "TooManyRequests" : failure == 401 ? "Unauthorized"
                    : failure == 404 ? "NotFound" : "InternalError", "injected failure"));
            return;
        }
        String container = r.param("container");
        String only = podObject.path("spec").path("containers").path(0).path("name").asText();
        if (container != null && !container.equals(only)) {
            respondStatus(out, status(400, "BadRequest", "container " + container + " is not valid for pod " + name));
            return;
        }
        List<String> argv = r.query.getOrDefault("command", List.of());
        if (argv.isEmpty()) {
            respondStatus(out, status(400, "BadRequest", "you must specify at least 1 command"));
            return;
        }
        String offered = String.valueOf(r.header("sec-websocket-protocol"));
        String protocol = null;
        for (String p : List.of("v5.channel.k8s.io", "v4.channel.k8s.io")) {
            for (String o : offered.split(",")) {
                if (protocol == null && o.trim().equals(p)) {
                    protocol = p;
                }
            }
        }
        if (protocol == null || r.header("sec-websocket-key") == null) {
            respondStatus(out, status(400, "BadRequest", "no supported channel protocol offered (v5 or v4.channel.k8s.io)"));
            return;
        }
        if (faults.takeLostExecResponse()) {
            // the command starts, and the connection drops before the upgrade is answered: on a cluster the
            // command runs on whatever happens to its stream, so here it runs to its end (or its pod's)
            closeQuietly(s);
            pod.lock.lock();
            try {
                if (!pod.machine.isClosed()) {
                    ledger.executed(name, String.join(" ", argv), pod.hostNetwork);
                    RunResult ran = pod.machine.exec(Execution.builder("exec " + ShellWords.quoteAll(argv)).language(Language.BASH)
                            .budget(Duration.ofMinutes(30)).outputLimit(1 << 16).build());
                    if (!ran.stdout().isEmpty()) {
                        printed.executed(name, ran.stdout(), pod.hostNetwork);
                    }
                }
            } catch (RuntimeException e) {
                log.debug("emulated pod {}: the command of a lost exec answer ended: {}", name, e.toString());
            } finally {
                pod.lock.unlock();
            }
            return;
        }
        WebSockets.switchProtocols(out, r.header("sec-websocket-key"), protocol);
        AtomicBoolean ended = new AtomicBoolean();
        AtomicBoolean running = new AtomicBoolean();
        // the client's frames: stdin is not served (the runner sends none); a close or a dropped connection kills the command
        threads.execute(() -> {
            try {
                while (true) {
                    WebSockets.Frame f = WebSockets.readFrame(in);
                    if (f.opcode == 8) {
                        break;
                    }
                    if (f.opcode == 9) {
                        synchronized (out) {
                            WebSockets.writeFrame(out, 10, f.payload, 0, f.payload.length);
                        }
                    }
                }
            } catch (IOException e) {
                // the connection ended
            }
            if (ended.compareAndSet(false, true) && running.get()) {
                pod.machine.killRunning();
            }
        });
        boolean dropStream = faults.takeDroppedStream();
        StringBuilder stdout = new StringBuilder();
        pod.lock.lock();
        RunResult result;
        try {
            if (ended.get()) {
                return;
            }
            ledger.executed(name, String.join(" ", argv), pod.hostNetwork);
            running.set(true);
            OutputListener listener = (stream, text) -> {
                if (stream == OutputListener.Stream.STDOUT) {
                    synchronized (stdout) {
                        if (stdout.length() < 4096) {
                            stdout.append(text, 0, Math.min(text.length(), 4096 - stdout.length()));
                        }
                    }
                }
                if (ended.get()) {
                    return;
                }
                byte[] b = text.getBytes(StandardCharsets.UTF_8);
                byte[] frame = new byte[b.length + 1];
                frame[0] = (byte) (stream == OutputListener.Stream.STDOUT ? 1 : 2);
                System.arraycopy(b, 0, frame, 1, b.length);
                try {
                    synchronized (out) {
                        WebSockets.writeFrame(out, 2, frame, 0, frame.length);
                    }
                } catch (IOException e) {
                    if (ended.compareAndSet(false, true)) {
                        pod.machine.killRunning();
                    }
                }
                if (dropStream) {
                    closeQuietly(s); // the injected fault: the stream breaks after the first output
                }
            };
            Execution e = Execution.builder("exec " + ShellWords.quoteAll(argv)).language(Language.BASH)
                    .budget(Duration.ofMinutes(30)).outputLimit(EXEC_OUTPUT_CHARS).hardCapBytes(2L * EXEC_OUTPUT_CHARS)
                    .stripControlCharacters(false).listener(listener).build();
            try {
                result = pod.machine.exec(e);
            } finally {
                synchronized (stdout) {
                    if (stdout.length() > 0) {
                        printed.executed(name, stdout.toString(), pod.hostNetwork);
                    }
                }
            }
            running.set(false);
        } finally {
            pod.lock.unlock();
        }
        if (ended.get() || pod.machine.isClosed() && result.status() != RunStatus.EXITED) {
            closeQuietly(s);
            return;
        }
        int exit = result.status() == RunStatus.EXITED && result.exitCode().isPresent() ? result.exitCode().getAsInt() : 137;
        ObjectNode st = JSON.createObjectNode();
        st.putObject("metadata");
        if (exit == 0) {
            st.put("status", "Success");
        } else {
            st.put("status", "Failure").put("message", "command terminated with non-zero exit code: exit status " + exit)
                    .put("reason", "NonZeroExitCode");
            st.putObject("details").putArray("causes").addObject().put("reason", "ExitCode").put("message", Integer.toString(exit));
        }
        byte[] json = JSON.writeValueAsBytes(st);
        byte[] frame = new byte[json.length + 1];
        frame[0] = 3;
        System.arraycopy(json, 0, frame, 1, json.length);
        synchronized (out) {
            WebSockets.writeFrame(out, 2, frame, 0, frame.length);
            byte[] normal = {0x03, (byte) 0xe8};
            WebSockets.writeFrame(out, 8, normal, 0, 2);
        }
        ended.set(true);
    }

    private static void respondStatus(OutputStream out, Answer a) throws IOException {
        Wire.respond(out, a.code, reason(a.code), "application/json", JSON.writeValueAsBytes(a.body));
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // already closed
        }
    }

    /** Stops serving and closes every pod's machine. */
    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            // closing anyway
        }
        synchronized (sockets) {
            for (Socket s : sockets) {
                closeQuietly(s);
            }
        }
        for (String k : List.copyOf(pods.keySet())) {
            Pod p = pods.remove(k);
            if (p != null) {
                p.machine.close();
            }
        }
        ledger.liveIds().forEach(ledger::destroyed); // the emulator's close ends every Sandbox it still held
        printed.liveIds().forEach(printed::destroyed);
        extensions.close();
        clock.shutdownNow();
        threads.shutdownNow();
    }

    @Override
    public String toString() {
        return "AgentSandboxEmulator[" + url() + "]";
    }
}
