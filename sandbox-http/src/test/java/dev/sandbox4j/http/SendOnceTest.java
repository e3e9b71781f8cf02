package dev.sandbox4j.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.exception.SandboxException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.SocketFactory;
import mockwebserver3.MockResponse;
import mockwebserver3.MockResponseBody;
import mockwebserver3.MockWebServer;
import mockwebserver3.SocketEffect;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okio.BufferedSink;
import okio.BufferedSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * No request leaves twice, whatever client the caller passes (issue 13, cause A), and a body read in
 * part is abandoned at once rather than drained (the output hard cap).
 */
class SendOnceTest {
    private MockWebServer server;

    @BeforeEach
    void start() throws IOException {
        server = new MockWebServer();
        server.start();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private HttpTransport transport(OkHttpClient client) {
        return HttpTransport.builder("test").baseUrl(server.url("/").toString()).client(client)
                .retryBaseDelay(Duration.ofMillis(1)).build();
    }

    private static Request post(HttpTransport http, String path) {
        return http.request(http.url(path)).post(HttpTransport.jsonBody(Map.of("a", 1))).build();
    }

    @Test
    void aCallersDefaultClientDoesNotResendAPostWhoseAnswerWasLostOnAPooledConnection() throws Exception {
        // new OkHttpClient(): retryOnConnectionFailure is true, as in most applications
        HttpTransport http = transport(new OkHttpClient());
        server.enqueue(new MockResponse.Builder().body("{}").build()); // pools the connection
        server.enqueue(new MockResponse.Builder().onResponseStart(SocketEffect.ShutdownConnection.INSTANCE).build());
        server.enqueue(new MockResponse.Builder().body("{\"created\":\"twice\"}").build());
        http.call(http.request(http.url("ping")).get().build(), true);

        SandboxException e = assertThrows(SandboxException.class, () -> http.call(post(http, "create"), false));
        assertTrue(e.requestMayHaveSucceeded(), e.getMessage());
        assertEquals(2, server.getRequestCount(), "the POST went out more than once");
    }

    @Test
    void okHttpsOwnResendAfterA503WithRetryAfterZeroDoesNotHappen() {
        HttpTransport http = transport(new OkHttpClient());
        server.enqueue(new MockResponse.Builder().code(503).setHeader("Retry-After", "0").body("{}").build());
        server.enqueue(new MockResponse.Builder().body("{\"created\":\"twice\"}").build());

        SandboxException e = assertThrows(SandboxException.class, () -> http.call(post(http, "create"), false));
        assertEquals(503, e.httpStatus().getAsInt());
        assertEquals(Duration.ZERO, e.retryAfter().orElseThrow());
        assertEquals(1, server.getRequestCount(), "OkHttp re-sent the POST after a 503");
    }

    @Test
    void aRedirectIsNotFollowedWithTheBody() {
        HttpTransport http = transport(new OkHttpClient());
        server.enqueue(new MockResponse.Builder().code(307).setHeader("Location", "/elsewhere").build());
        server.enqueue(new MockResponse.Builder().body("{}").build());

        SandboxException e = assertThrows(SandboxException.class, () -> http.call(post(http, "create"), false));
        assertEquals(307, e.httpStatus().getAsInt());
        assertEquals(1, server.getRequestCount());
    }

    @Test
    void ourOwnRetriesOfAnIdempotentCallStillWork() throws Exception {
        HttpTransport http = transport(new OkHttpClient());
        server.enqueue(new MockResponse.Builder().code(502).body("{}").build());
        server.enqueue(new MockResponse.Builder().body("{\"ok\":true}").build());
        assertTrue(http.call(http.request(http.url("list")).get().build(), true).path("ok").asBoolean());
        assertEquals(2, server.getRequestCount());
    }

    /** A 1 GiB body; the reader stops at the cap. Counts what the client read from its socket. */
    @Test
    void aBodyAbandonedAtTheCapIsNotDrained() throws Exception {
        long cap = 16L << 20;
        AtomicLong written = new AtomicLong();
        server.enqueue(new MockResponse.Builder().body(new Flood(1L << 30, written)).build());
        AtomicLong socketRead = new AtomicLong();
        OkHttpClient client = new OkHttpClient.Builder().socketFactory(new CountingSockets(socketRead)).build();
        HttpTransport http = transport(client);

        long consumed = http.stream(http.request(http.url("flood")).get().build(), Duration.ofSeconds(60), r -> {
            BufferedSource source = r.body().source();
            long n = 0;
            while (n < cap && source.request(1)) {
                n += source.getBuffer().size();
                source.getBuffer().clear();
            }
            return n;
        });
        long pastCap = socketRead.get() - consumed;
        System.out.println("flood: consumed " + consumed + " bytes, read from the socket " + socketRead.get()
                + " (" + pastCap + " past what the reader took), server wrote " + written.get());
        assertTrue(consumed >= cap);
        assertTrue(pastCap <= 1L << 20, "read " + pastCap + " bytes past the reader's stop");
    }

    private static final class Flood implements MockResponseBody {
        private final long size;
        private final AtomicLong written;

        Flood(long size, AtomicLong written) {
            this.size = size;
            this.written = written;
        }

        @Override
        public long getContentLength() {
            return size;
        }

        @Override
        public void writeTo(BufferedSink sink) throws IOException {
            byte[] chunk = new byte[64 * 1024];
            java.util.Arrays.fill(chunk, (byte) 'x');
            for (long left = size; left > 0; ) {
                int n = (int) Math.min(chunk.length, left);
                sink.write(chunk, 0, n);
                sink.flush();
                written.addAndGet(n);
                left -= n;
            }
        }
    }

    /** Plain sockets whose input counts every byte read. */
    private static final class CountingSockets extends SocketFactory {
        private final AtomicLong read;

        CountingSockets(AtomicLong read) {
            this.read = read;
        }

        @Override
        public Socket createSocket() {
            return new Socket() {
                private InputStream in;

                @Override
                public synchronized InputStream getInputStream() throws IOException {
                    if (in == null) {
                        in = new FilterInputStream(super.getInputStream()) {
                            @Override
                            public int read() throws IOException {
                                int b = super.read();
                                if (b >= 0) {
                                    read.incrementAndGet();
                                }
                                return b;
                            }

                            @Override
                            public int read(byte[] b, int off, int len) throws IOException {
                                int n = super.read(b, off, len);
                                if (n > 0) {
                                    read.addAndGet(n);
                                }
                                return n;
                            }
                        };
                    }
                    return in;
                }
            };
        }

        @Override
        public Socket createSocket(String host, int port) throws IOException {
            Socket s = createSocket();
            s.connect(new java.net.InetSocketAddress(host, port));
            return s;
        }

        @Override
        public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
            return createSocket(host, port);
        }

        @Override
        public Socket createSocket(InetAddress host, int port) throws IOException {
            Socket s = createSocket();
            s.connect(new java.net.InetSocketAddress(host, port));
            return s;
        }

        @Override
        public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
                throws IOException {
            return createSocket(address, port);
        }
    }
}
