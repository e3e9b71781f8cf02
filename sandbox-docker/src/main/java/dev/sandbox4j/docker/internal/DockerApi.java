package dev.sandbox4j.docker.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.http.ClientDeadlineException;
import dev.sandbox4j.http.HttpTransport;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import okhttp3.ConnectionPool;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;

/**
 * The few Docker Engine API calls the runner makes (API version {@value #API_VERSION}, which every engine
 * since Docker 20.10 serves, Podman's compatibility API included), as plain HTTP/1.1 with JSON bodies,
 * through {@code sandbox-http}'s {@link HttpTransport} as the REST adapters' calls go: each request put on
 * the wire at most once (the transport's send-once guard), each call bounded by a deadline, interruptible,
 * and every error status mapped by the one status table (401/403 authentication, 404 not found, 429 rate
 * limit, 408/409/5xx retriable; a 5xx to a POST flagged as possibly done). Lookups, kills and removals
 * are idempotent and retried by the transport; a create, a start, an exec create or start and a copy
 * are never re-sent.
 */
final class DockerApi {
    static final String API_VERSION = "v1.41";
    static final String PROVIDER = "docker";
    private static final MediaType TAR = MediaType.get("application/x-tar");
    static final ObjectMapper MAPPER = HttpTransport.JSON;

    private final String where;
    private final HttpTransport transport;

    DockerApi(DockerSettings s) {
        OkHttpClient.Builder b = new OkHttpClient.Builder()
                .dispatcher(dev.sandbox4j.http.HttpTransport.daemonDispatcher())
                // a fresh connection per call: no pooled connection is ever health-checked (see UnixSockets),
                // and an exec's hijacked stream is never handed back to a pool
                .connectionPool(new ConnectionPool(0, 1, TimeUnit.SECONDS))
                .connectTimeout(Duration.ofSeconds(10));
        if (s.endpoint().socket() != null) {
            b.socketFactory(new UnixSockets(s.endpoint().socket()));
            b.dns(host -> List.of(InetAddress.getLoopbackAddress()));
        }
        // the transport derives its own client: no re-sends, no redirects, no socket read timeout (each call
        // carries its deadline: requestTimeout for control calls, the exec's own for a stream)
        this.transport = HttpTransport.builder(PROVIDER)
                .baseUrl(s.endpoint().baseUrl().newBuilder().addPathSegment(API_VERSION).build().toString())
                .client(b.build())
                .unaryTimeout(s.requestTimeout())
                .retryBaseDelay(Duration.ofMillis(100))
                .build();
        this.where = s.endpoint().toString();
    }

    String where() {
        return where;
    }

    /** The engine's version line, e.g. {@code Docker Engine 24.0.7 (API 1.43, linux/arm64)}. */
    String version() throws InterruptedException {
        JsonNode v = get(url("version"));
        return v.path("Components").path(0).path("Name").asText("engine") + " " + v.path("Version").asText("?")
                + " (API " + v.path("ApiVersion").asText("?") + ", " + v.path("Os").asText("?") + "/" + v.path("Arch").asText("?") + ")";
    }

    /** True when the engine holds the image (no pull is ever made). */
    boolean hasImage(String image) throws InterruptedException {
        try {
            get(url("images").newBuilder().addPathSegment(image).addPathSegment("json").build());
            return true;
        } catch (SandboxNotFoundException e) {
            return false;
        }
    }

    /**
     * Creates a container; returns its id. 404 means the image is missing. Sent once: a lost or garbled
     * answer, a timeout and a 5xx are unknown outcomes ({@link SandboxException#requestMayHaveSucceeded()}),
     * resolved by the lifecycle through the run-id label.
     */
    String createContainer(String name, ObjectNode body) throws InterruptedException {
        HttpUrl u = url("containers", "create").newBuilder().addQueryParameter("name", name).build();
        JsonNode a = call(post(u, body), false);
        String id = a.path("Id").asText("");
        if (id.isBlank()) {
            throw SandboxException.builder("docker: create container " + name + " answered without an Id")
                    .provider(PROVIDER).requestMayHaveSucceeded(true).build();
        }
        return id;
    }

