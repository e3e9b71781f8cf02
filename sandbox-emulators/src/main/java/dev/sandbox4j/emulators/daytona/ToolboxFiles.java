package dev.sandbox4j.emulators.daytona;

import static dev.sandbox4j.emulators.HttpEmulator.JSON;
import static dev.sandbox4j.emulators.HttpEmulator.object;
import static dev.sandbox4j.emulators.daytona.DaytonaEmulator.readWireBody;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.emulators.HttpEmulator;
import dev.sandbox4j.emulators.Machine;
import dev.sandbox4j.emulators.Multipart;
import dev.sandbox4j.emulators.RecordedCall;
import dev.sandbox4j.emulators.daytona.internal.SandboxPaths;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The toolbox's files: {@code files/bulk-upload} (multipart), {@code files/download?path=} and
 * {@code files/bulk-download}, each through the sandbox's machine, which follows no link.
 */
final class ToolboxFiles {
    private final DaytonaEmulator emu;
    private final Toolbox toolbox;

    ToolboxFiles(DaytonaEmulator emu, Toolbox toolbox) {
        this.emu = emu;
        this.toolbox = toolbox;
    }

    /**
     * The daemon's {@code GET /files/download?path=} ({@code fs/download_file.go}): the raw bytes as
     * {@code application/octet-stream}, 404 for a missing file, 400 for a directory or an empty path.
     * Read through the machine, which follows no link (the real daemon follows links inside its own
     * VM; here a link could point at a host file, so it is refused).
     */
    void download(HttpExchange exchange, RecordedCall call, EmulatedSandbox s) throws IOException {
        Map<String, List<String>> query = HttpEmulator.queryParams(exchange.getRequestURI().getRawQuery());
        List<String> values = query.get("path");
        String path = values == null || values.isEmpty() ? "" : values.get(0);
        if (path.isEmpty()) {
            toolbox.error(exchange, call, 400, "bad request: path is required", "BAD_REQUEST");
            return;
        }
        String stored;
        try {
            stored = SandboxPaths.storage(path);
        } catch (IllegalArgumentException e) {
            toolbox.error(exchange, call, 400, "bad request: path must be a file", "BAD_REQUEST");
            return;
        }
        dev.sandbox4j.api.SandboxFile file;
        try {
            file = s.machine().readFile(stored, emu.maxUploadBytes + 1);
        } catch (java.nio.file.NoSuchFileException e) {
            toolbox.error(exchange, call, 404, "not found: stat " + SandboxPaths.absolute(path) + ": no such file or directory",
                    "NOT_FOUND");
            return;
        } catch (IOException e) {
            toolbox.error(exchange, call, 400, "bad request: " + e.getMessage(), "BAD_REQUEST");
            return;
        }
        if (file.truncated()) {
            toolbox.error(exchange, call, 400, "bad request: file too large for the emulator", "BAD_REQUEST");
            return;
        }
        byte[] content = file.content();
        call.status(200);
        exchange.getResponseHeaders().set("Content-Type", "application/octet-stream");
        exchange.getResponseHeaders().set("Content-Disposition", "attachment; filename=" + file.name());
        exchange.sendResponseHeaders(200, content.length == 0 ? -1 : content.length);
        try (java.io.OutputStream out = exchange.getResponseBody()) {
            out.write(content);
        }
    }

