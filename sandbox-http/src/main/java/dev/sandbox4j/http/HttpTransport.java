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
 *   <li>retries of idempotent calls on IO errors, 408, 429 and 5xx; non-idempotent calls are never
 *       retried, and an ambiguous failure is flagged {@link SandboxException#requestMayHaveSucceeded()};</li>
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
    public static final MediaType JSON_TYPE = MediaType.get("application/json");
    private static final int ERROR_BODY_LIMIT = 64 * 1024;
    private static final int MESSAGE_LIMIT = 500;
    private static final AtomicInteger THREADS = new AtomicInteger();
    /** Calls in flight at once before further calls queue; threads end after 30 s idle. */
    static final int MAX_WORKERS = 256;
    private static final ExecutorService WORKERS = workers();
    private static final OkHttpClient DEFAULT_CLIENT = new OkHttpClient.Builder()
            .connectTimeout(Duration.ofSeconds(15))
            .readTimeout(Duration.ofSeconds(90))
            .writeTimeout(Duration.ofSeconds(60))
            .retryOnConnectionFailure(false) // we decide what is safe to retry
            .build();

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

    /** Lenient on unknown fields, as the providers add fields freely. */
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

    public static Builder builder(String provider) {
        return new Builder(provider);
    }

    public static RequestBody jsonBody(Object value) {
        try {
            return RequestBody.create(JSON.writeValueAsBytes(value), JSON_TYPE);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot serialise request body", e);
        }
    }

    public String provider() {
        return provider;
    }

    public HttpUrl baseUrl() {
        return baseUrl;
    }

    public OkHttpClient client() {
        return client;
    }

    /** The retry policy of this transport's calls, whose clock and sleeper the adapter's polls use too. */
    public Backoff backoff() {
        return backoff;
    }

    /** {@code path} (segments separated by '/', each encoded) appended to the base URL. */
    public HttpUrl url(String path) {
        HttpUrl.Builder b = baseUrl.newBuilder();
        for (String segment : path.split("/")) {
            if (!segment.isEmpty()) {
                b.addPathSegment(segment);
            }
        }
        return b.build();
    }

    /** A request builder with the default headers (auth among them). */
    public Request.Builder request(HttpUrl url) {
        return new Request.Builder().url(url).headers(defaultHeaders);
    }

    /**
     * Adds a value that must never appear in messages or logs for as long as this transport lives (the
     * API key). A value tied to one sandbox goes in a {@link #secretScope()} instead.
     */
    public void addSecret(String value) {
        if (value != null && value.length() >= 4) {
            secrets.add(value);
        }
    }

    /** A set of secrets for one sandbox, redacted until {@link SecretScope#close()}. */
    public SecretScope secretScope() {
        return new SecretScope();
    }

    /** How many per-sandbox secrets are registered now (for tests: it must not grow with runs). */
    public int scopedSecretCount() {
        return scopedSecrets.size();
    }

    /** {@code text} with every known secret replaced by {@code ***}. */
    public String redact(String text) {
        if (text == null) {
            return null;
        }
        String s = text;
        for (String secret : secrets) {
            s = s.replace(secret, "***");
        }
        for (String secret : scopedSecrets.keySet()) {
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

        /** Redacts {@code value} until this scope closes; after close it is refused. */
        public synchronized void add(String value) {
            if (closed) {
                throw new IllegalStateException("secret scope is closed");
            }
            if (value != null && value.length() >= 4) {
                mine.add(value);
                scopedSecrets.merge(value, 1, Integer::sum);
            }
        }

        /** Idempotent. */
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
     * A unary call returning the parsed JSON body ({@link MissingNode} for an empty body). Idempotent
     * calls are retried on IO errors, 408, 429 (honouring Retry-After) and 5xx.
     *
     * @throws SandboxException mapped from the status or the IO error
     */
    public JsonNode call(Request request, boolean idempotent) throws InterruptedException {
        return call(request, idempotent, r -> { });
    }

    /** As {@link #call(Request, boolean)}, handing each 2xx answer's headers to {@code headers} first (a page token). */
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
     * {@link SandboxException}.
     *
     * @throws InterruptedException when the caller is interrupted (the call is cancelled first)
     * @throws ClientDeadlineException when {@code deadline} passed first (the call is cancelled)
     * @throws IOException when the connection failed or dropped
     */
    public <T> T execute(Request request, Duration deadline, ResponseHandler<T> handler)
            throws InterruptedException, ClientDeadlineException, IOException {
        return execute(client, request, deadline, handler);
    }

    /**
     * A streaming call (an NDJSON or SSE body, a long synchronous exec): as {@link #execute}, named for
     * the reader. No socket read timeout applies to any call; {@code deadline} bounds it whole.
     */
    public <T> T stream(Request request, Duration deadline, ResponseHandler<T> handler)
            throws InterruptedException, ClientDeadlineException, IOException {
        return execute(client, request, deadline, handler);
    }

    private <T> T execute(OkHttpClient client, Request request, Duration deadline, ResponseHandler<T> handler)
            throws InterruptedException, ClientDeadlineException, IOException {
        // a fresh mark per call: our own retries of idempotent calls are new calls
        Call call = client.newCall(request.newBuilder().tag(SendOnce.class, new SendOnce()).build());
        call.timeout().timeout(deadline.toMillis(), TimeUnit.MILLISECONDS);
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
     * POST or PATCH is flagged {@link SandboxException#requestMayHaveSucceeded()}.
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

    /** An IO failure as a retriable {@link SandboxException}; a refused connection certainly sent nothing. */
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

        /** @throws IllegalArgumentException for a URL that is not http(s) */
        public Builder baseUrl(String url) {
            HttpUrl parsed = HttpUrl.parse(url);
            if (parsed == null) {
                throw new IllegalArgumentException(provider + ": base URL '" + url + "' is not an http(s) URL");
            }
            this.baseUrl = parsed;
            return this;
        }

        /** The caller's OkHttpClient (its pool, proxy and interceptors); a shared default otherwise. */
        public Builder client(OkHttpClient client) {
            this.client = client;
            return this;
        }

        public Builder header(String name, String value) {
            headers.add(name, value);
            return this;
        }

        /**
         * A header carrying a secret: sent on every call, redacted from every message.
         *
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

        public Builder maxRetries(int n) {
            this.maxRetries = n;
            return this;
        }

        public Builder retryBaseDelay(Duration d) {
            this.retryBaseDelay = d;
            return this;
        }

        public Builder maxRetryAfter(Duration d) {
            this.maxRetryAfter = d;
            return this;
        }

        /** How this provider's error bodies read. Default {@link ErrorBody#STANDARD}. */
        public Builder errorBody(ErrorBody parser) {
            this.errorBody = Objects.requireNonNull(parser, "parser");
            return this;
        }

        /** The whole retry policy (sleeper and clock included); overrides retryBaseDelay and maxRetryAfter. */
        public Builder backoff(Backoff backoff) {
            this.backoff = backoff;
            return this;
        }

        /** The client deadline of a unary call. Default 60 s. */
        public Builder unaryTimeout(Duration d) {
            this.unaryTimeout = d;
            return this;
        }

        /** The largest JSON body {@link #call} reads; a longer one is a SandboxException. Default 16 MiB. */
        public Builder maxResponseBytes(long n) {
            if (n < 1) {
                throw new IllegalArgumentException("maxResponseBytes must be positive");
            }
            this.maxResponseBytes = n;
            return this;
        }

        public HttpTransport build() {
            return new HttpTransport(this);
        }
    }
}
