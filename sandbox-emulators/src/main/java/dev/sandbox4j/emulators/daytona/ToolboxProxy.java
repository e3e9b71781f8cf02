package dev.sandbox4j.emulators.daytona;

import dev.sandbox4j.emulators.WebSockets;
import dev.sandbox4j.emulators.daytona.internal.WireException;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The toolbox proxy's own loopback port (what sandboxes carry as {@code toolboxProxyUrl}; on Daytona
 * too the toolbox proxy is another host than the API). The JDK's HTTP server cannot hand over a
 * connection for a WebSocket, so this small front reads each request's head itself: the WebSocket
 * upgrade of a session command's log ({@code /toolbox/{id}/process/session/{s}/command/{c}/logs}) is
 * served here ({@link ToolboxSessions#follow}), and recorded in the emulator's calls (status 101 once
 * switched, else the refusal's); every other request goes to the emulator's HTTP port byte for byte,
 * one request per connection ({@code Connection: close} both ways), so the handlers, faults and the
 * record of calls stay the emulator's.
 */
final class ToolboxProxy implements AutoCloseable {
    private static final int MAX_HEAD_BYTES = 1 << 20;

    private final DaytonaEmulator emu;
    private final ServerSocket server;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    ToolboxProxy(DaytonaEmulator emu) throws IOException {
        this.emu = emu;
        this.server = new ServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        Thread acceptor = new Thread(this::accept, "DaytonaEmulator-toolbox-proxy");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** {@code http://127.0.0.1:<port>}. */
    String baseUrl() {
        return "http://" + server.getInetAddress().getHostAddress() + ":" + server.getLocalPort();
    }

    private void accept() {
        while (!closed) {
            try {
                Socket s = server.accept();
                s.setTcpNoDelay(true);
                open.add(s);
                Thread t = new Thread(() -> serve(s), "DaytonaEmulator-toolbox-connection");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                if (!closed) {
                    DaytonaEmulator.log.debug("daytona emulator: toolbox proxy accept failed", e);
                }
            }
        }
    }

    private void serve(Socket client) {
        try (client) {
            InputStream in = client.getInputStream();
            OutputStream out = client.getOutputStream();
            byte[] head = readHead(in);
            if (head == null) {
                return;
            }
            List<String> lines = lines(head);
            String[] requestLine = lines.get(0).split(" ");
            Map<String, String> headers = new java.util.LinkedHashMap<>();
            for (String h : lines.subList(1, lines.size())) {
                int c = h.indexOf(':');
                if (c > 0) {
                    headers.put(h.substring(0, c).trim().toLowerCase(Locale.ROOT), h.substring(c + 1).trim());
                }
            }
            if (requestLine.length == 3 && "websocket".equalsIgnoreCase(headers.get("upgrade"))) {
                dev.sandbox4j.emulators.RecordedCall call = emu.recordUpgrade(requestLine[0], requestLine[1], headers);
                call.status(-1);
                upgrade(requestLine[1], headers, in, out, call);
            } else {
                forward(lines, in, out);
            }
        } catch (IOException e) {
            // the client or the emulator went away
        } finally {
            open.remove(client);
        }
    }

    /** Serves the log WebSocket, or answers the upgrade as the daemon's routes would refuse it. */
    private void upgrade(String target, Map<String, String> headers, InputStream in, OutputStream out,
            dev.sandbox4j.emulators.RecordedCall call) throws IOException {
        int q = target.indexOf('?');
        String path = q < 0 ? target : target.substring(0, q);
        boolean follow = q >= 0 && dev.sandbox4j.emulators.HttpEmulator.queryFirst(target.substring(q + 1))
                .getOrDefault("follow", "").equals("true");
        List<String> seg = DaytonaEmulator.segments(path);
        // toolbox, {id}, process, session, {s}, command, {c}, logs
        if (seg.size() != 8 || !seg.get(0).equals("toolbox") || !seg.get(2).equals("process") || !seg.get(3).equals("session")
                || !seg.get(5).equals("command") || !seg.get(7).equals("logs")) {
            call.status(404);
            refuse(out, 404, "404 page not found");
            return;
        }
        String auth = headers.get("authorization");
        if (auth == null || !MessageDigest.isEqual(auth.getBytes(StandardCharsets.UTF_8),
                ("Bearer " + emu.apiKey()).getBytes(StandardCharsets.UTF_8))) {
            call.status(401);
            refuse(out, 401, "{\"statusCode\":401,\"message\":\"unauthorized: invalid or missing API key\",\"code\":\"UNAUTHORIZED\"}");
            return;
        }
        EmulatedSandbox s = emu.sandboxes.get(seg.get(1));
        ToolboxSessions.Session session = s == null ? null : s.sessions.get(seg.get(4));
        ToolboxSessions.Command command;
        try {
            if (session == null || session.deleted) {
                throw new WireException(404, "session not found", "NOT_FOUND");
            }
            command = ToolboxSessions.command(session, seg.get(6));
        } catch (WireException e) {
            call.status(404);
            refuse(out, 404, "{\"statusCode\":404,\"message\":\"" + e.getMessage() + "\",\"code\":\"NOT_FOUND\"}");
            return;
        }
        String key = headers.get("sec-websocket-key");
        if (key == null) {
            call.status(400);
            refuse(out, 400, "{\"statusCode\":400,\"message\":\"websocket: not a websocket handshake\",\"code\":\"BAD_REQUEST\"}");
            return;
        }
        s.touch(java.time.Instant.now());
        ToolboxSessions.Format format = ToolboxSessions.Format.of(name -> headers.get(name.toLowerCase(Locale.ROOT)));
        boolean real = !emu.instant();
        boolean hostile = real && emu.faults().hostileFraming();
        boolean drop = real && !hostile && emu.faults().takeDroppedStream();
        call.status(101);
        WebSockets.switchProtocols(out, key, null);
        ToolboxSessions.follow(command, follow, format.combined, drop, hostile, emu.hostileBytes, in, out, Thread.currentThread());
        Thread.interrupted(); // the reader's wake-up, if any, is not for the next connection
    }

    private static void refuse(OutputStream out, int status, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        String type = body.startsWith("{") ? "application/json" : "text/plain; charset=utf-8";
        out.write(("HTTP/1.1 " + status + " " + (status == 404 ? "Not Found" : status == 401 ? "Unauthorized" : "Bad Request")
                + "\r\nContent-Type: " + type + "\r\nContent-Length: " + b.length + "\r\nConnection: close\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        out.write(b);
        out.flush();
    }

    /** One request to the emulator's HTTP port and its answer back, each with {@code Connection: close}. */
    private void forward(List<String> lines, InputStream in, OutputStream out) throws IOException {
        try (Socket backend = new Socket(InetAddress.getLoopbackAddress(), emu.port())) {
            backend.setTcpNoDelay(true);
            open.add(backend);
            OutputStream bout = backend.getOutputStream();
            bout.write(withClose(lines));
            bout.flush();
            Thread up = new Thread(() -> {
                try {
                    in.transferTo(bout); // the body; ends when the client closes or the backend is done
                } catch (IOException e) {
                    // either side closed
                }
            }, "DaytonaEmulator-toolbox-upstream");
            up.setDaemon(true);
            up.start();
            InputStream bin = backend.getInputStream();
            while (true) {
                byte[] head = readHead(bin);
                if (head == null) {
                    return; // no answer: the client sees the connection close, as it would
                }
                List<String> answer = lines(head);
                out.write(withClose(answer));
                out.flush();
                if (!answer.get(0).matches("HTTP/1\\.1 1\\d\\d.*")) {
                    break;
                }
            }
            byte[] buf = new byte[16 * 1024];
            int n;
            while ((n = bin.read(buf)) > 0) {
                out.write(buf, 0, n);
                out.flush();
            }
        } finally {
            open.removeIf(Socket::isClosed);
        }
    }

    private static byte[] withClose(List<String> lines) {
        StringBuilder b = new StringBuilder(lines.get(0)).append("\r\n");
        boolean informational = lines.get(0).matches("HTTP/1\\.1 1\\d\\d.*");
        for (String h : lines.subList(1, lines.size())) {
            String name = h.contains(":") ? h.substring(0, h.indexOf(':')).trim().toLowerCase(Locale.ROOT) : "";
            if (!name.equals("connection") && !name.equals("keep-alive")) {
                b.append(h).append("\r\n");
            }
        }
        if (!informational) {
            b.append("Connection: close\r\n");
        }
        return b.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    /** The bytes up to the blank line (without it), or null at a clean end before any. */
    private static byte[] readHead(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int last4 = 0; // the last four bytes read, oldest in the high byte
        while (true) {
            int c = in.read();
            if (c < 0) {
                if (b.size() == 0) {
                    return null;
                }
                throw new EOFException("the head ended early");
            }
            b.write(c);
            last4 = (last4 << 8) | c;
            if (last4 == 0x0d0a0d0a || (last4 & 0xffff) == 0x0a0a) {
                byte[] all = b.toByteArray();
                return java.util.Arrays.copyOf(all, all.length - (last4 == 0x0d0a0d0a ? 4 : 2));
            }
            if (b.size() > MAX_HEAD_BYTES) {
                throw new IOException("head too long");
            }
        }
    }

    private static List<String> lines(byte[] head) {
        List<String> out = new ArrayList<>();
        for (String l : new String(head, StandardCharsets.ISO_8859_1).split("\n")) {
            out.add(l.endsWith("\r") ? l.substring(0, l.length() - 1) : l);
        }
        return out;
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing
        }
        for (Socket s : List.copyOf(open)) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }
}
