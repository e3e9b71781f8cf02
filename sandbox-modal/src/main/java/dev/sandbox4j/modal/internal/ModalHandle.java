package dev.sandbox4j.modal.internal;

import dev.sandbox4j.spi.SandboxHandle;
import dev.sandbox4j.spi.Secret;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One Modal sandbox: its id, which RPC family it belongs to (V1 or V2), its task id and its command
 * router (URL, JWT, channel). The router JWT is a credential: it never appears in
 * {@link #toString()}. A handle found by tag after a lost create has no task: it is only terminated.
 */
public final class ModalHandle implements SandboxHandle {
    /** The JS SDK's rule: {@code sb-} and exactly 22 base62 characters is a V1 id, anything else V2. */
    private static final Metadata.Key<String> AUTHORIZATION = ModalDriver.AUTHORIZATION;
    private static final Pattern V1_ID = Pattern.compile("sb-[A-Za-z0-9]{22}");

    private final String id;
    private final boolean v2;
    private final String taskId;
    private final Map<String, String> env;
    private final Object lock = new Object();
    private String routerUrl;
    private Secret routerJwt;
    private ModalChannels.Lease router;
    /** Router calls started and not yet closed. Guarded by {@link #lock}'s writers; read under it. */
    private final Set<ClientCall<?, ?>> calls = ConcurrentHashMap.newKeySet();
    private boolean released;
    /** The working directory as an absolute path, once asked (the filesystem tool takes absolute paths). */
    private volatile String workdir;

    ModalHandle(String id, boolean v2, String taskId, String routerUrl, Secret routerJwt, Map<String, String> env) {
        this.id = id;
        this.v2 = v2;
        this.taskId = taskId;
        this.routerUrl = routerUrl;
        this.routerJwt = routerJwt;
        this.env = Map.copyOf(env);
    }

    static ModalHandle found(String id) {
        return new ModalHandle(id, !V1_ID.matcher(id).matches(), null, null, null, Map.of());
    }

    static boolean isV1Id(String id) {
        return V1_ID.matcher(id).matches();
    }

    @Override
    public String id() {
        return id;
    }

    /** Whether SandboxTerminateV2 (and the other V2 RPCs) address this sandbox. */
    boolean v2() {
        return v2;
    }

    String taskId() {
        if (taskId == null) {
            throw new IllegalStateException("sandbox " + id + " was found by tag and can only be terminated");
        }
        return taskId;
    }

    Map<String, String> env() {
        return env;
    }

    String workdir() {
        return workdir;
    }

    void workdir(String w) {
        this.workdir = w;
    }

    String routerUrl() {
        synchronized (lock) {
            return routerUrl;
        }
    }

    Secret routerJwt() {
        synchronized (lock) {
            return routerJwt;
        }
    }

    /** New router access after UNAUTHENTICATED; a changed URL gives the old router channel back. */
    void routerAccess(String url, Secret jwt) {
        ModalChannels.Lease old = null;
        synchronized (lock) {
            if (!url.equals(routerUrl)) {
                old = router;
                router = null;
            }
            routerUrl = url;
            routerJwt = jwt;
        }
        if (old != null) {
            old.close();
        }
    }

    /**
     * This sandbox's view of its router's shared channel (leased from {@code leaser} on first use):
     * every call gets this sandbox's current JWT as {@code authorization: Bearer} when it starts, and
     * is cancelled when the sandbox is released.
     */
    Channel router(Function<String, ModalChannels.Lease> leaser) {
        synchronized (lock) {
            if (released) {
                throw new IllegalStateException("sandbox " + id + " was released");
            }
            if (router == null) {
                router = leaser.apply(routerUrl);
            }
            return view;
        }
    }

    private final Channel view = new Channel() {
        @Override
        public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
            ManagedChannel ch;
            synchronized (lock) {
                if (released || router == null) {
                    throw new IllegalStateException("sandbox " + id + " was released");
                }
                ch = router.channel;
            }
            return new Call<>(ch.newCall(method, options));
        }

        @Override
        public String authority() {
            synchronized (lock) {
                return router == null ? "" : router.channel.authority();
            }
        }
    };

    /** A router call with this sandbox's JWT, tracked until it closes so that release can cancel it. */
    private final class Call<Q, R> extends ForwardingClientCall.SimpleForwardingClientCall<Q, R> {
        Call(ClientCall<Q, R> delegate) {
            super(delegate);
        }

        @Override
        public void start(Listener<R> listener, Metadata headers) {
            Secret jwt;
            synchronized (lock) {
                jwt = routerJwt;
                calls.add(this);
            }
            headers.put(AUTHORIZATION, "Bearer " + jwt.reveal());
            super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                @Override
                public void onClose(Status status, Metadata trailers) {
                    calls.remove(Call.this);
                    super.onClose(status, trailers);
                }
            }, headers);
            boolean cancel;
            synchronized (lock) {
                cancel = released;
            }
            if (cancel) {
                cancel("sandbox released", null);
            }
        }
    }

    /** Gives the router channel back and cancels this sandbox's calls still in flight; idempotent. */
    void release() {
        ModalChannels.Lease lease;
        List<ClientCall<?, ?>> inFlight;
        synchronized (lock) {
            released = true;
            lease = router;
            router = null;
            inFlight = new ArrayList<>(calls);
        }
        for (ClientCall<?, ?> c : inFlight) {
            c.cancel("sandbox released", null);
        }
        if (lease != null) {
            lease.close();
        }
    }

    @Override
    public String toString() {
        return "ModalSandbox[" + id + (taskId == null ? "" : " task " + taskId) + (v2 ? ", V2" : ", V1") + "]";
    }
}
