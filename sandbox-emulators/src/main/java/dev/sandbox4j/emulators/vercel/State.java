package dev.sandbox4j.emulators.vercel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.emulators.vercel.internal.CommandRun;
import dev.sandbox4j.emulators.Machine;
import dev.sandbox4j.emulators.vercel.internal.WirePolicy;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.locks.ReentrantLock;

import static dev.sandbox4j.emulators.vercel.VercelPaths.OUTSIDE_DIR;
import static dev.sandbox4j.emulators.vercel.VercelPaths.SESSION_CWD;
import static dev.sandbox4j.emulators.vercel.VercelPaths.relative;
import static dev.sandbox4j.emulators.vercel.VercelPaths.resolve;

/** The emulator's state: named sandbox records and their sessions, rendered in the SDK's shapes. */
final class State {
    private static final int MAX_COMMANDS_KEPT = 64;

    private State() {
    }

    private static ObjectNode object() {
        return JsonNodeFactory.instance.objectNode();
    }

    /** A named sandbox record: config that outlives its sessions. */
    static final class SandboxRecord {
        final String name;
        final long createdAt;
        final String runtime;
        final String image;
        final Map<String, String> env;
        // guarded by this
        boolean persistent;
        long timeoutMs;
        int vcpus;
        String region;
        WirePolicy policy;
        Map<String, String> tags;
        long updatedAt;
        String currentSessionId;

        SandboxRecord(String name, Requests.CreateParams p) {
            this.name = name;
            this.createdAt = System.currentTimeMillis();
            this.updatedAt = createdAt;
            this.runtime = p.runtime;
            this.image = p.image;
            this.env = Map.copyOf(p.env);
            this.persistent = p.persistent;
            this.timeoutMs = p.timeoutMs;
            this.vcpus = p.vcpus;
            this.region = p.region;
            this.policy = p.policy;
            this.tags = p.tags;
        }

        synchronized void patch(JsonNode b) throws Requests.BadRequest {
            JsonNode policyNode = b.get("networkPolicy");
            WirePolicy newPolicy = null;
            if (policyNode != null) {
                try {
                    newPolicy = WirePolicy.parse(policyNode);
                } catch (WirePolicy.BadPolicyException e) {
                    throw new Requests.BadRequest(e.getMessage());
                }
            }
            JsonNode ports = b.get("ports");
            if (ports != null && (!ports.isArray() || ports.size() > 0)) {
                throw new Requests.BadRequest("The emulator does not expose ports");
            }
            Long timeout = b.has("timeout") ? Requests.timeout(b.get("timeout"), "timeout") : null;
            Integer cpus = null;
            JsonNode resources = b.get("resources");
            if (resources != null && resources.has("vcpus")) {
                cpus = Requests.vcpus(resources.get("vcpus"));
            }
            Boolean persist = b.has("persistent") ? Requests.bool(b.get("persistent"), "persistent") : null;
            Map<String, String> newTags = b.has("tags") ? Requests.stringMap(b.get("tags"), "tags", false) : null;
            if (newPolicy != null) {
                policy = newPolicy;
            }
            if (timeout != null) {
                timeoutMs = timeout;
            }
            if (cpus != null) {
                vcpus = cpus;
            }
            if (persist != null) {
                persistent = persist;
            }
            if (newTags != null) {
                tags = newTags;
            }
            updatedAt = System.currentTimeMillis();
        }

        /** {@code key:value}, as the list's {@code tags} filter names a tag. */
        synchronized boolean hasTag(String keyValue) {
            int colon = keyValue.indexOf(':');
            return colon > 0 && keyValue.substring(colon + 1).equals(tags.get(keyValue.substring(0, colon)));
        }

        synchronized ObjectNode json(Session current) {
            ObjectNode o = object();
            o.put("name", name);
            o.put("persistent", persistent);
            o.put("region", region);
            o.put("vcpus", vcpus);
            o.put("memory", vcpus * 2048);
            if (runtime != null) {
                o.put("runtime", runtime);
            }
            if (image != null) {
                o.put("image", image);
            }
            o.put("timeout", timeoutMs);
            o.set("networkPolicy", policy.responseForm());
            o.put("createdAt", createdAt);
            o.put("updatedAt", updatedAt);
            o.put("currentSessionId", currentSessionId);
            o.put("status", current == null ? "stopped" : current.status());
            o.put("cwd", SESSION_CWD);
            if (!tags.isEmpty()) {
                ObjectNode t = o.putObject("tags");
                tags.forEach(t::put);
            }
            return o;
        }
    }