    /** Starts the container (its init only: no code runs yet); 304 (already started) is fine. Sent once. */
    void start(String id) throws InterruptedException {
        try {
            call(post(url("containers", id, "start"), null), false);
        } catch (SandboxException e) {
            if (status(e) != 304) {
                throw e;
            }
        }
    }

    /** Kills the container's processes (SIGKILL); false when it is not there or not running. */
    boolean kill(String id) throws InterruptedException {
        try {
            // not retried: a 409 (not running) is an answer, and killContainer's caller removes it anyway
            call(post(url("containers", id, "kill"), null), false);
            return true;
        } catch (SandboxException e) {
            if (status(e) == 404 || status(e) == 409) {
                return false;
            }
            throw e;
        }
    }

    /**
     * {@code POST /networks/{network}/disconnect} with {@code Force}: takes the container's interface on that
     * network away. Sent once (a second one may be refused as "not connected"): the caller inspects the
     * container afterwards either way.
     */
    void disconnect(String network, String container) throws InterruptedException {
        ObjectNode body = MAPPER.createObjectNode().put("Container", container).put("Force", true);
        call(post(url("networks", network, "disconnect"), body), false);
    }

    /** Stops the container at once (SIGKILL, no grace) and returns when it has stopped; false when it was not running. */
    boolean stop(String id) throws InterruptedException {
        HttpUrl u = url("containers", id, "stop").newBuilder().addQueryParameter("t", "0").build();
        try {
            call(post(u, null), true);
            return true;
        } catch (SandboxException e) {
            if (status(e) == 304 || status(e) == 404) {
                return false;
            }
            throw e;
        }
    }

    /**
     * Force-removes the container and its anonymous volumes; false when it was already gone. A 409
     * ("removal already in progress") is retriable: the lifecycle's teardown tries again until it is gone.
     */
    boolean remove(String id) throws InterruptedException {
        HttpUrl u = url("containers", id).newBuilder().addQueryParameter("force", "true").addQueryParameter("v", "true").build();
        try {
            call(transport.request(u).delete().build(), true);
            return true;
        } catch (SandboxNotFoundException e) {
            return false;
        }
    }

    /**
     * Removes a container that is not running (a one-shot's, exited or never started) and its anonymous
     * volumes, without {@code force}: nothing is killed. Tried once; a 409 (the engine says it runs, or
     * its removal is already under way) falls back to {@link #remove}, the forced removal. False when it
     * was already gone.
     */
    boolean removeStopped(String id) throws InterruptedException {
        HttpUrl u = url("containers", id).newBuilder().addQueryParameter("v", "true").build();
        try {
            call(transport.request(u).delete().build(), false);
            return true;
        } catch (SandboxNotFoundException e) {
            return false;
        } catch (SandboxException e) {
            if (status(e) != 409) {
                throw e;
            }
            return remove(id);
        }
    }

    /**
     * Attaches to a created container's stdout and stderr ({@code POST /containers/{id}/attach}, streamed,
     * multiplexed as an exec's), before its start: {@code attached} runs once the engine's answer has come
     * (from then on it relays everything the container writes), then {@code reader} reads the stream until
     * the container's process ends. Bounded by {@code deadline} as a whole; an interrupt cancels it. An
     * attach starts nothing.
     */
    <T> T attach(String id, Duration deadline, Runnable attached, StreamReader<T> reader)
            throws InterruptedException, ClientDeadlineException, IOException {
        HttpUrl u = url("containers", id, "attach").newBuilder().addQueryParameter("stream", "1")
                .addQueryParameter("stdout", "1").addQueryParameter("stderr", "1").build();
        return transport.stream(post(u, null), deadline, r -> {
            attached.run();
            return reader.read(r.body().byteStream());
        });
    }

