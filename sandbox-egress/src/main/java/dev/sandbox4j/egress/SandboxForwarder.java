package dev.sandbox4j.egress;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * What a runner puts inside a sandbox whose only way out is an {@link EgressProxy} on a unix socket:
 * a small TCP-to-unix-socket relay that listens on {@code 127.0.0.1:}{@link #PORT} of the sandbox's
 * own, otherwise empty, network namespace and relays every connection to the proxy's socket,
 * bind-mounted in at {@link #MOUNT}; and the variables and CA files that point clients at it. The local
 * and the Docker runner use it the same way.
 *
 * <p>The relay is Python (the interpreter the runners already need), one process, one thread,
 * non-blocking: it adds one process and no threads per connection, so a process limit is not eaten by
 * connections. Started as {@code python3 -I -S -c SOURCE PORT SOCKET}, it binds and listens, forks, and
 * the parent exits 0, so when the command returns the port is already open (a runner starts it before
 * the first line of code and waits for that); the child's standard streams are {@code /dev/null}, so it
 * never writes into the code's output. A failure to bind ends the command with a non-zero status.
 *
 * <p><b>It is not a security boundary.</b> Code in the sandbox may kill it, replace it with its own
 * listener, or talk to the unix socket directly: all of that only changes how the code's own requests
 * reach the host proxy, which enforces the policy (allowed names, resolved addresses, CIDRs, the TLS
 * server name, header rules, limits) on every connection. The socket reaches nothing but that proxy,
 * and the network namespace has no other interface than its loopback.
 *
 * @since 0.1.0
 */
public final class SandboxForwarder {
    /** The port the forwarder listens on, on the sandbox's own loopback. */
    public static final int PORT = 3128;
    /** The proxy URL the sandbox's proxy variables point at. */
    public static final String PROXY_URL = "http://127.0.0.1:" + PORT;
    /** Where a runner binds the host directory holding the proxy's socket and CA files, read-only. */
    public static final String MOUNT = "/sandbox4j-egress";
    /** The file name of the proxy's CA certificate alone, in {@link #MOUNT}. */
    public static final String CA_FILE = "ca.pem";
    /** The file name of the system's CAs followed by the proxy's CA, in {@link #MOUNT}. */
    public static final String CA_BUNDLE_FILE = "ca-bundle.pem";
    private static final Path SYSTEM_CAS = Path.of("/etc/ssl/certs/ca-certificates.crt");

    /**
     * The relay's Python source, run as {@code python3 -I -S -c SOURCE PORT SOCKET}: it binds {@code
     * 127.0.0.1:PORT}, forks, and the parent exits 0 once the port is open.
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

    private SandboxForwarder() {
    }

    /** {@return {@link EgressProxy#proxyEnvironment} for {@link #PROXY_URL}} */
    public static Map<String, String> proxyEnvironment() {
        return EgressProxy.proxyEnvironment(PROXY_URL);
    }

    /** {@return {@link EgressProxy#caEnvironment} for the bundle in {@link #MOUNT}} */
    public static Map<String, String> caEnvironment() {
        return EgressProxy.caEnvironment(MOUNT + "/" + CA_BUNDLE_FILE);
    }

    /**
     * The bundle for {@link #CA_BUNDLE_FILE}: this machine's CAs ({@code /etc/ssl/certs/ca-certificates.crt},
     * when readable) followed by {@code caPem}, so hosts without a header rule still verify.
     *
     * @param caPem the proxy's CA certificate in PEM
     * @return the bundle's text in PEM
     * @throws IOException when the system's CA file is readable but reading it fails
     */
    public static String caBundle(String caPem) throws IOException {
        String own = caPem.endsWith("\n") ? caPem : caPem + "\n";
        String system = Files.isReadable(SYSTEM_CAS) ? Files.readString(SYSTEM_CAS, StandardCharsets.UTF_8) : "";
        if (!system.isEmpty() && !system.endsWith("\n")) {
            system += "\n";
        }
        return system + own;
    }
}
