package dev.sandbox4j.docker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.emulators.Faults;
import dev.sandbox4j.emulators.Ledger;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A fault-injecting proxy in front of the real Docker engine's Unix socket, for the Docker runner's fault
 * campaign: it listens on a socket of its own, forwards each HTTP/1.1 request to the engine on a fresh
 * connection ({@code Connection: close}), and on the way applies the emulators' {@link Faults} knobs
 * (5xx and 429 on create, a create whose answer is lost after the engine made the container, a late create
 * that the engine receives only after the client gave up, a garbled create answer, a hung lookup, a
 * garbled answer to any other call, an exec start whose answer is lost after the engine started it, an
 * exec stream cut after its first output, a failing removal) and, per operation, faults of its own
 * ({@link Effect}: the answer lost after the engine acted, the connection dropped before, a hang past the
 * client's deadline, garbage instead of HTTP, a 5xx) on the start, exec create and start, exec and
 * container inspect, lookups and removals: every {@code period}-th call of each operation, taking the
 * operation's effects in turn. The two delays of {@link Faults} apply too: the answer delay
 * ({@link Faults#slow}) holds every request before anything else happens to it, the create delay holds
 * every container create before it reaches the engine (which then creates, whatever the client did).
 *
 * <p>It records what the engine did in a {@link Ledger}, as the emulators do: a container the engine
 * created (with the labels and network mode of its create), code the engine was asked to start (the
 * exec's command line, with whether the container has a network), and a removal the engine carried out
 * (or a kill: the runner's containers are {@code AutoRemove}, so the engine removes a killed one itself).
 * A create body may also get a bind mount added (a host directory the campaign's code appends to, to
 * prove it ran once). Test code: it trusts the client and the engine to speak HTTP/1.1 with
 * Content-Length bodies, as OkHttp and dockerd do.
 */
public final class EngineFaultProxy implements AutoCloseable {
    /** The engine's operations this proxy tells apart. */
    public enum Op { CREATE, START, EXEC_CREATE, EXEC_START, EXEC_INSPECT, INSPECT, LIST, REMOVE, KILL, ATTACH, WAIT, OTHER }

    /** The proxy's own faults. */
    public enum Effect {
        /** The engine acted; the answer never reaches the client (the connection is closed). */
        LOSE_ANSWER,
        /** The connection is closed before anything reaches the engine. */
        DROP,
        /** Held past the client's deadline, then closed; the engine never sees it. */
        HANG,
        /** The engine acted; the client reads bytes that are not HTTP. */
        GARBAGE,
        /** Answered 500 without reaching the engine. */
        STATUS_5XX
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final byte[] HEAD_END = "\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    private final Path listen;
    private final Path engine;
    private final Faults faults;
    private final Ledger ledger;
    private final ServerSocketChannel server;
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "engine-fault-proxy");
        t.setDaemon(true);
        return t;
    });
    private final Map<Op, Set<Effect>> own = new EnumMap<>(Op.class);
    private final Map<Op, Integer> periods = new ConcurrentHashMap<>();
    private final Map<Op, AtomicInteger> calls = new EnumMap<>(Op.class);
    private final Map<Op, AtomicInteger> fires = new EnumMap<>(Op.class);
    private final Map<String, AtomicInteger> ownFired = new TreeMap<>();
    private final Map<String, String[]> execs = new ConcurrentHashMap<>();
    private final Map<String, Boolean> networked = new ConcurrentHashMap<>();
    /** A one-shot's container (its create's command is the code, not the init's sleep): its command line. */
    private final Map<String, String> oneShots = new ConcurrentHashMap<>();
    private final List<String> requests = java.util.Collections.synchronizedList(new ArrayList<>());
    /** The engine's answers to creates and removals, in order, as {@code OP target -> status at <ms>}. */
    private final List<String> answers = java.util.Collections.synchronizedList(new ArrayList<>());
    private final long started = System.nanoTime();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final Map<Long, String> inHand = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final AtomicLong bytesToClient = new AtomicLong();
    private final AtomicLong slowestCreateMs = new AtomicLong();
    private final AtomicInteger execStarts = new AtomicInteger();
    private final Map<String, Long> createTimes = new ConcurrentHashMap<>();
    private volatile int period;
    private volatile int offset;
    private volatile boolean armedOwn;
    private volatile Duration hang = Duration.ofSeconds(3);
    private volatile String bind;
    /** Where execs run as the supervisor go instead of the ledger, or null (the default: every exec in the ledger). */
    private volatile Ledger supervisorExecs;
    private volatile boolean closed;

    public EngineFaultProxy(Path listen, Path engine, Faults faults, Ledger ledger) throws IOException {
        this.listen = listen;
        this.engine = engine;
        this.faults = faults;
        this.ledger = ledger;
        for (Op op : Op.values()) {
            calls.put(op, new AtomicInteger());
            fires.put(op, new AtomicInteger());
        }
        Files.deleteIfExists(listen);
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(listen));
        threads.submit(this::accept);
    }

    /** Where clients connect: {@code unix://} + this. */
    public Path socket() {
        return listen;
    }

    /**
     * Turns the proxy's own faults on: each of {@code ops} gets, on every {@code period}-th call (from a
     * seeded offset), the next of its effects in turn; a hang lasts {@code hang}.
     */
    public EngineFaultProxy ownFaults(Map<Op, Set<Effect>> effects, int period, long seed, Duration hang) {
        own.clear();
        own.putAll(effects);
        this.period = period;
        this.offset = (int) Math.floorMod(seed, period);
        this.hang = hang;
        this.armedOwn = true;
        return this;
    }

    /**
     * How long a hang lasts (the {@link Faults#hangLookup} knob's lookup is held at least this long, and the
     * proxy's own {@link Effect#HANG}); 3 s unless set here or by {@link #ownFaults}.
     */
    public EngineFaultProxy hang(Duration hang) {
        this.hang = hang;
        return this;
    }

    /** Every {@code period}-th call of {@code op} (instead of the common period) gets its next effect: for a rare operation. */
    public EngineFaultProxy period(Op op, int period) {
        periods.put(op, period);
        return this;
    }

    /** Stops the proxy's own faults (the {@link Faults} knobs stay as they are armed). */
    public void ownFaultsOff() {
        armedOwn = false;
    }

    /**
     * Execs the runner starts as its supervisor (an exec create whose {@code User} is {@code 0:0}: its own
     * check after each exec that no process of the code's uid is left, the detached mark) are recorded in
     * {@code supervisor} (under the same container ids, which it gets as created too) instead of the ledger,
     * so that the ledger's execs are those of code alone. Off by default.
     */
    public EngineFaultProxy supervisorExecsApart(Ledger supervisor) {
        this.supervisorExecs = supervisor;
        return this;
    }

    /** Every create gets {@code hostDir} bind-mounted read-write at {@code target}. */
    public EngineFaultProxy bindIntoEveryCreate(Path hostDir, String target) {
        this.bind = hostDir + ":" + target + ":rw";
        return this;
    }

    /** How often each of the proxy's own faults took effect, as {@code OP/EFFECT}. */
    public Map<String, Integer> ownFired() {
        Map<String, Integer> out = new TreeMap<>();
        synchronized (ownFired) {
            ownFired.forEach((k, v) -> out.put(k, v.get()));
        }
        return out;
    }

    /** Every request seen, in order of arrival, as {@code METHOD target} (the path without the API version, and the query). */
    public List<String> requests() {
        synchronized (requests) {
            return List.copyOf(requests);
        }
    }

    /**
     * The engine's answers to container creates and removals, in the order they came, each as
     * {@code CREATE|REMOVE target -> status at <ms since the proxy started>} (a create's target names its
     * container): for a leak's diagnosis beside {@link #requests()}.
     */
    public List<String> answers() {
        synchronized (answers) {
            return List.copyOf(answers);
        }
    }

    private void answered(Op op, Req r, int status) {
        answers.add(op + " " + r.target.replaceFirst("^/v[0-9.]+", "") + " -> " + status + " at "
                + (System.nanoTime() - started) / 1_000_000);
    }

    /** Forgets the requests seen so far ({@link #requests()}); the per-operation counts stay. */
    public void clearRequests() {
        requests.clear();
    }

    /** Calls seen per operation. */
    public Map<Op, Integer> calls() {
        Map<Op, Integer> out = new EnumMap<>(Op.class);
        calls.forEach((k, v) -> out.put(k, v.get()));
        return out;
    }

    /** The longest a create took from its arrival here to the engine's answer (a late one's wait included), in ms. */
    public long slowestCreateMs() {
        return slowestCreateMs.get();
    }

    /** Per run id, how long its (last) create took from its arrival here to the engine's answer, in ms. */
    public Map<String, Long> createTimes() {
        return new TreeMap<>(createTimes);
    }

    /** Requests being handled now (a late create waits here before it reaches the engine). */
    public int inFlight() {
        return inFlight.get();
    }

    public List<String> inFlightRequests() {
        return new ArrayList<>(inHand.values());
    }

    /** Bytes written to clients so far (the wire bytes of every answer and stream). */
    public long bytesToClient() {
        return bytesToClient.get();
    }

    private void accept() {
        while (!closed) {
            SocketChannel c;
            try {
                c = server.accept();
            } catch (IOException e) {
                return;
            }
            threads.submit(() -> serve(c));
        }
    }

    // ---------------------------------------------------------------- one connection, one request

    private static final class Req {
        String method;
        String path;
        String head;
        String target;
        byte[] body;
    }

    private void serve(SocketChannel client) {
        long id = ids.incrementAndGet();
        inFlight.incrementAndGet();
        try (client) {
            InputStream in = in(client);
            Req r = readRequest(in);
            if (r == null) {
                return;
            }
            inHand.put(id, r.method + " " + r.path);
            OutputStream out = new CountingOut(out(client));
            Op op = op(r.method, r.path);
            calls.get(op).incrementAndGet();
            requests.add(r.method + " " + r.target.replaceFirst("^/v[0-9.]+", ""));
            faults.pause(); // the answer delay: held before the engine or any fault sees it
            Effect e = ownEffect(op);
            if (e == Effect.DROP) {
                return;
            }
            if (e == Effect.HANG) {
                Thread.sleep(hang.toMillis());
                return;
            }
            if (e == Effect.STATUS_5XX) {
                answer(out, 500, "{\"message\":\"injected by the fault proxy\"}");
                return;
            }
            switch (op) {
                case CREATE -> create(r, out, e);
                case EXEC_START, ATTACH -> stream(op, r, in, out, e);
                default -> plain(op, r, out, e);
            }
        } catch (IOException | InterruptedException ex) {
            // a client that went away, or the proxy closing
        } finally {
            inHand.remove(id);
            inFlight.decrementAndGet();
        }
    }

    private Effect ownEffect(Op op) {
        if (!armedOwn) {
            return null;
        }
        Set<Effect> effects = own.get(op);
        if (effects == null || effects.isEmpty()) {
            return null;
        }
        int n = calls.get(op).get() + offset;
        if (n % periods.getOrDefault(op, period) != 0) {
            return null;
        }
        List<Effect> list = new ArrayList<>(effects);
        list.sort(null);
        // each operation's faults take its effects in turn from a seeded one: k fires cover min(k, effects)
        Effect e = list.get((fires.get(op).getAndIncrement() + offset) % list.size());
        synchronized (ownFired) {
            ownFired.computeIfAbsent(op + "/" + e, k -> new AtomicInteger()).incrementAndGet();
        }
        return e;
    }

    private void create(Req r, OutputStream out, Effect own) throws IOException, InterruptedException {
        faults.pauseCreate(); // the create delay: the engine gets the create only after it
        int status = faults.takeCreateFailure();
        if (status > 0) {
            String extra = status == 429 && faults.retryAfterSeconds() >= 0 ? "Retry-After: " + faults.retryAfterSeconds() + "\r\n" : "";
            answer(out, status, extra, "{\"message\":\"injected " + status + "\"}");
            return;
        }
        ObjectNode body = (ObjectNode) JSON.readTree(r.body);
        if (bind != null) {
            ObjectNode host = body.with("HostConfig");
            ArrayNode binds = host.has("Binds") && host.get("Binds").isArray() ? (ArrayNode) host.get("Binds") : host.putArray("Binds");
            binds.add(bind);
            r.body = JSON.writeValueAsBytes(body);
        }
        long arrived = System.nanoTime();
        Duration[] late = faults.takeLateCreate();
        if (late != null) {
            // the client's connection hangs, then drops; the engine gets the create only afterwards
            Thread.sleep(late[0].toMillis());
            out.close();
            Thread.sleep(Math.max(0, late[1].toMillis() - late[0].toMillis()));
            Resp late2 = forward(r);
            answered(Op.CREATE, r, late2.status);
            recordCreate(body, late2);
            took(body, arrived);
            return;
        }
        Resp resp = forward(r);
        answered(Op.CREATE, r, resp.status);
        took(body, arrived);
        recordCreate(body, resp);
        if (resp.status / 100 == 2) {
            if (faults.takeLostCreate() || own == Effect.LOSE_ANSWER) {
                return;
            }
            if (faults.takeGarbledCreate()) {
                answer(out, resp.status, "{\"Id\":\"" + resp.json().path("Id").asText().substring(0, 6) + "\u0000\"garbl");
                return;
            }
        }
        relay(resp, out, own);
    }

    private void took(ObjectNode body, long arrived) {
        long ms = (System.nanoTime() - arrived) / 1_000_000;
        slowestCreateMs.accumulateAndGet(ms, Math::max);
        createTimes.put(body.path("Labels").path("sandbox4j-run-id").asText("?"), ms);
    }

    private void recordCreate(ObjectNode body, Resp resp) {
        if (resp.status != 201) {
            return;
        }
        String id = resp.json().path("Id").asText("");
        Map<String, String> labels = new LinkedHashMap<>();
        body.path("Labels").properties().forEach(e -> labels.put(e.getKey(), e.getValue().asText()));
        networked.put(id, !"none".equals(body.path("HostConfig").path("NetworkMode").asText("")));
        List<String> cmd = new ArrayList<>();
        body.path("Cmd").forEach(a -> cmd.add(a.asText()));
        if (!cmd.isEmpty() && !cmd.get(0).equals("sleep")) {
            oneShots.put(id, String.join(" ", cmd));
        }
        ledger.created(id, labels);
        Ledger supervisor = supervisorExecs;
        if (supervisor != null) {
            supervisor.created(id, labels);
        }
    }

    private void plain(Op op, Req r, OutputStream out, Effect own) throws IOException, InterruptedException {
        if (op == Op.LIST) {
            Duration hung = faults.takeHungLookup();
            if (hung != null) {
                Thread.sleep(Math.max(hung.toMillis(), hang.toMillis()));
                return;
            }
        }
        if (op == Op.REMOVE) {
            int status = faults.takeTeardownFailure();
            if (status > 0) {
                answer(out, status, "{\"message\":\"injected teardown failure\"}");
                return;
            }
        }
        String oneShot = op == Op.START ? oneShots.remove(id(r.path)) : null;
        boolean lostStart = oneShot != null && faults.takeLostExecResponse();
        Resp resp = forward(r);
        if (oneShot != null) {
            // a one-shot's code is its container's command: it runs from the start the engine received
            String container = id(r.path);
            ledger.executed(container, oneShot, Boolean.TRUE.equals(networked.get(container)));
            if (lostStart) {
                return; // the engine started it; the client hears nothing
            }
        }
        if (op == Op.EXEC_CREATE && resp.status == 201) {
            JsonNode create = JSON.readTree(r.body);
            List<String> argv = new ArrayList<>();
            create.path("Cmd").forEach(a -> argv.add(a.asText()));
            execs.put(resp.json().path("Id").asText(""), new String[] {id(r.path), String.join(" ", argv),
                create.path("User").asText("")});
        }
        if (op == Op.KILL && resp.status == 204) {
            // the runner's containers are AutoRemove: the engine removes a killed one by itself
            ledger.killedByClient(id(r.path));
        }
        if (op == Op.REMOVE) {
            answered(op, r, resp.status);
        }
        if (op == Op.REMOVE && (resp.status == 204 || resp.status == 404)) {
            String container = id(r.path);
            if (resp.status == 204) {
                ledger.killedByClient(container);
            }
            ledger.destroyed(container);
        }
        if (own == Effect.LOSE_ANSWER) {
            return;
        }
        if (resp.status / 100 == 2 && resp.body.length > 0 && op != Op.OTHER && faults.takeGarbledAnswer()) {
            answer(out, resp.status, "{\"garbled\":" + "\u0000".repeat(3));
            return;
        }
        relay(resp, out, own);
    }

    /** An exec start or a container attach: the engine's head, then its stream relayed as it comes. */
    private void stream(Op op, Req r, InputStream in, OutputStream out, Effect own) throws IOException {
        String execId = id(r.path);
        // one knob per exec start; which is asked first alternates, so neither starves the other when both are
        // armed; an attach (a one-shot's stream) takes the cut stream (its lost start is on the START)
        boolean lose;
        boolean drop;
        if (op == Op.ATTACH) {
            lose = own == Effect.LOSE_ANSWER;
            drop = faults.takeDroppedStream();
        } else if (execStarts.getAndIncrement() % 2 == 0) {
            lose = faults.takeLostExecResponse();
            drop = !lose && faults.takeDroppedStream();
        } else {
            drop = faults.takeDroppedStream();
            lose = !drop && faults.takeLostExecResponse();
        }
        try (SocketChannel up = SocketChannel.open(UnixDomainSocketAddress.of(engine))) {
            OutputStream upOut = out(up);
            upOut.write(rewrite(r));
            upOut.flush();
            String[] exec = op == Op.EXEC_START ? execs.remove(execId) : null;
            if (exec != null) {
                Ledger supervisor = supervisorExecs;
                (supervisor != null && exec[2].equals("0:0") ? supervisor : ledger).executed(exec[0], exec[1],
                        Boolean.TRUE.equals(networked.get(exec[0])));
            }
            InputStream upIn = in(up);
            byte[] head = readHead(upIn);
            if (head == null || lose) {
                return; // the engine started it; the client hears nothing
            }
            if (own == Effect.GARBAGE) {
                out.write(garbage());
                return;
            }
            out.write(head);
            out.flush();
            // the client's side closing (a cancel) ends the engine's stream too
            threads.submit(() -> {
                try {
                    while (in.read() >= 0) {
                        // nothing is sent after the request
                    }
                } catch (IOException ignored) {
                    // closed
                } finally {
                    try {
                        up.close();
                    } catch (IOException ignored) {
                        // closing
                    }
                }
            });
            byte[] buf = new byte[64 * 1024];
            boolean first = true;
            while (true) {
                int n = upIn.read(buf);
                if (n < 0) {
                    return;
                }
                out.write(buf, 0, n);
                out.flush();
                if (drop && first) {
                    return; // cut after the first output
                }
                first = false;
            }
        }
    }

    // ---------------------------------------------------------------- HTTP bits

    private static final class Resp {
        int status;
        byte[] raw;
        byte[] body;
        private JsonNode json;

        JsonNode json() {
            if (json == null) {
                try {
                    json = JSON.readTree(body);
                } catch (IOException e) {
                    json = JSON.createObjectNode();
                }
            }
            return json;
        }
    }

    private Resp forward(Req r) throws IOException {
        try (SocketChannel up = SocketChannel.open(UnixDomainSocketAddress.of(engine))) {
            OutputStream upOut = out(up);
            upOut.write(rewrite(r));
            upOut.flush();
            byte[] raw = in(up).readAllBytes();
            Resp resp = new Resp();
            resp.raw = raw;
            int end = indexOf(raw, HEAD_END);
            String head = new String(raw, 0, Math.max(0, end), StandardCharsets.ISO_8859_1);
            resp.status = head.length() > 12 ? Integer.parseInt(head.substring(9, 12)) : 0;
            byte[] body = end < 0 ? new byte[0] : java.util.Arrays.copyOfRange(raw, end + 4, raw.length);
            if (head.toLowerCase(Locale.ROOT).contains("transfer-encoding: chunked")) {
                body = dechunk(body);
            }
            resp.body = body;
            return resp;
        }
    }

    private void relay(Resp resp, OutputStream out, Effect own) throws IOException {
        if (own == Effect.GARBAGE) {
            out.write(garbage());
            return;
        }
        out.write(resp.raw);
        out.flush();
    }

    private static byte[] garbage() {
        return "HTTP/1.1 2x0 \u0000\u00ff\r\n\u0001garbage\r\n\r\n{".getBytes(StandardCharsets.ISO_8859_1);
    }

    private static void answer(OutputStream out, int status, String body) throws IOException {
        answer(out, status, "", body);
    }

    private static void answer(OutputStream out, int status, String extraHeaders, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        out.write(("HTTP/1.1 " + status + " Injected\r\nContent-Type: application/json\r\n" + extraHeaders
                + "Content-Length: " + b.length + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(b);
        out.flush();
    }

    /** The request as sent to the engine: {@code Connection: close} and the (possibly rewritten) body's length. */
    private static byte[] rewrite(Req r) {
        StringBuilder h = new StringBuilder();
        String[] lines = r.head.split("\r\n");
        h.append(lines[0]).append("\r\n");
        for (int i = 1; i < lines.length; i++) {
            String l = lines[i].toLowerCase(Locale.ROOT);
            if (l.startsWith("connection:") || l.startsWith("content-length:") || l.startsWith("keep-alive:")) {
                continue;
            }
            h.append(lines[i]).append("\r\n");
        }
        h.append("Connection: close\r\n");
        if (r.body.length > 0 || !r.method.equals("GET")) {
            h.append("Content-Length: ").append(r.body.length).append("\r\n");
        }
        h.append("\r\n");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(h.toString().getBytes(StandardCharsets.ISO_8859_1));
        out.writeBytes(r.body);
        return out.toByteArray();
    }

    private static Req readRequest(InputStream in) throws IOException {
        byte[] head = readHead(in);
        if (head == null) {
            return null;
        }
        Req r = new Req();
        r.head = new String(head, 0, head.length - 4, StandardCharsets.ISO_8859_1);
        String[] first = r.head.substring(0, r.head.indexOf("\r\n") < 0 ? r.head.length() : r.head.indexOf("\r\n")).split(" ");
        r.method = first[0];
        String target = first.length > 1 ? first[1] : "/";
        r.target = target;
        r.path = target.contains("?") ? target.substring(0, target.indexOf('?')) : target;
        int length = 0;
        for (String line : r.head.split("\r\n")) {
            if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                length = Integer.parseInt(line.substring(15).trim());
            }
        }
        r.body = in.readNBytes(length);
        return r;
    }

    /** The bytes up to and including the blank line; null at a clean end of stream. */
    private static byte[] readHead(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int c = in.read();
            if (c < 0) {
                return null;
            }
            b.write(c);
            matched = c == HEAD_END[matched] ? matched + 1 : (c == '\r' ? 1 : 0);
            if (b.size() > 64 * 1024) {
                throw new IOException("request head too long");
            }
        }
        return b.toByteArray();
    }

    private static byte[] dechunk(byte[] body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int i = 0;
        while (i < body.length) {
            int eol = indexOf(body, "\r\n".getBytes(StandardCharsets.US_ASCII), i);
            if (eol < 0) {
                break;
            }
            int size = Integer.parseInt(new String(body, i, eol - i, StandardCharsets.US_ASCII).split(";")[0].trim(), 16);
            if (size == 0) {
                break;
            }
            out.write(body, eol + 2, Math.min(size, body.length - eol - 2));
            i = eol + 2 + size + 2;
        }
        return out.toByteArray();
    }

    private static int indexOf(byte[] a, byte[] b) {
        return indexOf(a, b, 0);
    }

    private static int indexOf(byte[] a, byte[] b, int from) {
        outer:
        for (int i = from; i <= a.length - b.length; i++) {
            for (int j = 0; j < b.length; j++) {
                if (a[i + j] != b[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** The id in {@code /containers/ID/...} or {@code /exec/ID/...}. */
    private static String id(String path) {
        String[] p = path.replaceFirst("^/v[0-9.]+", "").split("/");
        return p.length > 2 ? p[2] : "";
    }

    /** Reads straight from the channel: {@code Channels.newInputStream} would hold a lock that stalls writes. */
    private static InputStream in(SocketChannel c) {
        return new java.io.BufferedInputStream(new InputStream() {
            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                return len == 0 ? 0 : c.read(java.nio.ByteBuffer.wrap(b, off, len));
            }
        }, 8192);
    }

    private static OutputStream out(SocketChannel c) {
        return new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                java.nio.ByteBuffer buf = java.nio.ByteBuffer.wrap(b, off, len);
                while (buf.hasRemaining()) {
                    c.write(buf);
                }
            }

            @Override
            public void close() throws IOException {
                c.close();
            }
        };
    }

    static Op op(String method, String path) {
        String p = path.replaceFirst("^/v[0-9.]+", "");
        if (method.equals("POST") && p.equals("/containers/create")) {
            return Op.CREATE;
        }
        if (method.equals("POST") && p.matches("/containers/[^/]+/start")) {
            return Op.START;
        }
        if (method.equals("POST") && p.matches("/containers/[^/]+/exec")) {
            return Op.EXEC_CREATE;
        }
        if (method.equals("POST") && p.matches("/exec/[^/]+/start")) {
            return Op.EXEC_START;
        }
        if (method.equals("GET") && p.matches("/exec/[^/]+/json")) {
            return Op.EXEC_INSPECT;
        }
        if (method.equals("GET") && p.equals("/containers/json")) {
            return Op.LIST;
        }
        if (method.equals("GET") && p.matches("/containers/[^/]+/json")) {
            return Op.INSPECT;
        }
        if (method.equals("POST") && p.matches("/containers/[^/]+/kill")) {
            return Op.KILL;
        }
        if (method.equals("DELETE") && p.matches("/containers/[^/]+")) {
            return Op.REMOVE;
        }
        if (method.equals("POST") && p.matches("/containers/[^/]+/attach")) {
            return Op.ATTACH;
        }
        if (method.equals("POST") && p.matches("/containers/[^/]+/wait")) {
            return Op.WAIT;
        }
        return Op.OTHER;
    }

    private final class CountingOut extends OutputStream {
        private final OutputStream out;

        CountingOut(OutputStream out) {
            this.out = out;
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
            bytesToClient.incrementAndGet();
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            bytesToClient.addAndGet(len);
        }

        @Override
        public void flush() throws IOException {
            out.flush();
        }

        @Override
        public void close() throws IOException {
            out.close();
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        server.close();
        threads.shutdownNow();
        try {
            threads.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Files.deleteIfExists(listen);
    }
}
