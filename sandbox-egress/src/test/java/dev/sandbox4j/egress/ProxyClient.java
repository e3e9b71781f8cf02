package dev.sandbox4j.egress;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

/** A hand-written proxy client: the tests see every byte the proxy answers. */
final class ProxyClient {
    private ProxyClient() {
    }

    /** A response as read: the head's lines and the body (until the end or Content-Length). */
    static final class Response {
        final String statusLine;
        final List<String> headers;
        final String body;

        Response(String statusLine, List<String> headers, String body) {
            this.statusLine = statusLine;
            this.headers = headers;
            this.body = body;
        }

        int status() {
            return Integer.parseInt(statusLine.split(" ")[1]);
        }

        String header(String name) {
            for (String h : headers) {
                int c = h.indexOf(':');
                if (h.substring(0, c).equalsIgnoreCase(name)) {
                    return h.substring(c + 1).strip();
                }
            }
            return null;
        }

        @Override
        public String toString() {
            return statusLine + " " + headers + " " + body;
        }
    }

    static Socket open(InetSocketAddress proxy) throws IOException {
        Socket s = new Socket();
        s.connect(proxy, 60_000);
        s.setSoTimeout(60_000);
        return s;
    }

    static Response read(InputStream in, boolean withBody) throws IOException {
        String status = line(in);
        List<String> headers = new java.util.ArrayList<>();
        String l;
        long length = -1;
        while (!(l = line(in)).isEmpty()) {
            headers.add(l);
            if (l.toLowerCase().startsWith("content-length:")) {
                length = Long.parseLong(l.substring(15).strip());
            }
        }
        if (!withBody) {
            return new Response(status, headers, "");
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if (length >= 0) {
            body.write(in.readNBytes((int) length));
        } else {
            in.transferTo(body);
        }
        return new Response(status, headers, body.toString(StandardCharsets.UTF_8));
    }

    static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) >= 0 && c != '\n') {
            b.write(c);
        }
        String s = b.toString(StandardCharsets.ISO_8859_1);
        return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
    }

    /** Sends {@code CONNECT authority}; returns the socket and the response (the body too when it is not 200). */
    static Response connect(Socket s, String authority) throws IOException {
        OutputStream out = s.getOutputStream();
        out.write(("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        Response head = read(s.getInputStream(), false);
        if (head.status() == 200) {
            return head;
        }
        long n = head.header("Content-Length") == null ? 0 : Long.parseLong(head.header("Content-Length"));
        return new Response(head.statusLine, head.headers, new String(s.getInputStream().readNBytes((int) n), StandardCharsets.UTF_8));
    }

    static Response connect(InetSocketAddress proxy, String authority) throws IOException {
        try (Socket s = open(proxy)) {
            return connect(s, authority);
        }
    }

    /** A plain-HTTP proxy request for {@code url}, read to the end. */
    static Response get(InetSocketAddress proxy, String url, String... headers) throws IOException {
        try (Socket s = open(proxy)) {
            String host = url.replaceFirst("^[a-z]+://", "").replaceFirst("[/?#].*$", "");
            StringBuilder req = new StringBuilder("GET " + url + " HTTP/1.1\r\nHost: " + host + "\r\n");
            for (String h : headers) {
                req.append(h).append("\r\n");
            }
            req.append("Connection: close\r\n\r\n");
            s.getOutputStream().write(req.toString().getBytes(StandardCharsets.US_ASCII));
            return read(s.getInputStream(), true);
        }
    }

    /** TLS over a tunnel already established on {@code s}, with {@code sni} (null for none). */
    static SSLSocket tls(Socket s, String host, String sni, SSLContext trust) throws IOException {
        SSLSocket t = (SSLSocket) trust.getSocketFactory().createSocket(s, host, 443, true);
        SSLParameters p = t.getSSLParameters();
        p.setServerNames(sni == null ? List.of() : List.of(new SNIHostName(sni)));
        if (sni != null && sni.equals(host)) {
            p.setEndpointIdentificationAlgorithm("HTTPS");
        }
        t.setSSLParameters(p);
        t.startHandshake();
        return t;
    }

    /** One request over an open (TLS) connection; reads its response by Content-Length. */
    static Response request(Socket s, String method, String path, String host, String... headers) throws IOException {
        StringBuilder req = new StringBuilder(method + " " + path + " HTTP/1.1\r\nHost: " + host + "\r\n");
        for (String h : headers) {
            req.append(h).append("\r\n");
        }
        req.append("\r\n");
        s.getOutputStream().write(req.toString().getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        return read(s.getInputStream(), true);
    }
}
