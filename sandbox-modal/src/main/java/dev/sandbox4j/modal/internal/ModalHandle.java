package dev.sandbox4j.modal.internal;

import dev.sandbox4j.api.spi.SandboxHandle;
import dev.sandbox4j.api.spi.Secret;
import io.grpc.ManagedChannel;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One Modal sandbox: its id, which RPC family it belongs to (V1 or V2), its task id and its command
 * router (URL, JWT, channel). The router JWT is a credential: it never appears in
 * {@link #toString()}. A handle found by tag after a lost create has no task: it is only terminated.
 */
public final class ModalHandle implements SandboxHandle {
    /** The JS SDK's rule: {@code sb-} and exactly 22 base62 characters is a V1 id, anything else V2. */
    private static final Pattern V1_ID = Pattern.compile("sb-[A-Za-z0-9]{22}");

    private final String id;
    private final boolean v2;
    private final String taskId;
    private final Map<String, String> env;
    private final Object lock = new Object();
    private String routerUrl;
    private Secret routerJwt;
    private ManagedChannel router;
    private boolean released;

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

    /** New router access after UNAUTHENTICATED; a changed URL gets a new channel. */
    void routerAccess(String url, Secret jwt) {
        ManagedChannel old = null;
        synchronized (lock) {
            if (!url.equals(routerUrl)) {
                old = router;
                router = null;
            }
            routerUrl = url;
            routerJwt = jwt;
        }
        if (old != null) {
            old.shutdownNow();
        }
    }

    /** The router channel, opened on first use by {@code opener}. */
    ManagedChannel router(java.util.function.Function<String, ManagedChannel> opener) {
        synchronized (lock) {
            if (released) {
                throw new IllegalStateException("sandbox " + id + " was released");
            }
            if (router == null) {
                router = opener.apply(routerUrl);
            }
            return router;
        }
    }

    /** Closes the router channel; idempotent. */
    void release() {
        ManagedChannel ch;
        synchronized (lock) {
            released = true;
            ch = router;
            router = null;
        }
        if (ch != null) {
            ch.shutdownNow();
        }
    }

    @Override
    public String toString() {
        return "ModalSandbox[" + id + (taskId == null ? "" : " task " + taskId) + (v2 ? ", V2" : ", V1") + "]";
    }
}
