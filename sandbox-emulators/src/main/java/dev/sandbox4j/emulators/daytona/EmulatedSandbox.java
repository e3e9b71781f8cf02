package dev.sandbox4j.emulators.daytona;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.emulators.Machine;
import dev.sandbox4j.emulators.daytona.internal.WireEgress;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/** One emulated Daytona sandbox: its record as the API shows it, and the machine behind it. */
final class EmulatedSandbox {
    private static final ObjectMapper JSON = new ObjectMapper();

    final String id;
    final String name;
    final String organizationId;
    final String snapshot;
    final String user;
    final String target;
    final boolean isPublic;
    final ObjectNode env;
    final ObjectNode labels;
    /** Changed by a network-settings update (with {@link #hostNetwork}, under {@link #execLock}). */
    volatile WireEgress egress;
    volatile boolean hostNetwork;
    final int cpu;
    final int gpu;
    final int memory;
    final int disk;
    final int autoStopInterval;
    final int autoArchiveInterval;
    final int autoDeleteInterval;
    final JsonNode buildInfo;
    final Instant createdAt;
    /** Absolute sandbox paths of files uploaded outside the home, linked into place before each command. */
    final Set<String> outsidePaths = ConcurrentHashMap.newKeySet();
    /**
     * Files up to {@link #PROGRAM_RECORD_BYTES} as they were uploaded, by absolute sandbox path: what a
     * session command that runs one of them received, for the ledger (in instant mode too, where the
     * machine keeps nothing).
     */
    final Map<String, byte[]> uploaded = new ConcurrentHashMap<>();
    static final int PROGRAM_RECORD_BYTES = 1024 * 1024;
    /** The daemon's sessions, by id. */
    final Map<String, ToolboxSessions.Session> sessions = new ConcurrentHashMap<>();
    /** One command at a time on the machine. */
    final ReentrantLock execLock = new ReentrantLock();

    private String state;
    private String desiredState = "started";
    private String errorReason;
    /** Status reads (GET, or a DELETE refused with 409) still answered with the transitional state. */
    private int pendingReads;
    private Instant updatedAt;
    private Instant lastActivityAt;
    private Instant stoppedAt;
    private Machine machine;

    EmulatedSandbox(String id, JsonNode body, String organizationId, WireEgress egress, boolean hostNetwork,
            Map<String, Integer> resources, Instant now) {
        this.id = id;
        this.name = body.hasNonNull("name") ? body.get("name").asText() : id;
        this.organizationId = organizationId;
        this.buildInfo = body.hasNonNull("buildInfo") ? body.get("buildInfo").deepCopy() : null;
        this.snapshot = buildInfo != null ? null
                : body.hasNonNull("snapshot") ? body.get("snapshot").asText() : DaytonaEmulator.DEFAULT_SNAPSHOT;
        this.user = body.hasNonNull("user") ? body.get("user").asText() : "daytona";
        this.target = body.hasNonNull("target") ? body.get("target").asText() : "us";
        this.isPublic = body.path("public").asBoolean(false);
        this.env = body.path("env").isObject() ? ((ObjectNode) body.get("env")).deepCopy() : JSON.createObjectNode();
        this.labels = body.path("labels").isObject() ? ((ObjectNode) body.get("labels")).deepCopy() : JSON.createObjectNode();
        this.egress = egress;
        this.hostNetwork = hostNetwork;
        this.cpu = resources.get("cpu");
        this.gpu = resources.get("gpu");
        this.memory = resources.get("memory");
        this.disk = resources.get("disk");
        this.autoStopInterval = body.hasNonNull("autoStopInterval") ? body.get("autoStopInterval").asInt() : 15;
        int archive = body.hasNonNull("autoArchiveInterval") ? body.get("autoArchiveInterval").asInt() : 10080;
        this.autoArchiveInterval = archive == 0 ? 43200 : Math.min(archive, 43200);
        this.autoDeleteInterval = body.hasNonNull("autoDeleteInterval") ? body.get("autoDeleteInterval").asInt() : -1;
        this.createdAt = now;
        this.updatedAt = now;
        this.lastActivityAt = now;
    }

    /**
     * Gives the record its machine. False when the record was deleted while the machine opened (it is
     * listed from the create on, so a client resolving a lost create may delete it first): the caller
     * closes the machine, which no delete will reach.
     */
    synchronized boolean start(Machine machine, int transitionalReads) {
        if ("destroyed".equals(desiredState)) {
            return false;
        }
        this.machine = machine;
        this.pendingReads = transitionalReads;
        this.state = transitionalReads > 0 ? (buildInfo != null ? "pending_build" : "starting") : "started";
        return true;
    }