    /** One running (or stopped) VM of a sandbox. */
    static final class Session {
        final String id;
        final String sandboxName;
        final String region;
        final String runtime;
        final int vcpus;
        final long createdAt;
        final Machine machine;
        final ReentrantLock execLock = new ReentrantLock(true);
        /** The egress the machine runs commands under now (guarded by {@link #execLock}). */
        private dev.sandbox4j.policy.EgressPolicy applied;
        // guarded by this
        final Map<String, CommandRun> commands = new LinkedHashMap<>();
        final Set<String> outside = new LinkedHashSet<>();
        String status = "running";
        long timeoutMs;
        long updatedAt;
        long requestedStopAt;
        long stoppedAt;
        WirePolicy policy;
        ScheduledFuture<?> expiry;

        Session(String id, SandboxRecord rec, Machine machine, WirePolicy policy, long now) {
            this.id = id;
            this.sandboxName = rec.name;
            synchronized (rec) {
                this.region = rec.region;
                this.runtime = rec.runtime;
                this.vcpus = rec.vcpus;
                this.timeoutMs = rec.timeoutMs;
            }
            this.createdAt = now;
            this.updatedAt = now;
            this.machine = Objects.requireNonNull(machine);
            this.policy = policy;
            this.applied = policy.localPolicy(); // the machine opened under it
        }

        /**
         * Switches the machine to the egress of the policy in force, when it changed since the last
         * switch (a list starts a new egress proxy: not once per command). The caller holds
         * {@link #execLock}, so no command is running: the local runner applies an egress to the next one.
         */
        void applyEgress() {
            dev.sandbox4j.policy.EgressPolicy want;
            synchronized (this) {
                want = policy.localPolicy();
            }
            if (!want.equals(applied)) {
                machine.setEgress(want);
                applied = want;
            }
        }

        synchronized boolean stopped() {
            return status.equals("stopped");
        }

        synchronized String status() {
            return status;
        }

        synchronized void addCommand(CommandRun run) {
            commands.put(run.id(), run);
            if (commands.size() > MAX_COMMANDS_KEPT) {
                Iterator<CommandRun> it = commands.values().iterator();
                while (commands.size() > MAX_COMMANDS_KEPT && it.hasNext()) {
                    if (it.next().finished()) {
                        it.remove();
                    }
                }
            }
        }

        synchronized CommandRun command(String id) {
            return commands.get(id);
        }

        /** Records a path written outside the session directory, so argv naming it can be mapped. */
        synchronized void remember(String abs) {
            if (relative(abs) == null) {
                outside.add(abs);
            }
        }

        /**
         * The machine's path for a Vercel path given as a whole argv element (or cwd): the session
         * directory and what was uploaded elsewhere are mapped; anything else is left alone.
         */
        synchronized String machinePath(String arg) {
            if (!arg.startsWith("/")) {
                return arg;
            }
            String abs = resolve("/", arg);
            if (abs == null || !(arg.equals(abs) || arg.equals(abs + "/"))) {
                return arg;
            }
            String rel = relative(abs);
            if (rel != null) {
                return rel.isEmpty() ? machine.workPath() : machine.workPath() + "/" + rel;
            }
            for (String known : outside) {
                if (abs.equals(known) || abs.startsWith(known + "/")) {
                    return machine.workPath() + "/" + OUTSIDE_DIR + abs;
                }
            }
            return arg;
        }

        synchronized ObjectNode json() {
            ObjectNode o = object();
            o.put("id", id);
            o.put("sourceSandboxName", sandboxName); // vercel.md section 4: the OpenAPI's session.ts lists it
            o.put("memory", vcpus * 2048);
            o.put("vcpus", vcpus);
            o.put("region", region);
            if (runtime != null) {
                o.put("runtime", runtime);
            }
            o.put("timeout", timeoutMs);
            o.put("status", status);
            o.put("requestedAt", createdAt);
            o.put("startedAt", createdAt);
            o.put("createdAt", createdAt);
            o.put("cwd", SESSION_CWD);
            o.put("updatedAt", updatedAt);
            o.set("networkPolicy", policy.responseForm());
            if (status.equals("stopped")) {
                o.put("requestedStopAt", requestedStopAt);
                o.put("stoppedAt", stoppedAt);
                o.put("duration", stoppedAt - createdAt);
            }
            return o;
        }
    }
}
