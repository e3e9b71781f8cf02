package dev.sandbox4j.local.internal;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The small TCP-to-unix-socket relay that runs inside a sandbox whose egress is a domain or CIDR list:
 * it listens on {@code 127.0.0.1:}{@link #PORT} of the sandbox's own, otherwise empty, network
 * namespace and relays every connection to the host-side egress proxy's unix socket, bind-mounted in.
 *
 * <p>It is Python (the interpreter the runner already needs), one process, one thread, non-blocking:
 * it adds one process to the sandbox and no threads, so RLIMIT_NPROC is not eaten by connections. The
 * sandbox's PID 1 starts it before the first line of the code runs: it binds and listens, forks, and
 * the parent exits, so when the init goes on the port is already open; the child's standard streams
 * are {@code /dev/null}, so it never writes into the code's output, and it dies with the sandbox's PID
 * namespace like every other process there.
 *
 * <p><b>It is not a security boundary.</b> Code in the sandbox runs as the same user and can kill it,
 * replace it with its own listener, or talk to the unix socket directly: all of that only changes how
 * the code's own requests reach the host proxy, which enforces the policy (allowed names, resolved
 * addresses, CIDRs, header rules, limits) on every connection. The socket reaches nothing but that
 * proxy, and the network namespace has no other interface than its loopback.
 */
public final class EgressForwarder {
    /** The port the forwarder listens on, on the sandbox's own loopback. */
    public static final int PORT = 3128;
    /** The proxy URL the sandbox's proxy variables point at. */
    public static final String PROXY_URL = "http://127.0.0.1:" + PORT;

    /**
     * The relay. Arguments: the port, the unix socket path. Reads from one side only while the other
     * side's pending bytes are below 64 KiB (bounded memory per connection); an end of stream is passed
     * on as a half-close once the pending bytes are written.
     */
    public static final String SOURCE = String.join("\n",
            "import os, selectors, socket, sys",
            "port, path = int(sys.argv[1]), sys.argv[2]",
            "ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)",
            "ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)",
            "ls.bind(('127.0.0.1', port))",
            "ls.listen(128)",
            "if os.fork() != 0:",
            "    os._exit(0)",
            "null = os.open(os.devnull, os.O_RDWR)",
            "for fd in (0, 1, 2):",
            "    os.dup2(null, fd)",
            "ls.setblocking(False)",
            "sel = selectors.DefaultSelector()",
            "sel.register(ls, selectors.EVENT_READ, None)",
            "R, W, BUF = selectors.EVENT_READ, selectors.EVENT_WRITE, 65536",
            "class End:",
            "    def __init__(self, s):",
            "        self.s, self.out, self.eof, self.shut, self.ev, self.peer = s, b'', False, False, 0, None",
            "def drop(e):",
            "    for x in (e, e.peer):",
            "        if x.s is not None:",
            "            if x.ev:",
            "                sel.unregister(x.s)",
            "            x.s.close()",
            "            x.s = None",
            "def refresh(e):",
            "    ev = (R if not e.eof and len(e.peer.out) < BUF else 0) | (W if e.out else 0)",
            "    if ev == e.ev:",
            "        return",
            "    if e.ev == 0:",
            "        sel.register(e.s, ev, e)",
            "    elif ev == 0:",
            "        sel.unregister(e.s)",
            "    else:",
            "        sel.modify(e.s, ev, e)",
            "    e.ev = ev",
            "def accept():",
            "    while True:",
            "        try:",
            "            c, _ = ls.accept()",
            "        except (BlockingIOError, InterruptedError):",
            "            return",
            "        except OSError:",
            "            return",
            "        u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)",
            "        try:",
            "            u.connect(path)",
            "        except OSError:",
            "            c.close()",
            "            u.close()",
            "            continue",
            "        c.setblocking(False)",
            "        u.setblocking(False)",
            "        a, b = End(c), End(u)",
            "        a.peer, b.peer = b, a",
            "        refresh(a)",
            "        refresh(b)",
            "while True:",
            "    for key, mask in sel.select():",
            "        e = key.data",
            "        if e is None:",
            "            accept()",
            "            continue",
            "        if e.s is None:",
            "            continue",
            "        try:",
            "            if mask & R:",
            "                d = e.s.recv(BUF)",
            "                if d:",
            "                    e.peer.out += d",
            "                else:",
            "                    e.eof = True",
            "            if mask & W and e.out:",
            "                n = e.s.send(e.out)",
            "                e.out = e.out[n:]",
            "            for x in (e, e.peer):",
            "                if x.eof and not x.peer.out and not x.peer.shut:",
            "                    x.peer.s.shutdown(socket.SHUT_WR)",
            "                    x.peer.shut = True",
            "            if e.eof and e.peer.eof and not e.out and not e.peer.out:",
            "                drop(e)",
            "                continue",
            "            refresh(e)",
            "            refresh(e.peer)",
            "        except OSError:",
            "            drop(e)",
            "");

    /** Where the host directory holding the proxy's socket (and, with header rules, its CA) is bound. */
    public static final String MOUNT = "/sandbox4j-egress";
    /** The file name of the CA certificate alone, in {@link #MOUNT}. */
    public static final String CA_FILE = "ca.pem";
    /** The file name of the system CAs followed by the proxy's CA, in {@link #MOUNT}. */
    public static final String CA_BUNDLE_FILE = "ca-bundle.pem";

    private EgressForwarder() {
    }

    /** The proxy variables every language's HTTP client looks for, upper and lower case; NO_PROXY empty. */
    public static Map<String, String> proxyEnv() {
        Map<String, String> env = new LinkedHashMap<>();
        for (String name : List.of("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")) {
            env.put(name, PROXY_URL);
            env.put(name.toLowerCase(java.util.Locale.ROOT), PROXY_URL);
        }
        env.put("NO_PROXY", "");
        env.put("no_proxy", "");
        return env;
    }

    /** The trust variables of OpenSSL, Python requests, curl and Node.js, pointing at the files in {@link #MOUNT}. */
    public static Map<String, String> caEnv() {
        Map<String, String> env = new LinkedHashMap<>();
        String bundle = MOUNT + "/" + CA_BUNDLE_FILE;
        env.put("SSL_CERT_FILE", bundle);
        env.put("REQUESTS_CA_BUNDLE", bundle);
        env.put("CURL_CA_BUNDLE", bundle);
        // Node adds these to its own bundled roots
        env.put("NODE_EXTRA_CA_CERTS", MOUNT + "/" + CA_FILE);
        return env;
    }
}
