package dev.sandbox4j.docker.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.api.exception.SandboxException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
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
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * The few Docker Engine API calls the runner makes (API version {@value #API_VERSION}, which every engine
 * since Docker 20.10 serves, Podman's compatibility API included), as plain HTTP/1.1 with JSON bodies.
 * Nothing here retries on its own; the driver retries only lookups and removals.
 */
final class DockerApi {
    static final String API_VERSION = "v1.41";
    static final String PROVIDER = "docker";
    private static final MediaType JSON = MediaType.get("application/json");
    private static final MediaType TAR = MediaType.get("application/x-tar");
    static final ObjectMapper MAPPER = new ObjectMapper();
    /** Error bodies and control answers are small; a bigger one is cut. */
    private static final int MAX_BODY = 4 << 20;

    private final HttpUrl base;
    private final String where;
    private final OkHttpClient control;
    private final OkHttpClient streams;

    DockerApi(DockerSettings s) {
        OkHttpClient.Builder b = new OkHttpClient.Builder()
                // a fresh connection per call: no pooled connection is ever health-checked (see UnixSockets)
                .connectionPool(new ConnectionPool(0, 1, TimeUnit.SECONDS))
                .retryOnConnectionFailure(false)
                .followRedirects(false);
        if (s.endpoint().socket() != null) {
            b.socketFactory(new UnixSockets(s.endpoint().socket()));
            b.dns(host -> List.of(InetAddress.getLoopbackAddress()));
        } else {
            b.dns(okhttp3.Dns.SYSTEM);
        }
        OkHttpClient shared = b.build();
        this.control = shared.newBuilder().callTimeout(s.requestTimeout()).readTimeout(s.requestTimeout())
                .connectTimeout(Duration.ofSeconds(10)).build();
        // exec streams last as long as the budget: the driver's clock ends them, not a read timeout
        this.streams = shared.newBuilder().callTimeout(Duration.ZERO).readTimeout(Duration.ZERO)
                .connectTimeout(Duration.ofSeconds(10)).build();
        this.base = s.endpoint().baseUrl().newBuilder().addPathSegment(API_VERSION).build();
        this.where = s.endpoint().toString();
    }

    String where() {
        return where;
    }

    /** The engine's version line, e.g. {@code Docker Engine 24.0.7 (API 1.43, linux/arm64)}. */
    String version() throws InterruptedException {
        JsonNode v = json(call(get(url("version")), "ask the engine's version"));
        return v.path("Components").path(0).path("Name").asText("engine") + " " + v.path("Version").asText("?")
                + " (API " + v.path("ApiVersion").asText("?") + ", " + v.path("Os").asText("?") + "/" + v.path("Arch").asText("?") + ")";
    }

    /** True when the engine holds the image (no pull is ever made). */
    boolean hasImage(String image) throws InterruptedException {
        Answer a = call(get(url("images").newBuilder().addPathSegment(image).addPathSegment("json").build()), "look the image up");
        if (a.status == 404) {
            return false;
        }
        a.expect("look image " + image + " up", 200);
        return true;
    }

    /** Creates a container; returns its id. 404 means the image is missing. */
    String createContainer(String name, ObjectNode body) throws InterruptedException {
        HttpUrl u = url("containers", "create").newBuilder().addQueryParameter("name", name).build();
        Answer a = call(post(u, body), "create container " + name);
        a.expect("create container " + name, 201);
        // 201: the container exists, so an answer we cannot read is an unknown outcome, never a failure
        String id;
        try {
            id = json(a).path("Id").asText("");
        } catch (SandboxException e) {
            throw e.toBuilder().retriable(false).requestMayHaveSucceeded(true).build();
        }
        if (id.isBlank()) {
            throw SandboxException.builder("docker: create container " + name + " answered 201 without an Id")
                    .provider(PROVIDER).requestMayHaveSucceeded(true).build();
        }
        return id;
    }

    void start(String id) throws InterruptedException {
        Answer a = call(post(url("containers", id, "start"), null), "start container " + id);
        a.expect("start container " + id, 204, 304);
    }

    /** Kills the container's processes (SIGKILL); false when it is not there or not running. */
    boolean kill(String id) throws InterruptedException {
        Answer a = call(post(url("containers", id, "kill"), null), "kill container " + id);
        if (a.status == 404 || a.status == 409) {
            return false;
        }
        a.expect("kill container " + id, 204);
        return true;
    }

    /** Stops the container at once (SIGKILL, no grace) and returns when it has stopped; false when it was not running. */
    boolean stop(String id) throws InterruptedException {
        HttpUrl u = url("containers", id, "stop").newBuilder().addQueryParameter("t", "0").build();
        Answer a = call(post(u, null), "stop container " + id);
        if (a.status == 304 || a.status == 404) {
            return false;
        }
        a.expect("stop container " + id, 204);
        return true;
    }

    /** Force-removes the container and its anonymous volumes; false when it was already gone. */
    boolean remove(String id) throws InterruptedException {
        HttpUrl u = url("containers", id).newBuilder().addQueryParameter("force", "true").addQueryParameter("v", "true").build();
        Answer a = call(new Request.Builder().url(u).delete().build(), "remove container " + id);
        if (a.status == 404) {
            return false;
        }
        // 409 "removal already in progress" is worth another try: the lifecycle retries until it is gone
        a.expect("remove container " + id, 204);
        return true;
    }

    /** Whether the container exists and runs; null when it does not exist. */
    Boolean running(String id) throws InterruptedException {
        Answer a = call(get(url("containers", id, "json")), "inspect container " + id);
        if (a.status == 404) {
            return null;
        }
        a.expect("inspect container " + id, 200);
        return json(a).path("State").path("Running").asBoolean(false);
    }

    /** The engine's full report of a container ({@code GET /containers/{id}/json}); null when it does not exist. */
    JsonNode inspect(String id) throws InterruptedException {
        Answer a = call(get(url("containers", id, "json")), "inspect container " + id);
        if (a.status == 404) {
            return null;
        }
        a.expect("inspect container " + id, 200);
        return json(a);
    }

    /** The engine's report of a volume ({@code GET /volumes/{name}}); null when it does not exist. */
    JsonNode inspectVolume(String name) throws InterruptedException {
        Answer a = call(get(url("volumes", name)), "inspect volume " + name);
        if (a.status == 404) {
            return null;
        }
        a.expect("inspect volume " + name, 200);
        return json(a);
    }

    /** Containers (running or not) carrying label {@code key}, with their labels. */
    List<Listed> listByLabel(String key, String value) throws InterruptedException {
        ObjectNode filters = MAPPER.createObjectNode();
        filters.putArray("label").add(value == null ? key : key + "=" + value);
        HttpUrl u = url("containers", "json").newBuilder().addQueryParameter("all", "true")
                .addQueryParameter("filters", filters.toString()).build();
        Answer a = call(get(u), "list containers");
        a.expect("list containers", 200);
        List<Listed> out = new ArrayList<>();
        for (JsonNode c : json(a)) {
            Map<String, String> labels = new LinkedHashMap<>();
            c.path("Labels").properties().forEach(e -> labels.put(e.getKey(), e.getValue().asText()));
            String name = c.path("Names").path(0).asText("").replaceFirst("^/", "");
            out.add(new Listed(c.path("Id").asText(), name, c.path("State").asText(""), labels));
        }
        return out;
    }

    /** Volumes carrying label {@code key} (the work directories), for leak checks. */
    List<String> volumesByLabel(String key, String value) throws InterruptedException {
        ObjectNode filters = MAPPER.createObjectNode();
        filters.putArray("label").add(value == null ? key : key + "=" + value);
        Answer a = call(get(url("volumes").newBuilder().addQueryParameter("filters", filters.toString()).build()), "list volumes");
        a.expect("list volumes", 200);
        List<String> out = new ArrayList<>();
        for (JsonNode v : json(a).path("Volumes")) {
            out.add(v.path("Name").asText());
        }
        return out;
    }

    /** Volumes carrying label {@code key}, with their labels. */
    List<Listed> volumesWithLabels(String key) throws InterruptedException {
        ObjectNode filters = MAPPER.createObjectNode();
        filters.putArray("label").add(key);
        Answer a = call(get(url("volumes").newBuilder().addQueryParameter("filters", filters.toString()).build()), "list volumes");
        a.expect("list volumes", 200);
        List<Listed> out = new ArrayList<>();
        for (JsonNode v : json(a).path("Volumes")) {
            Map<String, String> labels = new LinkedHashMap<>();
            v.path("Labels").properties().forEach(e -> labels.put(e.getKey(), e.getValue().asText()));
            out.add(new Listed(v.path("Name").asText(), v.path("Name").asText(), "", labels));
        }
        return out;
    }

    /** Removes a volume: true when removed, false when already gone, null when a container still uses it. */
    Boolean removeVolume(String name) throws InterruptedException {
        Answer a = call(new Request.Builder().url(url("volumes", name)).delete().build(), "remove volume " + name);
        if (a.status == 404) {
            return false;
        }
        if (a.status == 409) {
            return null;
        }
        a.expect("remove volume " + name, 204);
        return true;
    }

    String execCreate(String container, ObjectNode body) throws InterruptedException {
        Answer a = call(post(url("containers", container, "exec"), body), "create an exec in " + container);
        a.expect("create an exec in " + container, 201);
        return json(a).path("Id").asText();
    }

    /** Starts an exec attached; the caller reads (and closes) the multiplexed stdout/stderr stream. */
    Response execStart(String execId) throws InterruptedException {
        ObjectNode body = MAPPER.createObjectNode().put("Detach", false).put("Tty", false);
        Request r = post(url("exec", execId, "start"), body);
        Response response;
        try {
            response = streams.newCall(r).execute();
        } catch (InterruptedIOException e) {
            throw interrupted(e);
        } catch (IOException e) {
            throw failure("start exec " + execId, e, true);
        }
        if (response.code() != 200 && response.code() != 101) {
            Answer a;
            try (response) {
                a = new Answer(response.code(), readBody(response.body()));
            } catch (IOException e) {
                throw failure("start exec " + execId, e, true);
            }
            a.expect("start exec " + execId, 200);
        }
        return response;
    }

    /** The exec's exit code, or null while it still runs (or when the engine forgot it). */
    Integer execExitCode(String execId) throws InterruptedException {
        Answer a = call(get(url("exec", execId, "json")), "inspect exec " + execId);
        if (a.status == 404) {
            return null;
        }
        a.expect("inspect exec " + execId, 200);
        JsonNode j = json(a);
        return j.path("Running").asBoolean(false) || j.path("ExitCode").isNull() ? null : j.path("ExitCode").asInt();
    }

    /** Extracts a tar archive into a directory of the container (the work directory's volume). */
    void putArchive(String container, String path, byte[] tar) throws InterruptedException {
        HttpUrl u = url("containers", container, "archive").newBuilder().addQueryParameter("path", path).build();
        Answer a = call(new Request.Builder().url(u).put(RequestBody.create(tar, TAR)).build(), "copy files into " + container);
        a.expect("copy files into " + container, 200);
    }

    private HttpUrl url(String... segments) {
        HttpUrl.Builder b = base.newBuilder();
        for (String s : segments) {
            b.addPathSegment(s);
        }
        return b.build();
    }

    private static Request get(HttpUrl u) {
        return new Request.Builder().url(u).get().build();
    }

    private static Request post(HttpUrl u, ObjectNode body) {
        return new Request.Builder().url(u).post(RequestBody.create(body == null ? "" : body.toString(), JSON)).build();
    }

    private Answer call(Request r, String what) throws InterruptedException {
        if (Thread.currentThread().isInterrupted()) {
            throw new InterruptedException();
        }
        try (Response response = control.newCall(r).execute()) {
            return new Answer(response.code(), readBody(response.body()));
        } catch (InterruptedIOException e) {
            if (Thread.currentThread().isInterrupted()) {
                throw interrupted(e);
            }
            throw failure(what, e, !"GET".equals(r.method()));
        } catch (IOException e) {
            throw failure(what, e, !"GET".equals(r.method()));
        }
    }

    private static byte[] readBody(ResponseBody body) throws IOException {
        okio.BufferedSource src = body.source();
        src.request(MAX_BODY);
        okio.Buffer buf = src.getBuffer();
        return buf.readByteArray(Math.min(buf.size(), MAX_BODY));
    }

    private static InterruptedException interrupted(IOException e) {
        InterruptedException ie = new InterruptedException("interrupted while talking to the Docker engine");
        ie.initCause(e);
        return ie;
    }

    private SandboxException failure(String what, IOException e, boolean mayHaveSucceeded) {
        return SandboxException.builder("docker: could not " + what + " (engine at " + where + "): " + e.getMessage())
                .provider(PROVIDER).retriable(true).requestMayHaveSucceeded(mayHaveSucceeded).cause(e).build();
    }

    static JsonNode json(Answer a) {
        try {
            return MAPPER.readTree(a.body);
        } catch (IOException e) {
            throw SandboxException.builder("docker: the engine answered with no JSON (" + a.status + ")").provider(PROVIDER)
                    .retriable(true).cause(e).build();
        }
    }

    /** One answer of the engine: its status and (bounded) body. */
    static final class Answer {
        final int status;
        final byte[] body;

        Answer(int status, byte[] body) {
            this.status = status;
            this.body = body;
        }

        /** The engine's error message ({@code {"message": ...}}), or the body's text. */
        String message() {
            String text = new String(body, StandardCharsets.UTF_8);
            try {
                JsonNode j = MAPPER.readTree(body);
                if (j != null && j.hasNonNull("message")) {
                    text = j.get("message").asText();
                }
            } catch (IOException ignored) {
                // not JSON: the text itself
            }
            return text.length() > 500 ? text.substring(0, 500) + "..." : text.strip();
        }

        void expect(String what, int... ok) {
            for (int s : ok) {
                if (status == s) {
                    return;
                }
            }
            boolean retriable = status >= 500 || status == 409 || status == 429;
            throw SandboxException.builder("docker: could not " + what + ": " + status + " " + message())
                    .provider(PROVIDER).httpStatus(status).retriable(retriable).requestMayHaveSucceeded(status >= 500).build();
        }
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