    /**
     * The exit code of a started container once its process has ended ({@code POST
     * /containers/{id}/wait?condition=not-running}, which answers at once for a stopped container), within
     * {@code deadline}; null when the engine reports none.
     */
    Integer waitExit(String id, Duration deadline) throws InterruptedException, ClientDeadlineException, IOException {
        HttpUrl u = url("containers", id, "wait").newBuilder().addQueryParameter("condition", "not-running").build();
        JsonNode a = transport.stream(post(u, null), deadline, r -> MAPPER.readTree(r.body().byteStream()));
        return a != null && a.path("StatusCode").isInt() ? a.path("StatusCode").asInt() : null;
    }

    /** Whether the container exists and runs; null when it does not exist. */
    Boolean running(String id) throws InterruptedException {
        JsonNode j = inspect(id);
        return j == null ? null : j.path("State").path("Running").asBoolean(false);
    }

    /** The engine's full report of a container ({@code GET /containers/{id}/json}); null when it does not exist. */
    JsonNode inspect(String id) throws InterruptedException {
        try {
            return get(url("containers", id, "json"));
        } catch (SandboxNotFoundException e) {
            return null;
        }
    }

    /** The engine's report of a volume ({@code GET /volumes/{name}}); null when it does not exist. */
    JsonNode inspectVolume(String name) throws InterruptedException {
        try {
            return get(url("volumes", name));
        } catch (SandboxNotFoundException e) {
            return null;
        }
    }

    /** Containers (running or not) carrying label {@code key}, with their labels. */
    List<Listed> listByLabel(String key, String value) throws InterruptedException {
        ObjectNode filters = MAPPER.createObjectNode();
        filters.putArray("label").add(value == null ? key : key + "=" + value);
        HttpUrl u = url("containers", "json").newBuilder().addQueryParameter("all", "true")
                .addQueryParameter("filters", filters.toString()).build();
        JsonNode list = get(u);
        if (!list.isArray()) {
            throw garbled("list containers");
        }
        List<Listed> out = new ArrayList<>();
        for (JsonNode c : list) {
            Map<String, String> labels = new LinkedHashMap<>();
            c.path("Labels").properties().forEach(e -> labels.put(e.getKey(), e.getValue().asText()));
            String name = c.path("Names").path(0).asText("").replaceFirst("^/", "");
            out.add(new Listed(c.path("Id").asText(), name, c.path("State").asText(""), labels));
        }
        return out;
    }

    /** Volumes carrying label {@code key} (the work directories), for leak checks. */
    List<String> volumesByLabel(String key, String value) throws InterruptedException {
        List<String> out = new ArrayList<>();
        for (JsonNode v : volumes(value == null ? key : key + "=" + value)) {
            out.add(v.path("Name").asText());
        }
        return out;
    }

    /** Volumes carrying label {@code key}, with their labels. */
    List<Listed> volumesWithLabels(String key) throws InterruptedException {
        List<Listed> out = new ArrayList<>();
        for (JsonNode v : volumes(key)) {
            Map<String, String> labels = new LinkedHashMap<>();
            v.path("Labels").properties().forEach(e -> labels.put(e.getKey(), e.getValue().asText()));
            out.add(new Listed(v.path("Name").asText(), v.path("Name").asText(), "", labels));
        }
        return out;
    }

    private JsonNode volumes(String labelFilter) throws InterruptedException {
        ObjectNode filters = MAPPER.createObjectNode();
        filters.putArray("label").add(labelFilter);
        JsonNode v = get(url("volumes").newBuilder().addQueryParameter("filters", filters.toString()).build()).path("Volumes");
        if (!v.isArray() && !v.isNull()) {
            throw garbled("list volumes");
        }
        return v;
    }

    /** Removes a volume: true when removed, false when already gone, null when a container still uses it. */
    Boolean removeVolume(String name) throws InterruptedException {
        try {
            // not retried on 409: in use is an answer here, not a failure
            call(transport.request(url("volumes", name)).delete().build(), false);
            return true;
        } catch (SandboxException e) {
            if (status(e) == 404) {
                return false;
            }
            if (status(e) == 409) {
                return null;
            }
            throw e;
        }
    }

