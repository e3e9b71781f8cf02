package dev.sandbox4j.emulators.vercel;

import static dev.sandbox4j.emulators.HttpEmulator.object;
import static dev.sandbox4j.emulators.HttpEmulator.sendJson;
import static dev.sandbox4j.emulators.vercel.VercelPaths.SESSION_CWD;
import static dev.sandbox4j.emulators.vercel.VercelPaths.resolve;
import static dev.sandbox4j.emulators.vercel.VercelPaths.storagePath;
import static dev.sandbox4j.emulators.vercel.VercelWire.body;
import static dev.sandbox4j.emulators.vercel.VercelWire.sendError;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.emulators.vercel.State.Session;
import dev.sandbox4j.emulators.vercel.internal.TarGz;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * A session's files ({@code /v2/sandboxes/sessions/{id}/fs/...}): a gzip-tar write, read and mkdir,
 * each through the session's machine, which follows no link.
 */
final class SessionFiles {
    private final VercelEmulator emu;

    SessionFiles(VercelEmulator emu) {
        this.emu = emu;
    }

    void handle(HttpExchange ex, Session s, String op) throws Exception {
        switch (op) {
            case "write":
                writeFiles(ex, s);
                return;
            case "read":
                readFile(ex, s);
                return;
            case "mkdir":
                mkdir(ex, s);
                return;
            default:
                sendError(ex, 404, "not_found", "No filesystem operation " + op);
        }
    }

    private void writeFiles(HttpExchange ex, Session s) throws Exception {
        if (!emu.running(ex, s)) {
            return;
        }
        String type = ex.getRequestHeaders().getFirst("Content-Type");
        if (type == null || !type.toLowerCase().startsWith("application/gzip")) {
            sendError(ex, 400, "bad_request", "Files must be uploaded as a gzipped tarball (Content-Type: application/gzip)");
            return;
        }
        String base = ex.getRequestHeaders().getFirst("x-cwd");
        if (base == null || base.isEmpty()) {
            // The OpenAPI says "the home directory"; the emulator's home is the session directory.
            base = SESSION_CWD;
        }
        List<TarGz.Entry> entries;
        try (InputStream in = ex.getRequestBody()) {
            entries = TarGz.read(in, emu.maxUploadBytes);
        } catch (TarGz.BadArchiveException e) {
            sendError(ex, 400, "bad_request", "Invalid archive: " + e.getMessage());
            return;
        }
        List<String> targets = new ArrayList<>();
        for (TarGz.Entry e : entries) {
            String abs = resolve(base, e.name());
            if (abs == null || abs.equals("/")) {
                sendError(ex, 400, "bad_request", "Invalid path in archive: " + e.name());
                return;
            }
            targets.add(abs);
        }
        for (int i = 0; i < entries.size(); i++) {
            TarGz.Entry e = entries.get(i);
            String abs = targets.get(i);
            String stored = storagePath(abs);
            if (e.directory()) {
                if (!stored.isEmpty()) {
                    s.machine.mkdir(stored);
                }
            } else {
                if (stored.isEmpty()) {
                    sendError(ex, 400, "bad_request", "Cannot write a file over " + SESSION_CWD);
                    return;
                }
                s.machine.writeFile(stored, e.content(), e.mode());
            }
            s.remember(abs);
        }
        sendJson(ex, 200, object());
    }

    private void readFile(HttpExchange ex, Session s) throws Exception {
        JsonNode body = body(ex);
        if (body == null || !emu.running(ex, s)) {
            return;
        }
        String abs = pathParam(ex, body);
        if (abs == null) {
            return;
        }
        SandboxFile file;
        try {
            // through the machine, which follows no link: a missing file, a directory or a link is not found
            file = s.machine.readFile(storagePath(abs), emu.maxUploadBytes);
        } catch (IOException e) {
            sendError(ex, 404, "file_not_found", "File not found");
            return;
        }
        if (file.truncated()) {
            throw new IOException("file larger than " + emu.maxUploadBytes + " bytes");
        }
        byte[] content = file.content();
        ex.getResponseHeaders().set("Content-Type", "application/octet-stream");
        ex.sendResponseHeaders(200, content.length == 0 ? -1 : content.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(content);
        }
    }

    private void mkdir(HttpExchange ex, Session s) throws Exception {
        JsonNode body = body(ex);
        if (body == null || !emu.running(ex, s)) {
            return;
        }
        String abs = pathParam(ex, body);
        if (abs == null) {
            return;
        }
        if (storagePath(abs).isEmpty()) {
            sendError(ex, 400, "bad_request", "mkdir failed: " + SESSION_CWD + " exists");
            return;
        }
        s.machine.mkdir(storagePath(abs));
        s.remember(abs);
        sendJson(ex, 200, object());
    }

    /** The {path, cwd?} body of read and mkdir, as an absolute Vercel path; null after answering 400. */
    private static String pathParam(HttpExchange ex, JsonNode body) throws IOException {
        JsonNode path = body.get("path");
        JsonNode cwd = body.get("cwd");
        if (path == null || !path.isTextual() || path.asText().isEmpty() || (cwd != null && !cwd.isTextual())) {
            sendError(ex, 400, "bad_request", "path must be a non-empty string");
            return null;
        }
        String abs = resolve(cwd == null ? SESSION_CWD : cwd.asText(), path.asText());
        if (abs == null || abs.equals("/")) {
            sendError(ex, 400, "bad_request", "Invalid path: " + path.asText());
            return null;
        }
        return abs;
    }
}
