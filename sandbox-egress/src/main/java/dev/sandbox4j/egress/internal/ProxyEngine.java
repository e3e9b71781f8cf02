package dev.sandbox4j.egress.internal;

import dev.sandbox4j.egress.EgressLimits;
import dev.sandbox4j.egress.EgressResolver;
import dev.sandbox4j.egress.RefusalReason;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.HeaderRule;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The proxy itself: an accept thread, a bounded pool of connection threads (two per tunnel, one per
 * other connection, so at most {@code 2 * maxConnections} threads), and a watchdog that closes idle
 * and overage connections. Blocking I/O throughout; no selector.
 */
public final class ProxyEngine implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger("dev.sandbox4j.egress.EgressProxy");
    private static final byte[] ESTABLISHED = "HTTP/1.1 200 Connection established\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CONTINUE = "HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    /** What the engine runs with; filled by {@code EgressProxy.Builder}. */
    public static final class Config {
        public EgressPolicy policy;
        public EgressResolver resolver;
        public EgressLimits limits;
        public SocketAddress listen;
        public SSLSocketFactory upstreamTls;
        public CertificateAuthority ca;
        public Set<Integer> domainPorts;
        public Map<String, InetSocketAddress> routes;
        public String name;
    }

    private final Config config;
    private final EgressPolicy policy;
    private final EgressLimits limits;
    private final Admission admission;
    private final Counters counters = new Counters();
    private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
    private final AtomicLong bytesUsed = new AtomicLong();
    private final AtomicBoolean bytesExhausted = new AtomicBoolean();
    private final AtomicLong ids = new AtomicLong();
    private final Streams.Budget budget = this::take;
    private volatile boolean closed;
    private ServerSocketChannel server;
    private SocketAddress bound;
    private ThreadPoolExecutor pool;
    private ThreadPoolExecutor refuser;
    private ScheduledExecutorService watchdog;
    private Thread acceptor;

    public ProxyEngine(Config config) {
        this.config = config;
        this.policy = config.policy;
        this.limits = config.limits;
        this.admission = new Admission(config.policy, config.resolver, config.domainPorts, config.routes);
    }

    public Counters counters() {
        return counters;
    }

    /** Binds and starts accepting; returns the bound address. */
    public synchronized SocketAddress start() throws IOException {
        if (closed) {
            throw new IOException("the proxy is closed");
        }
        if (server != null) {
            return bound;
        }
        if (config.listen instanceof UnixDomainSocketAddress) {
            server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        } else {
            server = ServerSocketChannel.open();
        }
        try {
            server.bind(config.listen, 128);
        } catch (IOException e) {
            server.close();
            throw e;
        }
        bound = server.getLocalAddress();
        ThreadFactory threads = namedThreads("sandbox4j-egress-" + config.name);
        pool = new ThreadPoolExecutor(0, 2 * limits.maxConnections() + 2, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), threads);
        // connections over the limit are answered here, one at a time, so the accept thread never waits
        refuser = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new java.util.concurrent.ArrayBlockingQueue<>(64),
                namedThreads("sandbox4j-egress-refuser-" + config.name));
        ScheduledThreadPoolExecutor wd = new ScheduledThreadPoolExecutor(1, namedThreads("sandbox4j-egress-watchdog-" + config.name));
        wd.setRemoveOnCancelPolicy(true);
        watchdog = wd;
        long shortest = Math.min(limits.idleTimeout().toMillis(), limits.maxConnectionLifetime().toMillis());
        long period = Math.max(10, Math.min(1000, shortest / 4));
        watchdog.scheduleWithFixedDelay(this::sweep, period, period, TimeUnit.MILLISECONDS);
        acceptor = threads.newThread(this::acceptLoop);
        acceptor.setName("sandbox4j-egress-accept-" + config.name);
        acceptor.start();
        LOG.debug("egress proxy {} listening on {} for {}", config.name, bound, policy);
        return bound;
    }

    public SocketAddress address() {
        return bound;
    }

    private static ThreadFactory namedThreads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    private void acceptLoop() {
        while (!closed) {
            SocketChannel ch;
            try {
                ch = server.accept();
            } catch (IOException e) {
                if (!closed) {
                    LOG.warn("egress proxy {}: accept failed, the proxy stops: {}", config.name, e.toString());
                }
                return;
            }
            counters.accepted.incrementAndGet();
            try {
                if (!(bound instanceof UnixDomainSocketAddress)) {
                    ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                }
            } catch (IOException ignored) {
                // a socket option only
            }
            if (counters.open.incrementAndGet() > limits.maxConnections()) {
                counters.open.decrementAndGet();
                Connection c = new Connection(ids.incrementAndGet(), ch);
                Refusal r = new Refusal(RefusalReason.CONNECTION_LIMIT,
                        "too many connections: the proxy allows " + limits.maxConnections() + " at once");
                try {
                    refuser.execute(() -> {
                        refuse(Streams.out(ch, c), r);
                        lingerClose(c);
                    });
                } catch (RejectedExecutionException e) {
                    counters.refused(r.reason); // too many at once even to answer: counted, closed
                    c.close();
                }
                continue;
            }
            Connection c = new Connection(ids.incrementAndGet(), ch);
            connections.add(c);
            if (closed) {
                c.close(); // close() may have swept the set before this one was added
            }
            try {
                pool.execute(() -> handle(c));
            } catch (RejectedExecutionException e) {
                finish(c);
            }
        }
    }

    private void finish(Connection c) {
        c.close();
        if (connections.remove(c)) {
            counters.open.decrementAndGet();
        }
    }

    private void sweep() {
        long now = System.nanoTime();
        long idle = limits.idleTimeout().toNanos();
        long life = limits.maxConnectionLifetime().toNanos();
        for (Connection c : connections) {
            if (now - c.startNanos > life) {
                if (c.close(counters.lifetimeClosed::incrementAndGet)) {
                    LOG.info("egress proxy {}: connection {} closed: open longer than {}", config.name, c.id, limits.maxConnectionLifetime());
                }
            } else if (now - c.lastActivity() > idle) {
                if (c.close(counters.idleClosed::incrementAndGet)) {
                    LOG.info("egress proxy {}: connection {} closed: idle for {}", config.name, c.id, limits.idleTimeout());
                }
            }
        }
    }

    private void take(long n, boolean up) throws Streams.ByteLimitException {
        if (bytesExhausted.get()) {
            throw new Streams.ByteLimitException("byte limit reached");
        }
        long after = bytesUsed.addAndGet(n);
        if (after > limits.maxBytes()) {
            bytesUsed.addAndGet(-n);
            bytesExhausted.set(true);
            throw new Streams.ByteLimitException("byte limit reached");
        }
        (up ? counters.bytesUp : counters.bytesDown).addAndGet(n);
    }

    private void checkBudget() throws Refusal {
        if (bytesExhausted.get()) {
            throw new Refusal(RefusalReason.BYTE_LIMIT, "byte limit reached: the proxy relays at most " + limits.maxBytes() + " bytes");
        }
    }

    private void byteLimited(Connection c) {
        if (c.markByteLimited()) {
            counters.refused(RefusalReason.BYTE_LIMIT);
            LOG.info("egress proxy {}: connection {} closed: byte limit of {} reached", config.name, c.id, limits.maxBytes());
        }
        c.close();
    }

    private void handle(Connection c) {
        InputStream in = new BufferedInputStream(Streams.in(c.client, c), 16 << 10);
        OutputStream out = Streams.out(c.client, c);
        try {
            HttpHead head;
            try {
                head = HttpHead.read(in, limits.maxHeaderBytes());
            } catch (HttpHead.MalformedException e) {
                throw new Refusal(RefusalReason.BAD_REQUEST, "bad request: " + e.getMessage());
            }
            if (head == null) {
                return;
            }
            String[] line = head.requestLine();
            if (line == null) {
                throw new Refusal(RefusalReason.BAD_REQUEST, "bad request: not an HTTP/1.x request line");
            }
            if (line[0].equals("CONNECT")) {
                connect(c, in, out, line[1]);
            } else {
                plain(c, in, out, head, line);
            }
        } catch (Refusal r) {
            refuse(out, r);
            lingerClose(c);
        } catch (Streams.ByteLimitException e) {
            byteLimited(c);
        } catch (IOException e) {
            if (!c.isClosed()) {
                LOG.debug("egress proxy {}: connection {} ended: {}", config.name, c.id, e.toString());
            }
        } catch (RuntimeException e) {
            LOG.warn("egress proxy {}: connection {} failed", config.name, c.id, e);
        } finally {
            finish(c);
        }
    }

    /**
     * Closes after an answer so that the answer is read: a socket closed with unread input sends a
     * reset, which can destroy the answer in the client's buffers. Sends FIN, then reads what the
     * client still sends for at most 200 ms.
     */
    private void lingerClose(Connection c) {
        try {
            c.client.shutdownOutput();
            c.client.configureBlocking(false);
            try (java.nio.channels.Selector sel = java.nio.channels.Selector.open()) {
                c.client.register(sel, java.nio.channels.SelectionKey.OP_READ);
                java.nio.ByteBuffer scratch = java.nio.ByteBuffer.allocate(8192);
                long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
                long left;
                while ((left = deadline - System.nanoTime()) > 0) {
                    if (sel.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left))) > 0) {
                        sel.selectedKeys().clear();
                        scratch.clear();
                        if (c.client.read(scratch) < 0) {
                            break;
                        }
                    }
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // closing anyway
        } finally {
            c.close();
        }
    }

    /** Answers a refusal with 403, the reason in the status line, a header and the body; counts it. */
    private void refuse(OutputStream out, Refusal r) {
        counters.refused(r.reason);
        LOG.info("egress proxy {} refused ({}): {}", config.name, r.reason.code(), r.getMessage());
        String line = "sandbox4j-egress: refused: " + r.getMessage();
        write(out, 403, line, r.reason.code());
    }

    private void answer(OutputStream out, int status, String message) {
        write(out, status, "sandbox4j-egress: " + message, null);
    }

    private static void write(OutputStream out, int status, String line, String refusalCode) {
        StringBuilder phrase = new StringBuilder(line.length());
        line.chars().forEach(ch -> phrase.append(ch >= 0x20 && ch < 0x7f ? (char) ch : '?'));
        byte[] body = (line + "\n").getBytes(StandardCharsets.UTF_8);
        String head = "HTTP/1.1 " + status + " " + phrase + "\r\n"
                + "Content-Type: text/plain; charset=utf-8\r\n"
                + "Content-Length: " + body.length + "\r\n"
                + "Connection: close\r\n"
                + (refusalCode == null ? "" : "X-Sandbox4j-Egress-Refusal: " + refusalCode + "\r\n")
                + "\r\n";
        try {
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
        } catch (IOException ignored) {
            // the sandbox went away first
        }
    }

    /** host:port or [v6]:port; the port is required unless {@code defaultPort} is positive. */
    private static String[] authority(String a, int defaultPort) throws Refusal {
        String host;
        String port = null;
        if (a.startsWith("[")) {
            int close = a.indexOf(']');
            if (close < 0) {
                throw new Refusal(RefusalReason.BAD_REQUEST, "bad request: unclosed '[' in " + Admission.sanitize(a));
            }
            host = a.substring(1, close);
            String rest = a.substring(close + 1);
            if (rest.startsWith(":")) {
                port = rest.substring(1);
            } else if (!rest.isEmpty()) {
                throw new Refusal(RefusalReason.BAD_REQUEST, "bad request: not host:port: " + Admission.sanitize(a));
            }
        } else {
            int colon = a.lastIndexOf(':');
            if (colon >= 0 && a.indexOf(':') != colon) {
                throw new Refusal(RefusalReason.BAD_REQUEST, "bad request: an IPv6 address must be in brackets: " + Admission.sanitize(a));
            }
            host = colon < 0 ? a : a.substring(0, colon);
            port = colon < 0 ? null : a.substring(colon + 1);
        }
        if (port == null) {
            if (defaultPort <= 0) {
                throw new Refusal(RefusalReason.BAD_REQUEST, "bad request: CONNECT needs host:port, got " + Admission.sanitize(a));
            }
            port = Integer.toString(defaultPort);
        }
        if (host.isEmpty() || !port.matches("\\d{1,5}")) {
            throw new Refusal(RefusalReason.BAD_REQUEST, "bad request: not host:port: " + Admission.sanitize(a));
        }
        return new String[] {host, port};
    }

    private Admission.Target admit(String host, int port) throws Refusal {
        checkBudget();
        return admission.admit(host, port);
    }

    private List<HeaderRule> rulesFor(Admission.Target t) {
        if (t.literal) {
            return List.of();
        }
        List<HeaderRule> out = new ArrayList<>();
        for (HeaderRule r : policy.headerRules()) {
            if (r.host().matches(t.host)) {
                out.add(r);
            }
        }
        return out;
    }

    /** Connects to the first checked address that answers; reports failure as 502/504 and returns null. */
    private Socket connectUpstream(Connection c, Admission.Target t, OutputStream out) throws IOException {
        IOException last = null;
        for (InetSocketAddress a : t.addresses) {
            Socket s = new Socket();
            c.upstream(s);
            try {
                s.setTcpNoDelay(true);
                s.connect(a, (int) Math.min(Integer.MAX_VALUE, limits.connectTimeout().toMillis()));
                return s;
            } catch (IOException e) {
                last = e;
                s.close();
                if (c.isClosed()) {
                    throw e;
                }
            }
        }
        counters.upstreamFailures.incrementAndGet();
        boolean timeout = last instanceof SocketTimeoutException;
        LOG.info("egress proxy {}: cannot reach {}: {}", config.name, t.authority(), String.valueOf(last));
        answer(out, timeout ? 504 : 502, "upstream failed: cannot connect to " + t.authority()
                + (timeout ? ": timed out" : ": " + (last == null ? "no address" : Admission.sanitize(String.valueOf(last.getMessage())))));
        return null;
    }

    private void connect(Connection c, InputStream in, OutputStream out, String target) throws IOException, Refusal {
        String[] hp = authority(target, -1);
        Admission.Target t = admit(hp[0], Integer.parseInt(hp[1]));
        List<HeaderRule> rules = rulesFor(t);
        Socket s = connectUpstream(c, t, out);
        if (s == null) {
            return;
        }
        SSLSocket upstreamTls = null;
        if (!rules.isEmpty()) {
            try {
                upstreamTls = (SSLSocket) config.upstreamTls.createSocket(s, t.host, t.port, true);
                SSLParameters p = upstreamTls.getSSLParameters();
                p.setEndpointIdentificationAlgorithm("HTTPS");
                upstreamTls.setSSLParameters(p);
                c.upstream(upstreamTls);
                upstreamTls.startHandshake();
            } catch (IOException e) {
                if (c.isClosed()) {
                    throw e;
                }
                counters.upstreamFailures.incrementAndGet();
                LOG.info("egress proxy {}: TLS to {} failed: {}", config.name, t.authority(), e.toString());
                answer(out, 502, "upstream failed: TLS to " + t.authority() + " failed: " + Admission.sanitize(String.valueOf(e.getMessage())));
                return;
            }
        }
        out.write(ESTABLISHED);
        out.flush();
        if (t.literal) {
            counters.admitted.incrementAndGet();
            LOG.debug("egress proxy {}: tunnel {} to {}", config.name, c.id, t.authority());
            tunnel(c, in, out, s);
            return;
        }
        ClientHello hello = ClientHello.read(in);
        if (!hello.tls) {
            counters.refused(RefusalReason.SNI_MISSING);
            String line = "sandbox4j-egress: refused: not TLS: a tunnel to " + t.host + " must start with a TLS ClientHello naming it\n";
            LOG.info("egress proxy {} refused ({}): tunnel to {} is not TLS", config.name, RefusalReason.SNI_MISSING.code(), t.authority());
            out.write(line.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            return;
        }
        if (hello.serverName == null || !hello.serverName.equals(t.host)) {
            RefusalReason r = hello.serverName == null ? RefusalReason.SNI_MISSING : RefusalReason.SNI_MISMATCH;
            counters.refused(r);
            LOG.info("egress proxy {} refused ({}): CONNECT {} with TLS server name {}", config.name, r.code(), t.authority(),
                    hello.serverName == null ? "(none)" : Admission.sanitize(hello.serverName));
            out.write(ClientHello.accessDeniedAlert());
            out.flush();
            return;
        }
        counters.admitted.incrementAndGet();
        if (upstreamTls != null) {
            LOG.debug("egress proxy {}: brokered tunnel {} to {}", config.name, c.id, t.authority());
            broker(c, in, out, hello.raw, upstreamTls, t, rules);
            return;
        }
        LOG.debug("egress proxy {}: tunnel {} to {}", config.name, c.id, t.authority());
        OutputStream up = Streams.metered(s.getOutputStream(), c, budget, true);
        up.write(hello.raw);
        up.flush();
        tunnel(c, in, out, s);
    }

    /** Relays both directions until both end; either failing closes both. */
    private void tunnel(Connection c, InputStream clientIn, OutputStream clientOut, Socket s) throws IOException {
        OutputStream up = Streams.metered(s.getOutputStream(), c, budget, true);
        InputStream upIn = Streams.touching(s.getInputStream(), c);
        OutputStream down = Streams.metered(clientOut, c, budget, false);
        pump(c, clientIn, up, () -> s.shutdownOutput(), upIn, down, () -> c.client.shutdownOutput());
    }

    private interface HalfClose {
        void run() throws IOException;
    }

    private void pump(Connection c, InputStream aIn, OutputStream bOut, HalfClose endB, InputStream bIn, OutputStream aOut,
            HalfClose endA) throws IOException {
        Future<?> down;
        try {
            down = pool.submit(() -> {
                try {
                    Streams.copy(bIn, aOut);
                    endA.run();
                } catch (Streams.ByteLimitException e) {
                    byteLimited(c);
                } catch (IOException e) {
                    c.close();
                }
                return null;
            });
        } catch (RejectedExecutionException e) {
            c.close();
            return;
        }
        try {
            Streams.copy(aIn, bOut);
            endB.run();
        } catch (Streams.ByteLimitException e) {
            byteLimited(c);
        } catch (IOException e) {
            c.close();
        }
        try {
            down.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            c.close();
        } catch (ExecutionException e) {
            c.close();
        }
    }

    private void plain(Connection c, InputStream in, OutputStream out, HttpHead head, String[] line) throws IOException, Refusal {
        String target = line[1];
        String lower = target.toLowerCase(Locale.ROOT);
        if (lower.startsWith("https://")) {
            throw new Refusal(RefusalReason.BAD_REQUEST, "bad request: use CONNECT for https URLs");
        }
        if (!lower.startsWith("http://")) {
            throw new Refusal(RefusalReason.BAD_REQUEST, "bad request: a proxy request needs an absolute http:// URL or CONNECT");
        }
        String rest = target.substring(7);
        int end = rest.length();
        for (char ch : new char[] {'/', '?', '#'}) {
            int i = rest.indexOf(ch);
            if (i >= 0 && i < end) {
                end = i;
            }
        }
        String authority = rest.substring(0, end);
        String path = rest.substring(end);
        int hash = path.indexOf('#');
        if (hash >= 0) {
            path = path.substring(0, hash);
        }
        if (path.isEmpty() || path.startsWith("?")) {
            path = "/" + path;
        }
        if (authority.contains("@")) {
            throw new Refusal(RefusalReason.BAD_REQUEST, "bad request: credentials in the URL are not forwarded");
        }
        HttpHead.Framing framing;
        long length;
        try {
            framing = head.requestFraming();
            length = framing == HttpHead.Framing.LENGTH ? head.contentLength() : 0;
        } catch (HttpHead.MalformedException e) {
            throw new Refusal(RefusalReason.BAD_REQUEST, "bad request: " + e.getMessage());
        }
        String[] hp = authority(authority, 80);
        Admission.Target t = admit(hp[0], Integer.parseInt(hp[1]));
        if (!rulesFor(t).isEmpty()) {
            throw new Refusal(RefusalReason.BROKERED_NEEDS_TLS, "host has a header rule, use https: " + t.host
                    + " (brokered headers are only sent over TLS)");
        }
        Socket s = connectUpstream(c, t, out);
        if (s == null) {
            return;
        }
        counters.admitted.incrementAndGet();
        LOG.debug("egress proxy {}: {} http://{}", config.name, line[0], t.authority());
        HttpHead req = head.withStartLine(line[0] + " " + path + " HTTP/1.1");
        for (String h : hopByHop(head)) {
            req.remove(h);
        }
        req.set("Host", t.port == 80 ? hostText(t) : hostText(t) + ":" + t.port);
        req.set("Connection", "close");
        if ("100-continue".equalsIgnoreCase(head.get("Expect"))) {
            req.remove("Expect");
            out.write(CONTINUE);
            out.flush();
        }
        OutputStream up = new BufferedOutputStream(Streams.metered(s.getOutputStream(), c, budget, true), 16 << 10);
        InputStream upIn = new BufferedInputStream(Streams.touching(s.getInputStream(), c), 16 << 10);
        OutputStream down = new BufferedOutputStream(Streams.metered(out, c, budget, false), 16 << 10);
        req.write(up);
        HttpHead.copyBody(framing, length, in, up);
        up.flush();
        relayResponse(c, upIn, down, line[0], true);
    }

    private static String hostText(Admission.Target t) {
        return t.host.indexOf(':') >= 0 ? "[" + t.host + "]" : t.host;
    }

    /** The hop-by-hop headers of a request: the fixed ones and those its Connection header names. */
    private static Set<String> hopByHop(HttpHead head) {
        Set<String> names = new HashSet<>(List.of("Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authorization",
                "Proxy-Authenticate", "TE", "Trailer", "Upgrade"));
        for (String v : head.all("Connection")) {
            for (String token : v.split(",")) {
                if (!token.isBlank()) {
                    names.add(token.strip());
                }
            }
        }
        return names;
    }

    /**
     * Relays one response (after any 1xx); returns true when the connection must close after it.
     * With {@code forceClose} the final head says {@code Connection: close}.
     */
    private boolean relayResponse(Connection c, InputStream upIn, OutputStream down, String method, boolean forceClose)
            throws IOException {
        while (true) {
            HttpHead resp = HttpHead.read(upIn, limits.maxHeaderBytes());
            if (resp == null) {
                throw new IOException("the server closed without a response");
            }
            int status = resp.status();
            if (status < 0) {
                throw new HttpHead.MalformedException("not an HTTP response");
            }
            if (status >= 100 && status < 200 && status != 101) {
                resp.write(down);
                down.flush();
                continue;
            }
            HttpHead.Framing framing = status == 101 ? HttpHead.Framing.UNTIL_CLOSE : resp.responseFraming(method, status);
            long length = framing == HttpHead.Framing.LENGTH ? resp.contentLength() : 0;
            boolean close = forceClose || framing == HttpHead.Framing.UNTIL_CLOSE || resp.connectionHas("close")
                    || (resp.startLine.startsWith("HTTP/1.0") && !resp.connectionHas("keep-alive"));
            if (forceClose) {
                resp.remove("Connection");
                resp.remove("Keep-Alive");
                resp.remove("Proxy-Connection");
                resp.add("Connection", "close");
            }
            resp.write(down);
            HttpHead.copyBody(framing, length, upIn, down);
            down.flush();
            return close;
        }
    }

    /**
     * A brokered tunnel: TLS with the sandbox (a leaf of the proxy's CA for the host), TLS to the
     * server (already verified), and HTTP/1.1 requests in between, each given its rules' headers.
     */
    private void broker(Connection c, InputStream in, OutputStream out, byte[] hello, SSLSocket server, Admission.Target t,
            List<HeaderRule> rules) throws IOException {
        SSLEngine engine = config.ca.serverContext(t.host).createSSLEngine();
        engine.setUseClientMode(false);
        TlsStream tls = new TlsStream(engine, hello, in, out);
        try {
            tls.handshake();
        } catch (IOException e) {
            LOG.info("egress proxy {}: the sandbox's TLS handshake for {} failed (does it trust the proxy's CA?): {}",
                    config.name, t.host, e.toString());
            return;
        }
        InputStream sin = new BufferedInputStream(tls.in, 16 << 10);
        OutputStream sout = new BufferedOutputStream(Streams.metered(tls.out, c, budget, false), 16 << 10);
        InputStream uin = new BufferedInputStream(Streams.touching(server.getInputStream(), c), 16 << 10);
        OutputStream uout = new BufferedOutputStream(Streams.metered(server.getOutputStream(), c, budget, true), 16 << 10);
        try {
            while (true) {
                HttpHead req;
                try {
                    req = HttpHead.read(sin, limits.maxHeaderBytes());
                } catch (HttpHead.MalformedException e) {
                    refuse(sout, new Refusal(RefusalReason.BAD_REQUEST, "bad request: " + e.getMessage()));
                    return;
                }
                if (req == null) {
                    return;
                }
                String[] line = req.requestLine();
                try {
                    if (line == null || line[0].equals("CONNECT")) {
                        throw new Refusal(RefusalReason.BAD_REQUEST, "bad request: not an HTTP/1.x request inside the tunnel to " + t.host);
                    }
                    String path = requestPath(line[1], t);
                    checkHost(req, t);
                    checkBudget();
                    HttpHead.Framing framing;
                    long length;
                    try {
                        framing = req.requestFraming();
                        length = framing == HttpHead.Framing.LENGTH ? req.contentLength() : 0;
                    } catch (HttpHead.MalformedException e) {
                        throw new Refusal(RefusalReason.BAD_REQUEST, "bad request: " + e.getMessage());
                    }
                    String secretProblem = applyRules(req, rules, line[0], path);
                    if (secretProblem != null) {
                        counters.upstreamFailures.incrementAndGet();
                        answer(sout, 502, secretProblem);
                        return;
                    }
                    req.remove("Proxy-Connection");
                    req.remove("Proxy-Authorization");
                    if ("100-continue".equalsIgnoreCase(req.get("Expect"))) {
                        req.remove("Expect");
                        sout.write(CONTINUE);
                        sout.flush();
                    }
                    counters.admitted.incrementAndGet();
                    boolean close = req.connectionHas("close") || line[2].equals("HTTP/1.0");
                    req.write(uout);
                    HttpHead.copyBody(framing, length, sin, uout);
                    uout.flush();
                    close |= relayResponse(c, uin, sout, line[0], false);
                    if (close) {
                        return;
                    }
                } catch (Refusal r) {
                    refuse(sout, r);
                    return;
                }
            }
        } finally {
            try {
                sout.flush();
            } catch (IOException ignored) {
                // closing anyway
            }
            tls.closeOutbound();
        }
    }

    /** The path of a request target inside a brokered tunnel (origin-form, or absolute-form for the same host). */
    private static String requestPath(String target, Admission.Target t) throws Refusal {
        String path = target;
        if (target.toLowerCase(Locale.ROOT).startsWith("https://")) {
            String rest = target.substring(8);
            int slash = rest.indexOf('/');
            String auth = slash < 0 ? rest : rest.substring(0, slash);
            String[] hp = authority(auth, 443);
            if (!hp[0].equalsIgnoreCase(t.host) || Integer.parseInt(hp[1]) != t.port) {
                throw new Refusal(RefusalReason.HOST_MISMATCH, "request for " + Admission.sanitize(auth) + " inside the tunnel to " + t.host);
            }
            path = slash < 0 ? "/" : rest.substring(slash);
        } else if (target.equals("*")) {
            return "*";
        } else if (!target.startsWith("/")) {
            throw new Refusal(RefusalReason.BAD_REQUEST, "bad request: not a request target: " + Admission.sanitize(target));
        }
        int q = path.indexOf('?');
        return q < 0 ? path : path.substring(0, q);
    }

    private static void checkHost(HttpHead req, Admission.Target t) throws Refusal {
        List<String> hosts = req.all("Host");
        if (hosts.size() > 1) {
            throw new Refusal(RefusalReason.BAD_REQUEST, "bad request: more than one Host header");
        }
        if (hosts.isEmpty()) {
            req.add("Host", t.port == 443 ? t.host : t.host + ":" + t.port);
            return;
        }
        String[] hp = authority(hosts.get(0), t.port);
        String host = hp[0].toLowerCase(Locale.ROOT);
        if (host.endsWith(".")) {
            host = host.substring(0, host.length() - 1);
        }
        if (!host.equals(t.host) || Integer.parseInt(hp[1]) != t.port) {
            throw new Refusal(RefusalReason.HOST_MISMATCH, "Host " + Admission.sanitize(hosts.get(0)) + " inside the tunnel to " + t.authority());
        }
    }

    /**
     * Strips every rule's header from what the sandbox sent, then adds, per header name, the first
     * rule that applies to this method and path; the secret is resolved now. Returns a problem to
     * answer with (naming the secret reference, never its value), or null.
     */
    private String applyRules(HttpHead req, List<HeaderRule> rules, String method, String path) {
        for (HeaderRule r : rules) {
            req.remove(r.header());
        }
        Set<String> done = new HashSet<>();
        for (HeaderRule r : rules) {
            String key = r.header().toLowerCase(Locale.ROOT);
            if (done.contains(key) || !r.appliesTo(method, path)) {
                continue;
            }
            String secret;
            try {
                secret = r.secret().resolve();
            } catch (RuntimeException e) {
                LOG.warn("egress proxy {}: secret {} for {} could not be resolved ({})", config.name, r.secret().name(), r.host(),
                        e.getClass().getSimpleName());
                return "secret " + r.secret().name() + " could not be resolved";
            }
            if (secret == null || secret.chars().anyMatch(ch -> ch < 0x20 && ch != '\t' || ch == 0x7f)) {
                LOG.warn("egress proxy {}: secret {} is empty or holds a control character", config.name, r.secret().name());
                return "secret " + r.secret().name() + " is empty or holds a control character";
            }
            req.add(r.header(), r.valuePrefix() + secret);
            done.add(key);
        }
        return null;
    }

    /** Closes the listener and every connection at once. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        try {
            if (server != null) {
                server.close();
            }
        } catch (IOException ignored) {
            // closing
        }
        for (Connection c : connections) {
            c.close();
        }
        if (pool != null) {
            pool.shutdownNow();
            refuser.shutdownNow();
        }
        if (watchdog != null) {
            watchdog.shutdownNow();
        }
        if (bound instanceof UnixDomainSocketAddress u) {
            try {
                Files.deleteIfExists(u.getPath());
            } catch (IOException ignored) {
                // best effort
            }
        }
        LOG.debug("egress proxy {} closed: {} connections accepted", config.name, counters.accepted());
    }
}
