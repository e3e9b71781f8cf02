package dev.sandbox4j.http;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.spi.Backoff;
import dev.sandbox4j.spi.Secret;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Call;
import okhttp3.Headers;
import okhttp3.HttpUrl;
import okhttp3.Interceptor;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;
import okio.Buffer;
import okio.BufferedSource;
import okio.ForwardingSource;
import okio.Okio;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The REST plumbing every HTTP adapter shares: one mechanism for
 * <ul>
 *   <li>base URL and default headers (the API key among them, redacted everywhere);</li>
 *   <li>interruptible calls: the blocking part runs on a worker thread and an interrupt of the
 *       caller cancels the OkHttp call (Okio would otherwise fail, or block, on an interrupted thread);</li>
 *   <li>a client-side deadline per streaming call ({@link ClientDeadlineException});</li>
 *   <li>error mapping: status plus the provider's error body, read by the adapter's own
 *       {@link ErrorBody} ({@link ErrorBody#STANDARD} by default), to the {@link SandboxException}
 *       hierarchy ({@link HttpErrors}), with Retry-After;</li>
 *   <li>retries of idempotent calls on IO errors (a 2xx body that is not JSON among them), a passed
 *       client deadline, 408, 409, 429 and 5xx; non-idempotent calls are never retried, and an
 *       ambiguous failure is flagged {@link SandboxException#requestMayHaveSucceeded()};</li>
 *   <li>no hidden re-sends: whatever client the caller passes, requests go through a derived client
 *       with {@code retryOnConnectionFailure(false)} and redirects off, and a network interceptor
 *       refuses to put one call on the wire twice (OkHttp also re-sends on its own after some
 *       answers, such as a 503 with {@code Retry-After: 0});</li>
 *   <li>a body read only in part (output past the hard cap) is abandoned by cancelling the call, so
 *       closing the response does not drain the rest of a flood;</li>
 *   <li>secrets registered per sandbox ({@link #secretScope()}) leave the redaction set when the
 *       sandbox is done, so a long-running process does not accumulate them.</li>
 * </ul>
 * Internal to sandbox4j: its API may change in any release.
 *
 * @since 0.1.0
 */
public final class HttpTransport implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HttpTransport.class);
    /** {@code application/json}, the media type of every {@link #jsonBody}. */
    public static final MediaType JSON_TYPE = MediaType.get("application/json");
    private static final int ERROR_BODY_LIMIT = 64 * 1024;
    private static final int MESSAGE_LIMIT = 500;
    private static final AtomicInteger THREADS = new AtomicInteger();
    /** Calls in flight at once before further calls queue; threads end after 30 s idle. */
    static final int MAX_WORKERS = 256;
    private static final ExecutorService WORKERS = workers();
    /**
     * The default client's dispatcher, on daemon threads: OkHttp's own makes non-daemon threads that
     * idle for 60 s, so a program whose last sandbox call was asynchronous (a WebSocket, such as
     * Daytona's followed session log) would wait a minute at exit after {@code main} returned.
     */
    private static final okhttp3.Dispatcher DEFAULT_DISPATCHER = new okhttp3.Dispatcher(
            new java.util.concurrent.ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS,
                    new java.util.concurrent.SynchronousQueue<>(), r -> {
                        Thread t = new Thread(r, "sandbox4j-okhttp-dispatcher-" + THREADS.incrementAndGet());
                        t.setDaemon(true);
                        return t;
                    }));
    private static final OkHttpClient DEFAULT_CLIENT = new OkHttpClient.Builder()
            .dispatcher(DEFAULT_DISPATCHER)
            .connectTimeout(Duration.ofSeconds(15))
            .readTimeout(Duration.ofSeconds(90))
            .writeTimeout(Duration.ofSeconds(60))
            .retryOnConnectionFailure(false) // we decide what is safe to retry
            .build();

    /**
     * The dispatcher of every client this library makes for itself (the adapters' defaults), whose
     * threads are daemons: OkHttp's own dispatcher makes non-daemon threads that idle for 60 s, so a
     * program whose last call was asynchronous (a WebSocket reader, an enqueued call) would wait a minute
     * at exit. A client the caller passes keeps its own dispatcher.
     *
     * @return the shared dispatcher
     */
    public static okhttp3.Dispatcher daemonDispatcher() {
        return DEFAULT_DISPATCHER;
    }

    private static ExecutorService workers() {
        java.util.concurrent.ThreadPoolExecutor pool = new java.util.concurrent.ThreadPoolExecutor(MAX_WORKERS,
                MAX_WORKERS, 30, TimeUnit.SECONDS, new java.util.concurrent.LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "sandbox4j-http-" + THREADS.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        pool.allowCoreThreadTimeOut(true); // a bounded pool that shrinks to nothing when idle
        return pool;
    }

    /**
     * The JSON mapper of every transport: lenient on unknown fields, as the providers add fields freely.
     * One instance shared by all the adapters, so a change to its configuration changes them all.
     */
    public static final ObjectMapper JSON = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private final String provider;
    private final HttpUrl baseUrl;
    private final OkHttpClient client;
    private final Headers defaultHeaders;
    private final Set<String> secrets = new CopyOnWriteArraySet<>();
    /** Per-sandbox secrets, counted: two sandboxes may carry the same header-rule value. */
    private final Map<String, Integer> scopedSecrets = new ConcurrentHashMap<>();
    private final int maxRetries;
    private final Backoff backoff;
    private final ErrorBody errorBody;
    private final Duration unaryTimeout;
    private final long maxResponseBytes;

    private HttpTransport(Builder b) {
        this.provider = b.provider;
        this.baseUrl = Objects.requireNonNull(b.baseUrl, "baseUrl");
        // Shares the caller's pool, dispatcher and interceptors, but never re-sends on its own (a POST
        // whose answer was lost may have created a sandbox or run code), and has no socket read
        // timeout: every call is bounded by its own deadline instead, so a silent stream (a command
        // printing nothing for minutes) and a create the server holds for 30 s need no second client.
        this.client = sendOnce(b.client == null ? DEFAULT_CLIENT : b.client).newBuilder()
                .readTimeout(Duration.ZERO).build();
        this.defaultHeaders = b.headers.build();
        this.secrets.addAll(b.secrets);
        this.maxRetries = b.maxRetries;
        this.backoff = b.backoff != null ? b.backoff
                : Backoff.builder().base(b.retryBaseDelay).maxRetryAfter(b.maxRetryAfter).build();
        this.errorBody = b.errorBody;
        this.unaryTimeout = b.unaryTimeout;
        this.maxResponseBytes = b.maxResponseBytes;
    }

    /**
     * Starts a transport for one provider.
     *
     * @param provider the provider's name: it opens every exception message and log line of this
     *                 transport and is each exception's {@link SandboxException#provider()}; not null
     * @return a builder with the defaults its setters name
     * @throws NullPointerException when {@code provider} is null
     */
    public static Builder builder(String provider) {
        return new Builder(provider);
    }

    /**
     * {@code value} serialised by {@link #JSON} as a request body of type {@link #JSON_TYPE}.
     *
     * @param value what Jackson can serialise; null gives the body {@code null}
     * @return the body, serialised now (a later change to {@code value} is not sent)
     * @throws IllegalArgumentException when Jackson cannot serialise {@code value}
     */
    public static RequestBody jsonBody(Object value) {
        try {
            return RequestBody.create(JSON.writeValueAsBytes(value), JSON_TYPE);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot serialise request body", e);
        }
    }

    /** {@return the provider's name given to {@link #builder}} */
    public String provider() {
        return provider;
    }

    /** {@return the base URL {@link #url} appends paths to} */
    public HttpUrl baseUrl() {
        return baseUrl;
    }

    /**
     * {@return the client this transport's calls go through: the caller's (or the shared default)
     * derived to send each request at most once, with redirects off and no socket read timeout} Another
     * transport built on it shares its pool and keeps these settings.
     */
    public OkHttpClient client() {
        return client;
    }

    /**
     * {@return the retry policy of this transport's calls, whose clock and sleeper the adapter's polls use
     * too}
     */
    public Backoff backoff() {
        return backoff;
    }

    /**
     * {@code path} appended to the base URL segment by segment: it is split on '/', empty segments are
     * skipped and each segment is percent-encoded (a space, '?' and '#' included), so a '/' inside a value
     * always separates two segments. A segment {@code .} or {@code ..} is refused: OkHttp would drop the
     * first and let the second remove the segment before it, the base URL's own included (base
     * {@code /api/v1} and {@code ../../x} would give {@code /x}), so an id taken from a caller or a provider
     * could send a call to another endpoint. An id with a '/' still addresses a path below the one meant:
     * a caller putting an untrusted id in a path checks it first.
     *
     * @param path segments separated by '/'; empty for the base URL itself; not null
     * @return the URL
     * @throws IllegalArgumentException when a segment is {@code .} or {@code ..}
     */
    public HttpUrl url(String path) {
        HttpUrl.Builder b = baseUrl.newBuilder();
        for (String segment : path.split("/")) {
            if (!segment.isEmpty()) {
                b.addPathSegment(pathSegment(segment));
            }
        }
        return b.build();
    }

    /**
     * {@code value} as one path segment for {@code HttpUrl.Builder.addPathSegment} (which percent-encodes a
     * '/' in it), refused when OkHttp would take it as a dot segment and move up the path instead: for
     * an id from a caller or a provider put in a URL by hand.
     *
     * @param value the segment; not null
     * @return {@code value}
     * @throws IllegalArgumentException when {@code value} is empty, {@code .} or {@code ..}
     */
    public static String pathSegment(String value) {
        if (value.isEmpty() || value.equals(".") || value.equals("..")) {
            throw new IllegalArgumentException("'" + value + "' cannot be a segment of a request path");
        }
        return value;
    }

    /**
     * A request builder for {@code url} carrying the default headers (the secret headers among them),
     * whatever host {@code url} names; the caller adds the method and the body.
     *
     * @param url the target, usually from {@link #url}
     * @return a new builder
     */
    public Request.Builder request(HttpUrl url) {
        return new Request.Builder().url(url).headers(defaultHeaders);
    }

    /**
     * Adds a value that must never appear in messages or logs for as long as this transport lives (the
     * API key). A value tied to one sandbox goes in a {@link #secretScope()} instead.
     *
     * @param value the secret; null and values shorter than 4 characters are ignored (not redacted)
     */
    public void addSecret(String value) {
        if (value != null && value.length() >= 4) {
            secrets.add(value);
        }
    }

    /** {@return a new, open set of secrets for one sandbox, redacted until {@link SecretScope#close()}} */
    public SecretScope secretScope() {
        return new SecretScope();
    }

    /**
     * {@return how many distinct per-sandbox secrets open scopes hold now} For tests: it must not grow
     * with runs.
     */
    public int scopedSecretCount() {
        return scopedSecrets.size();
    }

    /**
     * {@code text} with every known secret (this transport's and its open scopes') replaced by {@code ***}.
     * The longest secrets are replaced first, so a secret that contains another is starred out whole
     * (with secrets {@code abcd} and {@code abcdefgh}, {@code abcdefgh} becomes {@code ***}, never
     * {@code ***efgh}).
     *
     * @param text the text; may be null
     * @return the redacted text; null for null
     */
    public String redact(String text) {
        if (text == null) {
            return null;
        }
        List<String> all = new ArrayList<>(secrets);
        all.addAll(scopedSecrets.keySet());
        all.sort(java.util.Comparator.comparingInt(String::length).reversed());
        String s = text;
        for (String secret : all) {
            s = s.replace(secret, "***");
        }
        return s;
    }

    /**
     * Secrets of one sandbox: added while it lives, removed together when it is done. Thread-safe.
     *
     * @since 0.1.0
     */
    public final class SecretScope implements AutoCloseable {
        private final List<String> mine = new ArrayList<>();
        private boolean closed;

        private SecretScope() {
        }

        /**
         * Redacts {@code value} until this scope closes. Additions are counted: a value added twice, or
         * by two scopes, stays redacted until each addition's scope has closed.
         *
         * @param value the secret; null and values shorter than 4 characters are ignored (not redacted)
         * @throws IllegalStateException when this scope is closed, whatever the value
         */
        public synchronized void add(String value) {
            if (closed) {
                throw new IllegalStateException("secret scope is closed");
            }
            if (value != null && value.length() >= 4) {
                mine.add(value);
                scopedSecrets.merge(value, 1, Integer::sum);
            }
        }

        /**
         * Ends the redaction of this scope's secrets (a value another open scope added, or that
         * {@link HttpTransport#addSecret} holds, stays redacted). Idempotent.
         */
        @Override
        public synchronized void close() {
            if (closed) {
                return;
            }
            closed = true;
            for (String value : mine) {
                scopedSecrets.computeIfPresent(value, (k, n) -> n <= 1 ? null : n - 1);
            }
            mine.clear();
        }

        @Override
        public String toString() {
            return "SecretScope[" + mine.size() + " secrets]";
        }
    }

    /**
     * The caller's client with every transport-level re-send turned off. OkHttp's
     * {@code retryOnConnectionFailure} (true by default) re-sends a request when a pooled connection
     * fails before the answer, and its follow-up logic re-sends after a redirect, a 408 or a 503 with
     * {@code Retry-After: 0}; the network interceptor below fails any second attempt of one call
     * whatever its cause, so "sent at most once" does not depend on OkHttp's internals.
     */
    static OkHttpClient sendOnce(OkHttpClient client) {
        for (Interceptor i : client.networkInterceptors()) {
            if (i instanceof SendOnceInterceptor) {
                return client; // derived already (a transport built on another transport's client)
            }
        }
        return client.newBuilder()
                .retryOnConnectionFailure(false)
                .followRedirects(false)
                .followSslRedirects(false)
                .addNetworkInterceptor(new SendOnceInterceptor())
                .build();
    }

    /** A per-call mark; the interceptor lets it through once. */
    static final class SendOnce {
        final java.util.concurrent.atomic.AtomicBoolean sent = new java.util.concurrent.atomic.AtomicBoolean();
    }

    static final class SendOnceInterceptor implements Interceptor {
        @Override
        public Response intercept(Chain chain) throws IOException {
            SendOnce mark = chain.request().tag(SendOnce.class);
            if (mark != null && !mark.sent.compareAndSet(false, true)) {
                throw new IOException("refusing to send " + chain.request().method() + " "
                        + chain.request().url().encodedPath() + " a second time");
            }
            Response response = chain.proceed(chain.request());
            String retryAfter = response.header("Retry-After");
            if (response.code() == 503 && retryAfter != null && "0".equals(retryAfter.trim())) {
                // OkHttp would re-send at once (whatever retryOnConnectionFailure says); keep the 503 ours
                return response.newBuilder().removeHeader("Retry-After").header(MOVED_RETRY_AFTER, "0").build();
            }
            return response;
        }
    }

    /** Where {@link SendOnceInterceptor} moves a 503's {@code Retry-After: 0} so OkHttp does not act on it. */
    static final String MOVED_RETRY_AFTER = "X-Sandbox4j-Retry-After";

    /**
     * A unary call returning the parsed JSON body ({@link MissingNode} for an empty body), each try
     * bounded by the unary timeout ({@link Builder#unaryTimeout}). An idempotent call is retried, up to
     * {@link Builder#maxRetries} times, after a retriable failure: an IO error (a 2xx body that is not
     * JSON among them), a passed deadline, 408, 409, 429 or 5xx; it waits by the backoff between tries,
     * or for the provider's Retry-After when one came, and stops retrying when that is longer than the
     * backoff's longest wait ({@link Builder#maxRetryAfter} by default). A non-idempotent call is tried
     * once.
     *
     * @param request the request, usually from {@link #request}
     * @param idempotent true when sending the request twice does no harm: it is then retried, and an IO
     *                   error or a passed deadline is not flagged
     *                   {@link SandboxException#requestMayHaveSucceeded()}
     * @return the body as JSON
     * @throws SandboxException the last failure: mapped from the status ({@link #errorFor}), from the IO
     *         error ({@link #ioError}: flagged requestMayHaveSucceeded when not idempotent, unless nothing
     *         was sent), or the passed deadline (retriable, flagged likewise); a 2xx body over
     *         {@link Builder#maxResponseBytes} is a non-retriable one flagged requestMayHaveSucceeded
     * @throws InterruptedException when the caller is interrupted during a try (which is cancelled) or
     *         a wait between tries
     */
    public JsonNode call(Request request, boolean idempotent) throws InterruptedException {
        return call(request, idempotent, r -> { });
    }

    /**
     * As {@link #call(Request, boolean)}, handing each 2xx answer to {@code headers} before its body is
     * read (for a header such as a page token).
     *
     * @param request the request, usually from {@link #request}
     * @param idempotent true when sending the request twice does no harm, as for
     *                   {@link #call(Request, boolean)}
     * @param headers given each 2xx response on the HTTP worker thread, so more than once when a 2xx
     *                body fails to parse and the call is retried; an unchecked exception it throws is
     *                thrown from here, but a retriable {@link SandboxException} is retried like any other;
     *                not null
     * @return the body as JSON
     * @throws SandboxException as for {@link #call(Request, boolean)}
     * @throws InterruptedException as for {@link #call(Request, boolean)}
     */
    public JsonNode call(Request request, boolean idempotent, java.util.function.Consumer<Response> headers)
            throws InterruptedException {
        int attempt = 0;
        while (true) {
            attempt++;
            try {
                return execute(request, unaryTimeout, r -> {
                    headers.accept(r);
                    return readJson(r);
                });
            } catch (ClientDeadlineException e) {
                SandboxException ex = timeoutError(request, idempotent);
                if (!retry(ex, idempotent, attempt)) {
                    throw ex;
                }
            } catch (IOException e) {
                SandboxException ex = ioError(request, e, !idempotent);
                if (!retry(ex, idempotent, attempt)) {
                    throw ex;
                }
            } catch (SandboxException e) {
                if (!retry(e, idempotent, attempt)) {
                    throw e;
                }
            }
        }
    }

    private boolean retry(SandboxException e, boolean idempotent, int attempt) throws InterruptedException {
        if (!idempotent || !e.isRetriable() || attempt > maxRetries) {
            return false;
        }
        java.util.Optional<Duration> delay = backoff.delay(attempt, e.retryAfter());
        if (delay.isEmpty()) {
            return false; // a Retry-After longer than worth waiting for
        }
        log.debug("{}: retrying after {} ms: {}", provider, delay.get().toMillis(), e.getMessage());
        backoff.sleep(delay.get());
        return true;
    }

    /**
     * Runs a call whose 2xx response {@code handler} reads (streaming), once, with a client deadline
     * over the whole call including the body. Never retried. Non-2xx answers become a mapped
     * {@link SandboxException}. The call runs on a shared worker thread, of which at most 256 run calls
     * at once; the deadline starts when a worker takes the call up, so the wait of a call queued behind
     * 256 others is not counted in it. A body {@code handler} reads only in part is not drained: the call
     * is cancelled when it returns.
     *
     * @param <T> what {@code handler} returns
     * @param request the request, usually from {@link #request}; sent at most once
     * @param deadline the whole call's client deadline; zero or negative means it has passed already
     *                 (the call ends at once with {@link ClientDeadlineException}), never that there is none
     * @param handler reads the 2xx response on the worker thread; the response is closed when it returns
     * @return what {@code handler} returned
     * @throws SandboxException for a non-2xx answer ({@link #errorFor}); an unchecked exception of
     *         {@code handler} is thrown as it is
     * @throws InterruptedException when the caller is interrupted (the call is cancelled first)
     * @throws ClientDeadlineException when {@code deadline} passed first (the call is cancelled), or an
     *         {@link IOException}, the handler's own among them, came once it had passed
     * @throws IOException when the connection failed or dropped, or {@code handler} threw one before the
     *         deadline
     */
    public <T> T execute(Request request, Duration deadline, ResponseHandler<T> handler)
            throws InterruptedException, ClientDeadlineException, IOException {
        return execute(client, request, deadline, handler);
    }

    /**
     * A streaming call (an NDJSON or SSE body, a long synchronous exec): as {@link #execute}, named for
     * the reader. No socket read timeout applies to any call; {@code deadline} bounds it whole.
     *
     * @param <T> what {@code handler} returns
     * @param request the request, usually from {@link #request}; sent at most once
     * @param deadline the whole call's client deadline, as for {@link #execute}
     * @param handler reads the 2xx response as it streams, on the worker thread
     * @return what {@code handler} returned
     * @throws SandboxException for a non-2xx answer ({@link #errorFor})
     * @throws InterruptedException when the caller is interrupted (the call is cancelled first)
     * @throws ClientDeadlineException when {@code deadline} passed first (the call is cancelled)
     * @throws IOException when the connection failed or dropped, or {@code handler} threw one
     */
    public <T> T stream(Request request, Duration deadline, ResponseHandler<T> handler)
            throws InterruptedException, ClientDeadlineException, IOException {
        return execute(client, request, deadline, handler);
    }

    private <T> T execute(OkHttpClient client, Request request, Duration deadline, ResponseHandler<T> handler)
            throws InterruptedException, ClientDeadlineException, IOException {
        // a fresh mark per call: our own retries of idempotent calls are new calls
        Call call = client.newCall(request.newBuilder().tag(SendOnce.class, new SendOnce()).build());
        // in nanoseconds, at least one: OkHttp reads 0 as "no timeout", so a deadline under a millisecond
        // given in whole milliseconds (or zero, or negative) would have meant no deadline at all
        call.timeout().timeout(Math.max(1, deadline.toNanos()), TimeUnit.NANOSECONDS);
        long deadlineNanos = System.nanoTime() + deadline.toNanos();
        Future<T> future = WORKERS.submit(() -> {
            try (Response response = call.execute()) {
                log.debug("{}: {} {} -> {}", provider, request.method(), request.url().encodedPath(), response.code());
                if (!response.isSuccessful()) {
                    throw errorFor(request, response);
                }
                ReadTracker tracked = new ReadTracker(response.body());
                try {
                    return handler.handle(response.newBuilder().body(tracked).build());
                } finally {
                    if (tracked.abandoned()) {
                        // read in part (a hard cap, a parse failure): close must not drain the rest
                        call.cancel();
                    }
                }
            }
        });
        try {
            return future.get();
        } catch (InterruptedException e) {
            call.cancel();
            future.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) {
                if (System.nanoTime() - deadlineNanos >= 0 || (io instanceof InterruptedIOException && "timeout".equals(io.getMessage()))) {
                    throw new ClientDeadlineException(provider + ": " + request.method() + " "
                            + request.url().encodedPath() + " passed its client deadline of " + deadline.toMillis() + " ms");
                }
                throw io;
            }
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(cause);
        }
    }

    /**
     * A response body that knows whether its reader started and reached the end. Abandoned = started,
     * not finished: the call is then cancelled before the response closes. OkHttp would otherwise
     * read on for up to 100 ms to keep the connection (some 100 MB of a fast flood).
     */
    private static final class ReadTracker extends ResponseBody {
        private final ResponseBody delegate;
        private final BufferedSource source;
        private volatile boolean started;
        private volatile boolean ended;
        private long total;

        ReadTracker(ResponseBody delegate) {
            this.delegate = delegate;
            this.source = Okio.buffer(new ForwardingSource(delegate.source()) {
                @Override
                public long read(Buffer sink, long byteCount) throws IOException {
                    started = true;
                    long n = super.read(sink, byteCount);
                    if (n > 0) {
                        total += n;
                    }
                    long length = delegate.contentLength();
                    if (n == -1 || (length >= 0 && total >= length)) {
                        ended = true;
                    }
                    return n;
                }
            });
        }

        boolean abandoned() {
            return started && !ended && delegate.contentLength() != 0;
        }

        @Override
        public MediaType contentType() {
            return delegate.contentType();
        }

        @Override
        public long contentLength() {
            return delegate.contentLength();
        }

        @Override
        public BufferedSource source() {
            return source;
        }

        @Override
        public void close() {
            source.getBuffer().clear();
            delegate.close();
        }
    }

    /**
     * Maps a non-2xx response (its body read up to 64 KiB) to the exception hierarchy, once: a 5xx to a
     * POST or PATCH is flagged {@link SandboxException#requestMayHaveSucceeded()} (a PUT or DELETE is not).
     * The builder's {@link ErrorBody} reads the body for a code and a message; a body that is not JSON
     * (or is cut at 64 KiB) is the message as it is. The message is
     * {@code "<provider>: <method> <path> -> HTTP <status>[ <code>][: <message>]"}, redacted and cut at 500
     * characters; the provider code is redacted too; Retry-After is read as seconds or an HTTP date.
     *
     * @param request the request that was answered
     * @param response the answer; its body is peeked, not consumed
     * @return the exception, not thrown, of the type and retriability {@link HttpErrors#forStatus} gives
     *         the status
     */
    public SandboxException errorFor(Request request, Response response) {
        String body = "";
        try {
            ResponseBody peek = response.peekBody(ERROR_BODY_LIMIT);
            body = peek.string();
        } catch (IOException e) {
            // the status alone still maps
        }
        String code;
        String message;
        try {
            ErrorBody.Parsed parsed = errorBody.read(body.isBlank() ? MissingNode.getInstance() : JSON.readTree(body));
            code = parsed.code();
            message = parsed.message();
        } catch (IOException e) {
            code = null;
            message = body.isBlank() ? null : body;
        }
        int status = response.code();
        String text = provider + ": " + request.method() + " " + request.url().encodedPath() + " -> HTTP " + status
                + (code == null ? "" : " " + code) + (message == null ? "" : ": " + message);
        // a 5xx to a POST or PATCH may come after the work was done (a create, a command started)
        boolean ambiguous = status >= 500 && ("POST".equals(request.method()) || "PATCH".equals(request.method()));
        SandboxException.Builder b = SandboxException.builder(truncate(redact(text)))
                .provider(provider)
                .httpStatus(status)
                .requestMayHaveSucceeded(ambiguous)
                .providerCode(code == null ? null : redact(code))
                .retryAfter(parseRetryAfter(response.header("Retry-After") != null
                        ? response.header("Retry-After") : response.header(MOVED_RETRY_AFTER)));
        return HttpErrors.forStatus(b);
    }

    /**
     * An IO failure as a retriable {@link SandboxException}, with the message
     * {@code "<provider>: <method> <path> failed: <exception class> <its message>"}, redacted and cut at 500
     * characters. {@code e} is not kept as the cause. A refused connection or an unknown host certainly
     * sent nothing, so it is never flagged {@link SandboxException#requestMayHaveSucceeded()}.
     *
     * @param request the request that failed
     * @param e the failure
     * @param mayHaveSucceeded whether the request may have done its work before the failure (usually:
     *                         it is not idempotent)
     * @return the exception, not thrown
     */
    public SandboxException ioError(Request request, IOException e, boolean mayHaveSucceeded) {
        boolean notSent = e instanceof ConnectException || e instanceof UnknownHostException;
        String text = provider + ": " + request.method() + " " + request.url().encodedPath() + " failed: "
                + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : " " + e.getMessage());
        return SandboxException.builder(truncate(redact(text)))
                .provider(provider)
                .retriable(true)
                .requestMayHaveSucceeded(mayHaveSucceeded && !notSent)
                .build();
    }

    private SandboxException timeoutError(Request request, boolean idempotent) {
        return SandboxException.builder(provider + ": " + request.method() + " " + request.url().encodedPath()
                        + " timed out after " + unaryTimeout.toMillis() + " ms")
                .provider(provider).retriable(true).requestMayHaveSucceeded(!idempotent).build();
    }

    /** The body as JSON, refused past {@code maxResponseBytes}: a hostile or broken server cannot fill the heap. */
    private JsonNode readJson(Response response) throws IOException {
        ResponseBody body = response.body();
        BufferedSource source = body.source();
        if (body.contentLength() > maxResponseBytes || source.request(maxResponseBytes + 1)) {
            throw SandboxException.builder(provider + ": " + response.request().method() + " "
                            + response.request().url().encodedPath() + " answered HTTP " + response.code()
                            + " with a body over " + maxResponseBytes + " bytes")
                    .provider(provider).requestMayHaveSucceeded(true).build();
        }
        String s = source.readUtf8();
        return s.isBlank() ? MissingNode.getInstance() : JSON.readTree(s);
    }


    private static String truncate(String s) {
        return s.length() <= MESSAGE_LIMIT ? s : s.substring(0, MESSAGE_LIMIT) + "...";
    }

    static Duration parseRetryAfter(String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        String v = value.trim();
        try {
            long seconds = Long.parseLong(v);
            return seconds < 0 ? null : Duration.ofSeconds(seconds);
        } catch (NumberFormatException e) {
            try {
                ZonedDateTime when = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME);
                Duration d = Duration.between(ZonedDateTime.now(when.getZone()), when);
                return d.isNegative() ? Duration.ZERO : d;
            } catch (RuntimeException ignored) {
                return null;
            }
        }
    }

    /** Nothing to release: the OkHttp client may be the caller's, and the worker pool is shared. */
    @Override
    public void close() {
    }

    @Override
    public String toString() {
        return "HttpTransport[" + provider + " " + baseUrl + "]";
    }

    /**
     * Settings for {@link HttpTransport}: the provider's base URL and client, headers, the secrets to redact, retries, deadlines and the response cap.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        /** The largest {@link #maxResponseBytes} limit: a JSON body is read into one array. */
        public static final long MAX_RESPONSE_BYTES = Integer.MAX_VALUE - 8;

        private final String provider;
        private HttpUrl baseUrl;
        private OkHttpClient client;
        private final Headers.Builder headers = new Headers.Builder();
        private final List<String> secrets = new ArrayList<>();
        private int maxRetries = 2;
        private Duration retryBaseDelay = Duration.ofMillis(400);
        private Duration maxRetryAfter = Duration.ofSeconds(20);
        private Backoff backoff;
        private ErrorBody errorBody = ErrorBody.STANDARD;
        private Duration unaryTimeout = Duration.ofSeconds(60);
        private long maxResponseBytes = 16L << 20;

        private Builder(String provider) {
            this.provider = Objects.requireNonNull(provider, "provider");
        }

        /**
         * The base URL that {@link HttpTransport#url} appends paths to. Required.
         *
         * @param url an absolute http or https URL; not null
         * @return this builder
         * @throws IllegalArgumentException for a URL that is not http(s)
         * @throws NullPointerException when {@code url} is null
         */
        public Builder baseUrl(String url) {
            HttpUrl parsed = HttpUrl.parse(url);
            if (parsed == null) {
                throw new IllegalArgumentException(provider + ": base URL '" + url + "' is not an http(s) URL");
            }
            this.baseUrl = parsed;
            return this;
        }

        /**
         * The caller's OkHttpClient (its pool, proxy and interceptors); a shared default otherwise (15 s
         * connect and 60 s write timeouts). The transport sends through a client derived from it
         * ({@link HttpTransport#client()}).
         *
         * @param client the client; null for the shared default
         * @return this builder
         */
        public Builder client(OkHttpClient client) {
            this.client = client;
            return this;
        }

        /**
         * A header sent on every call, not redacted ({@link #secretHeader} is for a key). A name added
         * twice is sent with both values.
         *
         * @param name the header's name
         * @param value its value
         * @return this builder
         * @throws IllegalArgumentException (OkHttp's) when the name or the value has a character a header
         *         cannot carry; the message quotes the value unless the header is one OkHttp deems
         *         sensitive, such as {@code Authorization}
         */
        public Builder header(String name, String value) {
            headers.add(name, value);
            return this;
        }

        /**
         * A header carrying a secret: sent on every call, redacted from every message.
         *
         * @param name the header's name
         * @param prefix what precedes the secret in the value, such as {@code "Bearer "}, or empty; not
         *               null, or the value starts with the text {@code null}
         * @param secret the key; not null. Its value is redacted whatever its length (unlike
         *               {@link HttpTransport#addSecret}'s, which ignores one under 4 characters), so a key of
         *               a character or two is starred out wherever those characters appear in a message
         * @return this builder
         * @throws IllegalArgumentException when the value has a character a header cannot carry (the
         *         message names the header, never the value: OkHttp's own would quote it)
         */
        public Builder secretHeader(String name, String prefix, Secret secret) {
            String value = prefix + secret.reveal();
            for (int i = 0; i < value.length(); i++) {
                char c = value.charAt(i);
                if ((c < 0x20 && c != '\t') || c > 0x7e) {
                    throw new IllegalArgumentException(provider + ": the value of header " + name + " has a character"
                            + " a header cannot carry at index " + i + " (a trailing newline in the key?)");
                }
            }
            headers.add(name, value);
            secrets.add(secret.reveal());
            return this;
        }

        /**
         * How many times an idempotent {@link HttpTransport#call} is retried after its first try. Default
         * 2 (three tries at most).
         *
         * @param n the retries; zero or negative for none
         * @return this builder
         */
        public Builder maxRetries(int n) {
            this.maxRetries = n;
            return this;
        }

        /**
         * The first delay of the default backoff, doubled on each retry up to 8 s, plus up to a quarter
         * at random. Ignored when {@link #backoff} is set. Default 400 ms.
         *
         * @param d positive; checked by {@link #build()}
         * @return this builder
         */
        public Builder retryBaseDelay(Duration d) {
            this.retryBaseDelay = d;
            return this;
        }

        /**
         * The longest Retry-After the default backoff waits for; when a provider asks for longer, the
         * call is not retried and its failure is thrown. Ignored when {@link #backoff} is set. Default
         * 20 s.
         *
         * @param d not null; checked by {@link #build()}
         * @return this builder
         */
        public Builder maxRetryAfter(Duration d) {
            this.maxRetryAfter = d;
            return this;
        }

        /**
         * How this provider's error bodies read. Default {@link ErrorBody#STANDARD}.
         *
         * @param parser the reader; not null
         * @return this builder
         * @throws NullPointerException when {@code parser} is null
         */
        public Builder errorBody(ErrorBody parser) {
            this.errorBody = Objects.requireNonNull(parser, "parser");
            return this;
        }

        /**
         * The whole retry policy (sleeper and clock included); overrides retryBaseDelay and maxRetryAfter.
         *
         * @param backoff the policy; null for the default one built from {@link #retryBaseDelay} and
         *                {@link #maxRetryAfter}
         * @return this builder
         */
        public Builder backoff(Backoff backoff) {
            this.backoff = backoff;
            return this;
        }

        /**
         * The client deadline of each try of a unary call ({@link HttpTransport#call}), its body included.
         * Default 60 s.
         *
         * @param d the deadline, positive
         * @return this builder
         * @throws IllegalArgumentException when null, zero or negative
         */
        public Builder unaryTimeout(Duration d) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException("unaryTimeout must be positive, was " + d);
            }
            this.unaryTimeout = d;
            return this;
        }

        /**
         * The largest JSON body {@link HttpTransport#call} reads; a longer one is a
         * {@link SandboxException}, not retriable, flagged
         * {@link SandboxException#requestMayHaveSucceeded()}. Default 16 MiB. The body is held in memory
         * whole, so the limit is at most {@value #MAX_RESPONSE_BYTES} bytes.
         *
         * @param n the limit in bytes, 1 to {@value #MAX_RESPONSE_BYTES}
         * @return this builder
         * @throws IllegalArgumentException when {@code n} is below 1 or above {@value #MAX_RESPONSE_BYTES}
         */
        public Builder maxResponseBytes(long n) {
            if (n < 1 || n > MAX_RESPONSE_BYTES) {
                throw new IllegalArgumentException("maxResponseBytes must be 1 to " + MAX_RESPONSE_BYTES + ", was " + n);
            }
            this.maxResponseBytes = n;
            return this;
        }

        /**
         * {@return the transport}
         *
         * @throws NullPointerException when no base URL was set, or (without {@link #backoff}) when
         *         {@link #maxRetryAfter} is null
         * @throws IllegalArgumentException when (without {@link #backoff}) {@link #retryBaseDelay} is null,
         *         zero or negative
         */
        public HttpTransport build() {
            return new HttpTransport(this);
        }
    }
}