    /** Sets one label (see {@link DaytonaEmulator#alterLabel}). */
    synchronized void label(String key, String value) {
        labels.put(key, value);
    }

    synchronized void fail(String reason, Instant now) {
        this.state = "error";
        this.errorReason = reason;
        this.updatedAt = now;
    }

    /** The state for one status read: a transitional state is reported {@code pendingReads} times. */
    synchronized String read() {
        if (pendingReads > 0) {
            pendingReads--;
            return state;
        }
        return currentState();
    }

    /** Whether a DELETE must wait: a state change is pending (a build waiting is exempt, as on Daytona). */
    synchronized boolean changePending() {
        return "starting".equals(currentState()) && pendingReads > 0;
    }

    synchronized String currentState() {
        if (pendingReads == 0 && machine != null && ("starting".equals(state) || "pending_build".equals(state))) {
            state = "started";
        }
        return state;
    }

    synchronized Machine machine() {
        return machine;
    }

    synchronized void touch(Instant now) {
        lastActivityAt = now;
    }

    synchronized Instant lastActivityAt() {
        return lastActivityAt;
    }

    synchronized Instant stoppedAt() {
        return stoppedAt;
    }

    /** Stops the machine (auto-stop): the record stays, as a stopped Daytona sandbox does. */
    synchronized Machine stop(Instant now) {
        Machine m = machine;
        machine = null;
        state = "stopped";
        desiredState = "stopped";
        stoppedAt = now;
        updatedAt = now;
        return m;
    }

    /** Marks the record deleted and hands back the machine to close. */
    synchronized Machine delete(Instant now) {
        Machine m = machine;
        machine = null;
        desiredState = "destroyed";
        updatedAt = now;
        return m;
    }

    /** The {@code Sandbox} schema with the current state. */
    synchronized ObjectNode toJson(String toolboxProxyUrl, boolean listItem) {
        return toJson(currentState(), toolboxProxyUrl, listItem);
    }

    /**
     * The {@code Sandbox} schema, or the smaller {@code SandboxListItem} for list answers, showing
     * {@code shownState} (what one status read saw).
     */
    synchronized ObjectNode toJson(String shownState, String toolboxProxyUrl, boolean listItem) {
        ObjectNode o = JSON.createObjectNode();
        o.put("id", id);
        o.put("organizationId", organizationId);
        o.put("name", name);
        if (snapshot != null) {
            o.put("snapshot", snapshot);
        }
        o.put("user", user);
        if (!listItem) {
            o.set("env", env.deepCopy());
        }
        o.set("labels", labels.deepCopy());
        o.put("public", isPublic);
        o.put("networkBlockAll", egress.blockAll());
        if (egress.networkAllowList() != null) {
            o.put("networkAllowList", egress.networkAllowList());
        }
        if (egress.domainAllowList() != null) {
            o.put("domainAllowList", egress.domainAllowList());
        }
        o.put("target", target);
        o.put("cpu", cpu);
        o.put("gpu", gpu);
        o.put("memory", memory);
        o.put("disk", disk);
        o.put("state", shownState);
        o.put("desiredState", desiredState);
        if (errorReason == null) {
            o.putNull("errorReason");
        } else {
            o.put("errorReason", errorReason);
        }
        o.put("recoverable", false);
        o.put("backupState", "None");
        o.put("autoStopInterval", autoStopInterval);
        o.put("autoArchiveInterval", autoArchiveInterval);
        o.put("autoDeleteInterval", autoDeleteInterval);
        if (!listItem) {
            o.putArray("volumes");
            if (buildInfo != null) {
                o.set("buildInfo", buildInfo.deepCopy());
            }
        }
        o.put("createdAt", createdAt.toString());
        o.put("updatedAt", updatedAt.toString());
        o.put("lastActivityAt", lastActivityAt.toString());
        o.put("sandboxClass", "container");
        o.put("daemonVersion", DaytonaEmulator.DAEMON_VERSION);
        o.put("runnerId", "runner-emulated");
        if (toolboxProxyUrl != null) {
            o.put("toolboxProxyUrl", toolboxProxyUrl);
        }
        return o;
    }
}
