package dev.sandbox4j.emulators.vercel;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.emulators.ShellWords;
import dev.sandbox4j.emulators.vercel.internal.WirePolicy;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;


/** Request bodies as the API reads them (vercel.md sections 4 and 6), refused with a 4xx when invalid. */
final class Requests {
    static final String REGION = "iad1";
    static final long DEFAULT_TIMEOUT_MS = 300_000;
    static final long MAX_TIMEOUT_MS = 24L * 60 * 60 * 1000;
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_-]{0,127}");

    private Requests() {
    }

    /** A 4xx answer for a request the API would refuse. */
    static final class BadRequest extends Exception {
        final int status;
        final String code;

        BadRequest(String message) {
            this(400, "bad_request", message);
        }

        BadRequest(int status, String code, String message) {
            super(message);
            this.status = status;
            this.code = code;
        }
    }

    /** The create body (vercel.md section 4). Unknown fields are ignored, as newer SDKs add fields. */
    static final class CreateParams {
        String name;
        boolean persistent = true;
        long timeoutMs = DEFAULT_TIMEOUT_MS;
        int vcpus = 2;
        String runtime;
        String image;
        String region = REGION;
        WirePolicy policy = WirePolicy.allowAll();
        Map<String, String> env = new LinkedHashMap<>();
        Map<String, String> tags = new LinkedHashMap<>();

        static CreateParams parse(JsonNode b, boolean v3, String projectId) throws BadRequest {
            CreateParams p = new CreateParams();
            JsonNode project = b.get("projectId");
            if (project == null || !project.isTextual()) {
                throw new BadRequest("projectId is required");
            }
            if (!project.asText().equals(projectId)) {
                throw new BadRequest(404, "not_found", "Project not found: " + project.asText());
            }
            if (b.has("source")) {
                throw new BadRequest("The emulator does not support a source (git, tarball or snapshot)");
            }
            JsonNode ports = b.get("ports");
            if (ports != null && (!ports.isArray() || ports.size() > 0)) {
                throw new BadRequest("The emulator does not expose ports: send ports: []");
            }
            JsonNode name = b.get("name");
            if (name != null) {
                if (!name.isTextual() || !NAME.matcher(name.asText()).matches()) {
                    throw new BadRequest("name must be 1-128 characters of letters, digits, '-' and '_'");
                }
                p.name = name.asText();
            }
            JsonNode persistent = b.get("persistent");
            if (persistent != null) {
                if (!persistent.isBoolean()) {
                    throw new BadRequest("persistent must be a boolean");
                }
                p.persistent = persistent.asBoolean();
            }
            JsonNode timeout = b.get("timeout");
            if (timeout != null) {
                p.timeoutMs = timeout(timeout, "timeout");
            }
            JsonNode resources = b.get("resources");
            if (resources != null) {
                if (!resources.isObject()) {
                    throw new BadRequest("resources must be an object");
                }
                JsonNode vcpus = resources.get("vcpus");
                if (vcpus != null) {
                    p.vcpus = vcpus(vcpus);
                }
            }
            JsonNode runtime = b.get("runtime");
            JsonNode image = b.get("image");
            if (runtime != null && image != null) {
                throw new BadRequest("runtime and image cannot be used together");
            }
            if (runtime != null) {
                if (v3) {
                    throw new BadRequest("runtime is not accepted on /v3/sandboxes: send image, or use /v2/sandboxes");
                }
                if (!runtime.isTextual() || !List.of("node22", "node24", "node26", "python3.13").contains(runtime.asText())) {
                    throw new BadRequest("runtime must be one of node22, node24, node26, python3.13");
                }
                p.runtime = runtime.asText();
            }
            if (image != null) {
                if (!image.isTextual() || image.asText().isBlank()) {
                    throw new BadRequest("image must be a string");
                }
                p.image = image.asText();
            } else if (v3) {
                p.image = "vercel/sandbox/universal";
            }
            JsonNode region = b.get("region");
            if (region != null) {
                if (!region.isTextual()) {
                    throw new BadRequest("region must be a string");
                }
                p.region = region.asText();
            }
            JsonNode policy = b.get("networkPolicy");
            if (policy != null) {
                try {
                    p.policy = WirePolicy.parse(policy);
                } catch (WirePolicy.BadPolicyException e) {
                    throw new BadRequest(e.getMessage());
                }
            }
            p.env = stringMap(b.get("env"), "env", true);
            p.tags = stringMap(b.get("tags"), "tags", false);
            if (p.tags.size() > 5) {
                throw new BadRequest("At most 5 tags are allowed");
            }
            return p;
        }
    }

    /** The run-command body (vercel.md section 6). */
    static final class CommandParams {
        String command;
        List<String> args = new ArrayList<>();
        String cwd;
        Map<String, String> env = new LinkedHashMap<>();
        boolean wait;
        boolean logs;
        Long timeoutMs;

        static CommandParams parse(JsonNode b) throws BadRequest {
            CommandParams p = new CommandParams();
            JsonNode command = b.get("command");
            if (command == null || !command.isTextual() || command.asText().isEmpty()) {
                throw new BadRequest("command is required");
            }
            p.command = noNul(command.asText(), "command");
            JsonNode args = b.get("args");
            if (args != null) {
                if (!args.isArray()) {
                    throw new BadRequest("args must be a list of strings");
                }
                for (JsonNode a : args) {
                    if (!a.isTextual()) {
                        throw new BadRequest("args must be a list of strings");
                    }
                    p.args.add(noNul(a.asText(), "args"));
                }
            }
            JsonNode cwd = b.get("cwd");
            if (cwd != null) {
                if (!cwd.isTextual() || !cwd.asText().startsWith("/")) {
                    throw new BadRequest("cwd must be an absolute path");
                }
                String abs = VercelPaths.resolve("/", cwd.asText());
                if (abs == null) {
                    throw new BadRequest("cwd is not a valid path");
                }
                p.cwd = abs;
            }
            p.env = stringMap(b.get("env"), "env", true);
            for (Map.Entry<String, String> e : p.env.entrySet()) {
                noNul(e.getValue(), "env");
            }
            p.wait = bool(b.get("wait"), "wait");
            p.logs = bool(b.get("logs"), "logs");
            bool(b.get("sudo"), "sudo");
            JsonNode timeout = b.get("timeout");
            if (timeout != null) {
                p.timeoutMs = timeout(timeout, "timeout");
            }
            return p;
        }
    }

    private static String noNul(String s, String field) throws BadRequest {
        if (s.indexOf('\0') >= 0) {
            throw new BadRequest(field + " must not contain a NUL character");
        }
        return s;
    }

    static boolean bool(JsonNode n, String field) throws BadRequest {
        if (n == null || n.isNull()) {
            return false;
        }
        if (!n.isBoolean()) {
            throw new BadRequest(field + " must be a boolean");
        }
        return n.asBoolean();
    }

    static long timeout(JsonNode n, String field) throws BadRequest {
        if (!n.isIntegralNumber() || n.asLong() < 1 || n.asLong() > MAX_TIMEOUT_MS) {
            throw new BadRequest(field + " must be a number of milliseconds between 1 and " + MAX_TIMEOUT_MS);
        }
        return n.asLong();
    }

    static int vcpus(JsonNode n) throws BadRequest {
        if (!n.isIntegralNumber()) {
            throw new BadRequest("resources.vcpus must be a number");
        }
        int v = n.asInt();
        if (v < 1 || v > 32 || (v != 1 && v % 2 != 0)) {
            throw new BadRequest("resources.vcpus must be 1 or an even number up to 32");
        }
        return v;
    }

    static Map<String, String> stringMap(JsonNode n, String field, boolean envNames) throws BadRequest {
        Map<String, String> out = new LinkedHashMap<>();
        if (n == null || n.isNull()) {
            return out;
        }
        if (!n.isObject()) {
            throw new BadRequest(field + " must be an object of strings");
        }
        Iterator<Map.Entry<String, JsonNode>> it = n.properties().iterator();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isTextual()) {
                throw new BadRequest(field + "." + e.getKey() + " must be a string");
            }
            if (envNames && !ShellWords.validEnvName(e.getKey())) {
                throw new BadRequest(field + ": '" + e.getKey() + "' is not a valid variable name");
            }
            out.put(e.getKey(), e.getValue().asText());
        }
        return out;
    }
}