    /** Creates an exec (nothing runs yet); sent once. */
    String execCreate(String container, ObjectNode body) throws InterruptedException {
        String id = call(post(url("containers", container, "exec"), body), false).path("Id").asText("");
        if (id.isBlank()) {
            throw garbled("create an exec in " + container);
        }
        return id;
    }

    /** Reads an attached exec's multiplexed stdout/stderr stream. */
    interface StreamReader<T> {
        T read(InputStream in) throws IOException;
    }

    /**
     * Starts an exec attached and hands its multiplexed stdout/stderr stream to {@code reader}, on the
     * transport's worker, bounded by {@code deadline} as a whole (no read timeout: a command may print
     * nothing for its whole budget). Sent once: code may run from the moment the request reaches the
     * engine. An interrupt of the caller cancels the stream.
     *
     * @throws SandboxException for an error status (a 5xx flagged as code that may have run)
     * @throws ClientDeadlineException when {@code deadline} passed first (the stream is cancelled)
     * @throws IOException when the connection failed or the stream broke off
     */
    <T> T execStart(String execId, Duration deadline, StreamReader<T> reader)
            throws InterruptedException, ClientDeadlineException, IOException {
        ObjectNode body = MAPPER.createObjectNode().put("Detach", false).put("Tty", false);
        try {
            return transport.stream(post(url("exec", execId, "start"), body), deadline, r -> reader.read(r.body().byteStream()));
        } catch (SandboxException e) {
            if (status(e) >= 500) {
                throw e.toBuilder().codeMayHaveRun(true).build();
            }
            throw e;
        }
    }

    /** The exec's exit code, or null while it still runs (or when the engine forgot it). */
    Integer execExitCode(String execId) throws InterruptedException {
        JsonNode j;
        try {
            j = get(url("exec", execId, "json"));
        } catch (SandboxNotFoundException e) {
            return null;
        }
        return j.path("Running").asBoolean(false) || !j.path("ExitCode").isInt() ? null : j.path("ExitCode").asInt();
    }

    /** Extracts a tar archive into a directory of the container (the work directory's volume); sent once. */
    void putArchive(String container, String path, byte[] tar) throws InterruptedException {
        HttpUrl u = url("containers", container, "archive").newBuilder().addQueryParameter("path", path).build();
        call(transport.request(u).put(RequestBody.create(tar, TAR)).build(), false);
    }

    private HttpUrl url(String... segments) {
        HttpUrl.Builder b = transport.baseUrl().newBuilder();
        for (String s : segments) {
            b.addPathSegment(dev.sandbox4j.http.HttpTransport.pathSegment(s)); // no dot segment from an id
        }
        return b.build();
    }

    private JsonNode get(HttpUrl u) throws InterruptedException {
        return call(transport.request(u).get().build(), true);
    }

    private Request post(HttpUrl u, ObjectNode body) {
        return transport.request(u).post(body == null ? RequestBody.create(new byte[0], null) : HttpTransport.jsonBody(body)).build();
    }

    private JsonNode call(Request r, boolean idempotent) throws InterruptedException {
        if (Thread.currentThread().isInterrupted()) {
            throw new InterruptedException("interrupted before calling the Docker engine");
        }
        return transport.call(r, idempotent);
    }

    private static int status(SandboxException e) {
        return e.httpStatus().orElse(0);
    }

    private static SandboxException garbled(String what) {
        return SandboxException.builder("docker: the engine's answer to '" + what + "' is not what the Engine API sends")
                .provider(PROVIDER).retriable(true).build();
    }

    /** A container as the list call reports it. */
    static final class Listed {
        final String id;
        final String name;
        final String state;
        final Map<String, String> labels;

        Listed(String id, String name, String state, Map<String, String> labels) {
            this.id = id;
            this.name = name;
            this.state = state;
            this.labels = Map.copyOf(labels);
        }
    }
}
