package dev.sandbox4j.emulators.modal.internal;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.security.MessageDigest;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The header checks of both servers (modal.md 2): every control-plane call carries
 * {@code x-modal-token-id} / {@code x-modal-token-secret}; the V2 family also needs a valid
 * {@code x-modal-auth-token} from {@code AuthTokenGet}; every router call carries
 * {@code authorization: Bearer <jwt>} for one task. Failures are UNAUTHENTICATED, before any handler runs.
 */
public final class Auth {
    public static final Metadata.Key<String> TOKEN_ID = key("x-modal-token-id");
    public static final Metadata.Key<String> TOKEN_SECRET = key("x-modal-token-secret");
    public static final Metadata.Key<String> AUTH_TOKEN = key("x-modal-auth-token");
    public static final Metadata.Key<String> IDEMPOTENCY_KEY = key("x-idempotency-key");
    public static final Metadata.Key<String> AUTHORIZATION = key("authorization");
    public static final Metadata.Key<byte[]> STATUS_DETAILS =
            Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER);

    /** The idempotency key of the current control-plane call, or null. */
    public static final Context.Key<String> IDEMPOTENCY = Context.key("modal-idempotency-key");
    /** The task id the router JWT of the current call was issued for. */
    public static final Context.Key<String> ROUTER_TASK = Context.key("modal-router-task");

    /** Methods that need {@code x-modal-auth-token} (modal.md 3.11: "These need x-modal-auth-token"). */
    private static final Set<String> NEEDS_AUTH_TOKEN = Set.of("SandboxCreateV2", "SandboxGetTaskIdV2",
            "SandboxTerminateV2", "SandboxWaitV2", "SandboxListV2", "SandboxGetCommandRouterAccess",
            "SandboxGetFromNameV2", "SandboxTagsGetV2", "SandboxTagsSetV2");

    private Auth() {
    }

    /** Counts every call by full method name (first in the chain, so refused calls count too). */
    public static ServerInterceptor counting(Map<String, AtomicInteger> calls) {
        return new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                    ServerCallHandler<Q, R> next) {
                calls.computeIfAbsent(call.getMethodDescriptor().getFullMethodName(),
                        k -> new AtomicInteger()).incrementAndGet();
                return next.startCall(call, headers);
            }
        };
    }

    private static Metadata.Key<String> key(String name) {
        return Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
    }

    /** The control plane's checks. */
    public static ServerInterceptor controlPlane(String tokenId, String tokenSecret, Jwts jwts) {
        return new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                    ServerCallHandler<Q, R> next) {
                String method = call.getMethodDescriptor().getBareMethodName();
                if (!equal(headers.get(TOKEN_ID), tokenId) || !equal(headers.get(TOKEN_SECRET), tokenSecret)) {
                    return refuse(call, "invalid or missing x-modal-token-id / x-modal-token-secret");
                }
                if (NEEDS_AUTH_TOKEN.contains(method) && jwts.verify(headers.get(AUTH_TOKEN), "control") == null) {
                    return refuse(call, method + " needs a valid x-modal-auth-token (call AuthTokenGet first)");
                }
                Context ctx = Context.current().withValue(IDEMPOTENCY, headers.get(IDEMPOTENCY_KEY));
                return Contexts.interceptCall(ctx, call, headers, next);
            }
        };
    }

    /** The router's check: a Bearer JWT this emulator issued, unexpired; its task goes into the context. */
    public static ServerInterceptor router(Jwts jwts) {
        return new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                    ServerCallHandler<Q, R> next) {
                String auth = headers.get(AUTHORIZATION);
                String task = auth != null && auth.startsWith("Bearer ") ? jwts.verify(auth.substring(7), "router") : null;
                if (task == null) {
                    return refuse(call, "missing, invalid or expired command router JWT");
                }
                Context ctx = Context.current().withValue(ROUTER_TASK, task);
                return Contexts.interceptCall(ctx, call, headers, next);
            }
        };
    }

    private static <Q, R> ServerCall.Listener<Q> refuse(ServerCall<Q, R> call, String why) {
        call.close(Status.UNAUTHENTICATED.withDescription(why), new Metadata());
        return new ServerCall.Listener<>() {
        };
    }

    private static boolean equal(String given, String expected) {
        return given != null && MessageDigest.isEqual(given.getBytes(StandardCharsets.UTF_8),
                expected.getBytes(StandardCharsets.UTF_8));
    }
}