    /**
     * {@code POST files/bulk-download} {@code {"paths": [...]}}, which the SDK's {@code fs.downloadFile}
     * sends: a {@code multipart/form-data} answer, one part per path, {@code name="file"} with the
     * bytes or {@code name="error"} with a message, its {@code filename} the requested path (how the
     * SDK 0.218 matches parts to requests). Read through the machine, which follows no link.
     */
    void bulkDownload(HttpExchange exchange, RecordedCall call, EmulatedSandbox s) throws Exception {
        JsonNode body = toolbox.body(exchange, call);
        JsonNode paths = body.get("paths");
        if (paths == null || !paths.isArray() || paths.isEmpty()) {
            toolbox.error(exchange, call, 400, "request body must be {\"paths\": [ ... ]} and non-empty", "BAD_REQUEST");
            return;
        }
        String boundary = "DAYTONA-FILE-BOUNDARY";
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        long budget = emu.maxUploadBytes;
        for (JsonNode p : paths) {
            String path = p.asText("");
            String quoted = path.replace("\\", "\\\\").replace("\"", "\\\"");
            byte[] content = null;
            String error;
            try {
                dev.sandbox4j.api.SandboxFile f = s.machine().readFile(SandboxPaths.storage(path), budget + 1);
                if (f.truncated()) {
                    error = "file too large for the emulator: " + path;
                } else {
                    content = f.content();
                    budget -= content.length;
                    error = null;
                }
            } catch (IllegalArgumentException | IOException e) {
                error = "file not found or invalid: " + path;
            }
            out.write(("--" + boundary + "\r\n").getBytes(StandardCharsets.UTF_8));
            if (content != null) {
                out.write(("Content-Disposition: form-data; name=\"file\"; filename=\"" + quoted + "\"\r\n"
                        + "Content-Type: application/octet-stream\r\n\r\n").getBytes(StandardCharsets.UTF_8));
                out.write(content);
            } else {
                out.write(("Content-Disposition: form-data; name=\"error\"; filename=\"" + quoted + "\"\r\n"
                        + "Content-Type: text/plain; charset=utf-8\r\n\r\n" + error).getBytes(StandardCharsets.UTF_8));
            }
            out.write("\r\n".getBytes(StandardCharsets.UTF_8));
        }
        out.write(("--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8));
        byte[] answer = out.toByteArray();
        call.status(200);
        exchange.getResponseHeaders().set("Content-Type", "multipart/form-data; boundary=" + boundary);
        exchange.sendResponseHeaders(200, answer.length);
        try (java.io.OutputStream o = exchange.getResponseBody()) {
            o.write(answer);
        }
    }

    void upload(HttpExchange exchange, RecordedCall call, EmulatedSandbox s) throws Exception {
        String contentType = exchange.getRequestHeaders().getFirst("Content-Type");
        String boundary = Multipart.mediaType(contentType).equals("multipart/form-data")
                ? Multipart.boundary(contentType) : null;
        if (boundary == null || boundary.length() > 200) {
            readWireBody(exchange, emu.maxUploadBytes);
            ObjectNode err = object();
            err.putArray("errors").add("invalid multipart form");
            emu.sendJson(exchange, call, 400, err);
            return;
        }
        byte[] body = readWireBody(exchange, emu.maxUploadBytes);
        List<Multipart.Part> parts;
        try {
            parts = Multipart.parse(body, boundary);
        } catch (Multipart.MalformedException e) {
            ObjectNode err = object();
            err.putArray("errors").add("reading part: " + e.getMessage());
            err.putNull("files");
            emu.sendJson(exchange, call, 400, err);
            return;
        }
        ArrayNode recorded = call.body() == null ? JSON.createArrayNode() : null;
        Map<String, String> dests = new HashMap<>();
        List<String> errors = new ArrayList<>();
        ArrayNode files = JSON.createArrayNode();
        for (Multipart.Part part : parts) {
            String name = part.name() == null ? "" : part.name();
            if (recorded != null) {
                ObjectNode p = recorded.addObject().put("name", name).put("size", part.size());
                if (part.filename() != null) {
                    p.put("filename", part.filename());
                }
                if (name.endsWith(".path")) {
                    p.put("value", part.text());
                }
            }
            String idx = name.startsWith("files[") ? name.substring(6) : name;
            idx = idx.endsWith("].path") ? idx.substring(0, idx.length() - 6)
                    : idx.endsWith("].file") ? idx.substring(0, idx.length() - 6) : idx;
            if (name.endsWith(".path")) {
                String dest = part.text().trim();
                if (dest.isEmpty()) {
                    errors.add("path[" + idx + "]: empty path");
                } else {
                    dests.put(idx, dest);
                }
            } else if (name.endsWith(".file")) {
                String dest = dests.get(idx);
                if (dest == null) {
                    errors.add("file[" + idx + "]: missing .path metadata");
                    continue;
                }
                try {
                    String stored = SandboxPaths.storage(dest);
                    Machine m = s.machine();
                    if (m == null) {
                        throw new IOException("sandbox is not running");
                    }
                    m.writeFile(stored, part.content());
                    if (part.content().length <= EmulatedSandbox.PROGRAM_RECORD_BYTES) {
                        s.uploaded.put(SandboxPaths.absolute(dest), part.content());
                    }
                    if (stored.startsWith(SandboxPaths.OUTSIDE + "/")) {
                        s.outsidePaths.add(SandboxPaths.absolute(dest));
                    }
                    files.addObject().put("path", dest).put("bytes", part.size());
                } catch (IOException | IllegalArgumentException | SecurityException e) {
                    errors.add(dest + ": " + e.getMessage());
                }
            }
        }
        if (recorded != null) {
            call.body(object().set("multipartParts", recorded));
        }
        ObjectNode answer = object();
        if (!errors.isEmpty()) {
            ArrayNode e = answer.putArray("errors");
            errors.forEach(e::add);
        }
        if (files.isEmpty()) {
            answer.putNull("files"); // Go marshals a nil slice as null
        } else {
            answer.set("files", files);
        }
        emu.sendJson(exchange, call, errors.isEmpty() ? 200 : 400, answer);
    }
}
