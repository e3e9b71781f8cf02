package dev.sandbox4j.modal.internal;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.sandbox4j.api.exception.SandboxAuthenticationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.api.exception.SandboxRateLimitException;
import dev.sandbox4j.modal.internal.proto.ModalApi;
import dev.sandbox4j.modal.internal.proto.ModalClientGrpc;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Iterator;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control-plane channel ({@code modal.client.ModalClient}) and everything every call needs: the
 * SDKs' metadata, the auth JWT (fetched once, refreshed after half its lifetime, re-fetched on
 * UNAUTHENTICATED), retries of idempotent unary calls with one stable {@code x-idempotency-key},
 * the server's throttling ({@code RPCRetryPolicy} in {@code grpc-status-details-bin}) and the mapping
 * of gRPC status codes to the {@link SandboxException} family. The token id and secret live only in
 * the metadata of outgoing calls; messages are redacted of them.
 */
final class ModalRpc implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ModalRpc.class);
    static final String PROVIDER = ModalPolicy.RUNNER;
    static final Metadata.Key<String> TOKEN_ID = key("x-modal-token-id");
    static final Metadata.Key<String> TOKEN_SECRET = key("x-modal-token-secret");
    static final Metadata.Key<String> AUTH_TOKEN = key("x-modal-auth-token");
    static final Metadata.Key<String> IDEMPOTENCY_KEY = key("x-idempotency-key");
    static final Metadata.Key<String> RETRY_ATTEMPT = key("x-retry-attempt");
    static final Metadata.Key<String> THROTTLE_RETRY_ATTEMPT = key("x-throttle-retry-attempt");
    static final Metadata.Key<byte[]> STATUS_DETAILS =
            Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER);
    static final String RETRY_POLICY_TYPE = "modal.client.RPCRetryPolicy";
        /** Below the JS SDK's 100 MiB: no answer this client reads is large, and memory stays bounded. */
    static final int MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
    /** Codes the SDKs retry on idempotent unary calls. */
    static final Set<Status.Code> RETRIABLE = Set.of(Status.Code.DEADLINE_EXCEEDED, Status.Code.UNAVAILABLE,
            Status.Code.CANCELLED, Status.Code.INTERNAL, Status.Code.UNKNOWN);
    private static final Pattern EXP = Pattern.compile("\"exp\"\\s*:\\s*(\\d+)");
    private static final Duration DEFAULT_TOKEN_LIFETIME = Duration.ofMinutes(20);
    private static final int MESSAGE_LIMIT = 300;

    private final ModalSettings settings;
    private final ManagedChannel channel;
    private final LongSupplier wallClockMillis;
    private final Object tokenLock = new Object();
    private String authToken;
    private long refreshAtMillis;
    private final java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();

    ModalRpc(ModalSettings settings, ModalChannels channels) {
        this(settings, channels, System::currentTimeMillis);
    }

    ModalRpc(ModalSettings settings, ModalChannels channels, LongSupplier wallClockMillis) {
        this.settings = settings;
        this.channel = channels.open(settings.host, settings.port);
        this.wallClockMillis = wallClockMillis;
    }

    private static Metadata.Key<String> key(String name) {
        return Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
    }

    ModalSettings settings() {
        return settings;
    }

    /** Control-plane calls made so far (each retry counts), for tests and the RPC count. */
    int callCount() {
        return calls.get();
    }

    /** The metadata every control-plane call carries, as the JS SDK 0.11.1 sends it. */
    private Metadata baseMetadata() {
        Metadata md = new Metadata();
        md.put(key("x-modal-client-type"), ModalSettings.CLIENT_TYPE);
        md.put(key("x-modal-client-version"), ModalSettings.CLIENT_VERSION);
        md.put(key("x-modal-libmodal-version"), ModalSettings.LIBRARY_VERSION);
        md.put(TOKEN_ID, settings.tokenId.reveal());
        md.put(TOKEN_SECRET, settings.tokenSecret.reveal());
        md.put(key("x-modal-host"), settings.host);
        return md;
    }

    // ---------------------------------------------------------------- auth token

    /** The cached JWT, fetched with {@code AuthTokenGet} when missing or past half its lifetime. */
    String authToken() throws InterruptedException {
        synchronized (tokenLock) {
            if (authToken != null && wallClockMillis.getAsLong() < refreshAtMillis) {
                return authToken;
            }
        }
        ModalApi.AuthTokenGetResponse r = call(ModalClientGrpc.getAuthTokenGetMethod(),
                ModalApi.AuthTokenGetRequest.getDefaultInstance(), true, settings.requestTimeout, false, false);
        if (r.getToken().isEmpty()) {
            throw SandboxException.builder("modal: AuthTokenGet answered without a token").provider(PROVIDER)
                    .retriable(true).build();
        }
        long now = wallClockMillis.getAsLong();
        long exp = expiryMillis(r.getToken(), now);
        synchronized (tokenLock) {
            authToken = r.getToken();
            refreshAtMillis = now + Math.max(0, (exp - now) / 2);
            return authToken;
        }
    }

    private void invalidateToken(String token) {
        synchronized (tokenLock) {
            if (token != null && token.equals(authToken)) {
                authToken = null;
            }
        }
    }

    /** The JWT's {@code exp} in epoch millis, read without verifying it (as the SDKs do); 20 minutes if absent. */
    static long expiryMillis(String jwt, long now) {
        String[] parts = jwt.split("\\.");
        if (parts.length >= 2) {
            try {
                String payload = new String(Base64.getUrlDecoder().decode(parts[1]), StandardCharsets.UTF_8);
                Matcher m = EXP.matcher(payload);
                if (m.find()) {
                    return Long.parseLong(m.group(1)) * 1000;
                }
            } catch (IllegalArgumentException e) {
                // not base64url: treat as opaque
            }
        }
        return now + DEFAULT_TOKEN_LIFETIME.toMillis();
    }

    // ---------------------------------------------------------------- calls

    /**
     * One logical unary call. With {@code idempotent}, transient failures are retried up to the
     * configured attempts with backoff, every try carrying the same {@code x-idempotency-key}.
     * Throttling is waited out for every call (the server refused it, so nothing happened), up to
     * {@code maxThrottleWait}. A call that is not idempotent is sent once; a transient failure then
     * comes back with {@link SandboxException#requestMayHaveSucceeded()}.
     */
    <Q, R> R unary(MethodDescriptor<Q, R> method, Q request, boolean idempotent) throws InterruptedException {
        return call(method, request, idempotent, settings.requestTimeout, true, true);
    }

    <Q, R> R unary(MethodDescriptor<Q, R> method, Q request, boolean idempotent, Duration deadline)
            throws InterruptedException {
        return call(method, request, idempotent, deadline, true, true);
    }

    private <Q, R> R call(MethodDescriptor<Q, R> method, Q request, boolean idempotent, Duration deadline,
                          boolean withAuthToken, boolean throttleRetries) throws InterruptedException {
        String idempotencyKey = UUID.randomUUID().toString();
        String what = shortName(method);
        int retries = 0;
        int throttles = 0;
        boolean reauthenticated = false;
        while (true) {
            String token = withAuthToken ? authToken() : null;
            Metadata md = baseMetadata();
            md.put(IDEMPOTENCY_KEY, idempotencyKey);
            md.put(RETRY_ATTEMPT, Integer.toString(retries));
            md.put(THROTTLE_RETRY_ATTEMPT, Integer.toString(throttles));
            if (token != null) {
                md.put(AUTH_TOKEN, token);
            }
            Channel ch = ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(md));
            calls.incrementAndGet();
            try {
                return ClientCalls.blockingUnaryCall(ch, method,
                        CallOptions.DEFAULT.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS), request);
            } catch (StatusRuntimeException e) {
                rethrowInterrupt(e);
                Status.Code code = e.getStatus().getCode();
                Optional<Duration> throttle = retryAfter(e);
                if (throttle.isPresent() && throttleRetries) {
                    Duration wait = throttle.get();
                    if (wait.compareTo(settings.maxThrottleWait) <= 0 && throttles < 8) {
                        throttles++;
                        log.debug("modal {}: throttled, retrying in {}", what, wait);
                        settings.backoff.sleep(wait);
                        continue;
                    }
                }
                if (code == Status.Code.UNAUTHENTICATED && token != null && !reauthenticated) {
                    // the JWT may have expired early: fetch a new one and try once more (the call was refused)
                    reauthenticated = true;
                    invalidateToken(token);
                    continue;
                }
                if (idempotent && RETRIABLE.contains(code) && retries + 1 < settings.maxUnaryAttempts) {
                    retries++;
                    settings.backoff.sleep(settings.backoff.delay(retries));
                    continue;
                }
                throw map(e, "modal: " + what, !idempotent);
            }
        }
    }

    /** A server-streaming control-plane call (ImageJoinStreaming), not retried here. */
    <Q, R> Iterator<R> serverStream(MethodDescriptor<Q, R> method, Q request, Duration deadline)
            throws InterruptedException {
        Metadata md = baseMetadata();
        md.put(AUTH_TOKEN, authToken());
        Channel ch = ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(md));
        calls.incrementAndGet();
        return ClientCalls.blockingServerStreamingCall(ch, method,
                CallOptions.DEFAULT.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS), request);
    }

    static String shortName(MethodDescriptor<?, ?> method) {
        String n = method.getFullMethodName();
        return n.substring(n.lastIndexOf('/') + 1);
    }

    /** Turns a call cancelled by an interrupt back into an InterruptedException (the flag stays set for the lifecycle to clear). */
    static void rethrowInterrupt(StatusRuntimeException e) throws InterruptedException {
        if (e.getCause() instanceof InterruptedException || Thread.currentThread().isInterrupted()) {
            Thread.interrupted();
            InterruptedException ie = new InterruptedException("modal: interrupted during a call");
            ie.initCause(e);
            throw ie;
        }
    }

    /** The server's {@code RPCRetryPolicy.retry_after_secs}, when the failure carries one. */
    static Optional<Duration> retryAfter(StatusRuntimeException e) {
        Metadata trailers = e.getTrailers();
        byte[] details = trailers == null ? null : trailers.get(STATUS_DETAILS);
        if (details == null) {
            return Optional.empty();
        }
        try {
            ModalApi.RPCStatus status = ModalApi.RPCStatus.parseFrom(details);
            for (Any any : status.getDetailsList()) {
                if (any.getTypeUrl().endsWith("/" + RETRY_POLICY_TYPE) || any.getTypeUrl().equals(RETRY_POLICY_TYPE)) {
                    float secs = ModalApi.RPCRetryPolicy.parseFrom(any.getValue()).getRetryAfterSecs();
                    if (secs >= 0 && Float.isFinite(secs)) {
                        return Optional.of(Duration.ofMillis((long) Math.ceil(secs * 1000.0)));
                    }
                }
            }
        } catch (InvalidProtocolBufferException ignored) {
            // a garbled detail is no retry policy
        }
        return Optional.empty();
    }

    /**
     * The {@link SandboxException} for a failed call: UNAUTHENTICATED and PERMISSION_DENIED are
     * authentication failures, NOT_FOUND not found, RESOURCE_EXHAUSTED a rate limit (with the server's
     * retry-after when it sent one: the provider throttling or at its concurrency limit, which the API
     * calls a rate limit; a capacity failure is a local cap's); DEADLINE_EXCEEDED, UNAVAILABLE, CANCELLED, INTERNAL,
     * UNKNOWN, ABORTED and DATA_LOSS are retriable and, on a call that is not idempotent
     * ({@code ambiguous}), may have taken effect; anything else is final.
     */
    SandboxException map(StatusRuntimeException e, String what, boolean ambiguous) {
        return map(e, what, ambiguous, false);
    }

    /** As {@link #map(StatusRuntimeException, String, boolean)}, for a call after which the code may have run. */
    SandboxException map(StatusRuntimeException e, String what, boolean ambiguous, boolean codeMayHaveRun) {
        Status.Code code = e.getStatus().getCode();
        String desc = e.getStatus().getDescription();
        String message = limit(redact(what + " failed: " + code + (desc == null || desc.isEmpty() ? "" : ": " + desc)));
        SandboxException.Builder b = SandboxException.builder(message).provider(PROVIDER).providerCode(code.name())
                .codeMayHaveRun(codeMayHaveRun); // no cause: its description is not redacted
        switch (code) {
            case UNAUTHENTICATED:
            case PERMISSION_DENIED:
                return new SandboxAuthenticationException(b.retriable(false));
            case NOT_FOUND:
                return new SandboxNotFoundException(b.retriable(false));
            case RESOURCE_EXHAUSTED:
                return new SandboxRateLimitException(b.retriable(true).retryAfter(retryAfter(e).orElse(null)));
            case DEADLINE_EXCEEDED:
            case UNAVAILABLE:
            case CANCELLED:
            case INTERNAL:
            case UNKNOWN:
            case ABORTED:
            case DATA_LOSS:
                return b.retriable(true).requestMayHaveSucceeded(ambiguous).build();
            default:
                return b.retriable(false).build();
        }
    }

    String redact(String s) {
        if (s == null) {
            return "";
        }
        String out = s;
        for (String secret : new String[] {settings.tokenId.reveal(), settings.tokenSecret.reveal()}) {
            if (secret.length() >= 4) {
                out = out.replace(secret, "***");
            }
        }
        return out;
    }

    static String limit(String s) {
        return s.length() <= MESSAGE_LIMIT ? s : s.substring(0, MESSAGE_LIMIT) + "...";
    }

    @Override
    public void close() {
        channel.shutdownNow();
    }

    @Override
    public String toString() {
        return "ModalRpc[" + settings.serverUrl + "]";
    }
}
