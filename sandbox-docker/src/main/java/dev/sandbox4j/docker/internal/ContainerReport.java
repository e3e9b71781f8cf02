package dev.sandbox4j.docker.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.spi.Attachable;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Compares what the engine reports of a container ({@code GET /containers/{id}/json}) and of its work
 * volume with what {@link ContainerSpec#body} would send for the expected spec, for an attach. The
 * labels are only the creator's claim; these fields are the engine's own word for the policy: network
 * mode (the egress), the init's {@code sleep} and the expiry label against the engine's creation time
 * (the lifetime), the read-only root, dropped capabilities (all but the kill helper's {@code CAP_KILL}),
 * {@code no-new-privileges} and the runner's seccomp profile (the same JSON), the users, the
 * limits, and the mounts (only the work volume, a sized tmpfs volume carrying the same run id).
 * The network allowance has no trace on the engine and needs none: an expected allowance with allow-all
 * egress is refused as a create refuses it, and under deny-all nothing passes whatever its size.
 */
final class ContainerReport {
    /** How far the expiry label may be from the engine's creation time plus the lifetime (clocks, the create's own time). */
    static final Duration EXPIRY_SLACK = Duration.ofSeconds(60);

    private ContainerReport() {
    }

    /** The labels as the engine reports them ({@code Config.Labels}). */
    static Map<String, String> labels(JsonNode inspect) {
        Map<String, String> labels = new LinkedHashMap<>();
        inspect.path("Config").path("Labels").properties().forEach(e -> labels.put(e.getKey(), e.getValue().asText()));
        return labels;
    }

    /** The engine's state word, e.g. {@code running}, {@code exited}, {@code paused}. */
    static String state(JsonNode inspect) {
        return inspect.path("State").path("Status").asText("unknown");
    }

    /** Running and taking execs: not paused, not restarting. */
    static boolean running(JsonNode inspect) {
        JsonNode s = inspect.path("State");
        return s.path("Running").asBoolean(false) && !s.path("Paused").asBoolean(false) && !s.path("Restarting").asBoolean(false);
    }

    /** The name of the volume mounted on the work directory, or null when there is none. */
    static String workVolume(JsonNode inspect) {
        for (JsonNode m : inspect.path("Mounts")) {
            if (DockerSettings.WORK_DIR.equals(m.path("Destination").asText()) && "volume".equals(m.path("Type").asText())) {
                return m.path("Name").asText(null);
            }
        }
        return null;
    }

    /**
     * Records every rule where the container (and its work volume, null when absent) differs from a
     * create for {@code expected} with these settings.
     */
    static void compare(DockerSettings s, SandboxSpec expected, JsonNode inspect, JsonNode volume, Instant now,
            Attachable.Builder<DockerHandle> b) {
        if (DockerEgress.proxied(expected.egress())) {
            // its only way out was a proxy in the JVM that created it: nothing another runner can take over
            b.difference("egress: " + expected.egress() + " went through the creating runner's egress proxy, which an"
                    + " attached sandbox cannot have");
            return;
        }
        CreateRequest request = CreateRequest.of("attach-check", expected);
        try {
            // an attached container has no proxy of this JVM (a list's stays with its creator), so its egress is
            // deny-all, where nothing passes whatever the allowance, or allow-all, where a create refuses one
            ContainerSpec.networkAllowance(s, request);
        } catch (UnsupportedPolicyException e) {
            e.violations().forEach(v -> b.difference("network allowance: the Docker runner refuses " + v));
            return;
        }
        ObjectNode want;
        try {
            want = ContainerSpec.body(s, request);
        } catch (UnsupportedPolicyException e) {
            b.difference("egress: the Docker runner cannot enforce " + expected.egress());
            return;
        }
        JsonNode wantHost = want.path("HostConfig");
        JsonNode host = inspect.path("HostConfig");
        JsonNode config = inspect.path("Config");
        b.compare("HostConfig.NetworkMode (the egress)", wantHost.path("NetworkMode").asText(), host.path("NetworkMode").asText(null));
        b.compare("Config.Cmd (the init's sleep, the lifetime)", strings(want.path("Cmd")).toString(),
                strings(config.path("Cmd")).toString());
        b.compare("Config.Image", s.image(), config.path("Image").asText(null));
        b.compare("Config.User (the init's user)", s.initUser(), config.path("User").asText(null));
        b.compare("HostConfig.ReadonlyRootfs", true, host.path("ReadonlyRootfs").asBoolean(false));
        b.compare("HostConfig.CapDrop", List.of("ALL"), strings(host.path("CapDrop")));
        b.compare("HostConfig.CapAdd", strings(wantHost.path("CapAdd")), strings(host.path("CapAdd")));
        // the runner's seccomp profile, byte for byte: another profile (or the engine's default) is another policy
        b.compare("HostConfig.SecurityOpt", securityOpts(wantHost.path("SecurityOpt")), securityOpts(host.path("SecurityOpt")));
        b.compare("HostConfig.Privileged", false, host.path("Privileged").asBoolean(true));
        b.compare("HostConfig.Init", true, host.path("Init").asBoolean(false));
        b.compare("HostConfig.AutoRemove (the engine removes it at its lifetime)", true, host.path("AutoRemove").asBoolean(false));
        b.compare("HostConfig.IpcMode", "private", host.path("IpcMode").asText(null));
        b.compare("HostConfig.PidMode", "", host.path("PidMode").asText(""));
        b.compare("HostConfig.Devices", List.of(), strings(host.path("Devices")));
        for (String limit : List.of("PidsLimit", "Memory", "MemorySwap", "NanoCpus", "ShmSize")) {
            b.compare("HostConfig." + limit, wantHost.path(limit).asLong(0), host.path(limit).asLong(0));
        }
        b.compare("HostConfig.Tmpfs", wantHost.path("Tmpfs").toString(), host.path("Tmpfs").toString());
        compareMounts(want, inspect, volume, b);
        compareExpiry(request, inspect, now, b);
        compareEnv(want, config, b);
    }

    /** Only the work volume is mounted, and it is a tmpfs volume of the expected size with the container's run id. */
    private static void compareMounts(ObjectNode want, JsonNode inspect, JsonNode volume, Attachable.Builder<DockerHandle> b) {
        List<String> mounts = new ArrayList<>();
        inspect.path("Mounts").forEach(m -> mounts.add(m.path("Type").asText() + ":" + m.path("Destination").asText()));
        b.compare("Mounts", List.of("volume:" + DockerSettings.WORK_DIR), mounts);
        if (volume == null) {
            b.difference("work volume: the container has no volume of its own on " + DockerSettings.WORK_DIR);
            return;
        }
        JsonNode wantOptions = want.path("HostConfig").path("Mounts").path(0).path("VolumeOptions").path("DriverConfig")
                .path("Options");
        b.compare("work volume Driver", "local", volume.path("Driver").asText(null));
        b.compare("work volume Options", wantOptions.toString(), sorted(volume.path("Options")));
        String runId = inspect.path("Config").path("Labels").path(CreateRequest.RUN_ID_LABEL).asText(null);
        String volumeRunId = volume.path("Labels").path(CreateRequest.RUN_ID_LABEL).asText(null);
        if (runId == null || !runId.equals(volumeRunId)) {
            b.difference("work volume: " + volume.path("Name").asText("?") + " carries run id " + volumeRunId
                    + ", the container " + runId + ", so it is not the one created with it");
        }
    }

    /** The expiry label (sent with an owner) is the engine's creation time plus the lifetime, give or take the slack. */
    private static void compareExpiry(CreateRequest request, JsonNode inspect, Instant now, Attachable.Builder<DockerHandle> b) {
        String label = inspect.path("Config").path("Labels").path(CreateRequest.EXPIRES_LABEL).asText(null);
        if (label == null) {
            return; // none without an owner; the init's sleep is the lifetime then
        }
        Instant expires;
        Instant created;
        try {
            expires = Instant.ofEpochSecond(Long.parseLong(label));
            created = Instant.parse(inspect.path("Created").asText());
        } catch (NumberFormatException | DateTimeParseException e) {
            b.difference("lifetime: the " + CreateRequest.EXPIRES_LABEL + " label '" + label
                    + "' or the engine's creation time is unreadable");
            return;
        }
        Duration off = Duration.between(created.plus(request.lifetime()), expires).abs();
        if (off.compareTo(EXPIRY_SLACK) > 0) {
            b.difference("lifetime: the " + CreateRequest.EXPIRES_LABEL + " label says " + expires + ", but the engine created"
                    + " the container at " + created + " and the expected lifetime is " + request.lifetime().getSeconds() + " s");
        }
        if (!expires.isAfter(now)) {
            b.difference("lifetime: the container's lifetime ended at " + expires);
        }
    }

    /** Every variable of the expected spec is set to its value; the message names variables, never values. */
    private static void compareEnv(ObjectNode want, JsonNode config, Attachable.Builder<DockerHandle> b) {
        TreeSet<String> reported = new TreeSet<>(strings(config.path("Env")));
        TreeSet<String> differing = new TreeSet<>();
        for (String entry : strings(want.path("Env"))) {
            if (!reported.contains(entry)) {
                differing.add(entry.substring(0, entry.indexOf('=')));
            }
        }
        if (!differing.isEmpty()) {
            b.difference("env: the container's environment lacks or differs in " + differing
                    + " (the Docker runner fixes the environment at create)");
        }
    }

    /** The SecurityOpt entries, a seccomp profile shown by its digest (the JSON is several KiB). */
    static List<String> securityOpts(JsonNode array) {
        List<String> out = new ArrayList<>();
        for (String o : strings(array)) {
            if (o.startsWith("seccomp=") && o.length() > 64) {
                out.add("seccomp=<profile sha256:" + sha256(o.substring("seccomp=".length())).substring(0, 16) + ">");
            } else {
                out.add(o);
            }
        }
        return out;
    }

    private static String sha256(String s) {
        try {
            byte[] d = java.security.MessageDigest.getInstance("SHA-256").digest(s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            StringBuilder hex = new StringBuilder();
            for (byte x : d) {
                hex.append(String.format("%02x", x));
            }
            return hex.toString();
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e); // every JDK has SHA-256
        }
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    /** An object's fields in the order the create body writes them (type, device, o), whatever order the engine uses. */
    private static String sorted(JsonNode options) {
        ObjectNode o = DockerApi.MAPPER.createObjectNode();
        for (String k : List.of("type", "device", "o")) {
            if (options.has(k)) {
                o.set(k, options.get(k));
            }
        }
        if (options.size() != o.size()) {
            return options.toString(); // an option the create never sets: differs anyway
        }
        return o.toString();
    }
}
