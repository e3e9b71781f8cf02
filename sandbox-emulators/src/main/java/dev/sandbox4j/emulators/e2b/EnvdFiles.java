package dev.sandbox4j.emulators.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.sandbox4j.emulators.HttpEmulator;
import dev.sandbox4j.emulators.Machine;
import dev.sandbox4j.emulators.Multipart;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;

/**
 * envd's files: {@code /files} (upload as multipart or raw, download, envd's token or {@code v1_}
 * signature check) and {@code filesystem.Filesystem/ListDir} (depth 1), through the sandbox's machine,
 * which follows no symbolic link, so a link the code plants never makes the emulator read a host file.
 */
final class EnvdFiles {
    private final E2bEmulator emulator;

    EnvdFiles(E2bEmulator emulator) {
        this.emulator = emulator;
    }

    /**
     * {@code ListDir} {@code {"path", "depth"}} (depth 1 only; the SDK's default): entries with name, type
     * ({@code FILE_TYPE_FILE}, {@code FILE_TYPE_DIRECTORY}), absolute path, size (an int64, so a JSON
     * string) and {@code isSymlink}. Listed through the workspace, which follows no link.
     */
    void listDir(HttpExchange exchange, EmulatedSandbox sb) throws IOException {
        if (!Envd.acceptsJson(exchange)) {
            return;
        }
        try {
            JsonNode body = Envd.unaryBody(exchange);
            String requested = body == null ? "" : body.path("path").asText("");
            int depth = body == null ? 1 : body.path("depth").asInt(1);
            if (depth > 1) {
                throw new ConnectException("unimplemented", "the emulator lists one level (depth 1) only");
            }
            String abs = Paths.resolve(requested);
            String stored = Paths.storage(abs);
            Machine ws;
            try {
                ws = sb.workspace(emulator.workspaces);
            } catch (IllegalStateException e) {
                HttpEmulator.cut(exchange);
                return;
            }
            List<dev.sandbox4j.api.FileEntry> entries;
            try {
                entries = ws.listFiles(stored);
            } catch (java.nio.file.NoSuchFileException e) {
                throw new ConnectException("not_found", "directory '" + abs + "' does not exist");
            } catch (IOException e) {
                throw new ConnectException("invalid_argument", "path '" + abs + "' is not a directory");
            }
            com.fasterxml.jackson.databind.node.ArrayNode out = JsonNodeFactory.instance.arrayNode();
            for (dev.sandbox4j.api.FileEntry e : entries) {
                if (stored.isEmpty() && e.name().equals(Paths.OUTSIDE_ROOT)) {
                    continue; // where paths outside the home are kept: not part of the home
                }
                ObjectNode n = out.addObject();
                n.put("name", e.name());
                switch (e.type()) {
                    case FILE -> n.put("type", "FILE_TYPE_FILE");
                    case DIRECTORY -> n.put("type", "FILE_TYPE_DIRECTORY");
                    case SYMLINK -> n.put("type", "FILE_TYPE_SYMLINK");
                    default -> { }
                }
                n.put("path", abs.equals("/") ? "/" + e.name() : abs + "/" + e.name());
                if (e.size() > 0) {
                    n.put("size", Long.toString(e.size()));
                }
                if (e.type() == dev.sandbox4j.api.FileEntry.Type.SYMLINK) {
                    n.put("isSymlink", true);
                }
            }
            ObjectNode answer = JsonNodeFactory.instance.objectNode();
            answer.set("entries", out);
            Http.json(exchange, 200, answer, "application/json");
        } catch (ConnectException e) {
            Envd.unaryError(exchange, e);
        }
    }

    void upload(HttpExchange exchange, EmulatedSandbox sb) throws IOException {
        Map<String, List<String>> query = HttpEmulator.queryParams(exchange.getRequestURI().getRawQuery());
        String path = first(query, "path");
        String username = first(query, "username");
        String problem = checkSigning(exchange, sb, query, path == null ? "" : path, "write");
        if (problem != null) {
            Http.envdError(exchange, 401, problem);
            return;
        }
        String user = username == null ? "user" : username;
        if (!user.equals("user") && !user.equals("root")) {
            Http.envdError(exchange, 401, "error looking up user '" + user + "': user: unknown user " + user);
            return;
        }
        byte[] body;
        try {
            body = readUpload(exchange);
        } catch (UploadTooLarge e) {
            Http.envdError(exchange, 507, "attempted to write " + e.size + " bytes: not enough disk space available");
            return;
        } catch (IOException e) {
            Http.envdError(exchange, 400, "error decompressing request body: " + e.getMessage());
            return;
        }
        String contentType = exchange.getRequestHeaders().getFirst("Content-Type");
        String mediaType = contentType == null ? "" : contentType.split(";")[0].trim().toLowerCase();
        Machine ws;
        try {
            ws = sb.workspace(emulator.workspaces);
        } catch (IllegalStateException e) {
            HttpEmulator.cut(exchange);
            return;
        }
        List<ObjectNode> written = new ArrayList<>();
        try {
            if (mediaType.equals("application/octet-stream")) {
                if (path == null) {
                    Http.envdError(exchange, 400, "path query parameter is required for raw body upload");
                    return;
                }
                written.add(write(sb, ws, path, body));
            } else if (mediaType.startsWith("multipart/")) {
                String boundary = Multipart.boundary(contentType);
                if (boundary == null) {
                    Http.envdError(exchange, 500, "error parsing multipart form: no multipart boundary param in Content-Type");
                    return;
                }
                List<Multipart.Part> parts;
                try {
                    parts = Multipart.parse(body, boundary);
                } catch (Multipart.MalformedException e) {
                    Http.envdError(exchange, 500, "error reading form: " + e.getMessage());
                    return;
                }
                List<String> seen = new ArrayList<>();
                for (Multipart.Part part : parts) {
                    if (!"file".equals(part.name())) {
                        continue; // envd skips other form fields silently
                    }
                    String target = path != null ? path : part.filename();
                    String abs = Paths.resolve(target == null ? "" : target);
                    if (seen.contains(abs)) {
                        Http.envdError(exchange, 400, "you cannot upload multiple files to the same path '" + abs
                                + "' in one upload request, only the first specified file was uploaded");
                        return;
                    }
                    seen.add(abs);
                    written.add(write(sb, ws, target == null ? "" : target, part.content()));
                }
            } else {
                Http.envdError(exchange, 400, "unsupported content type: " + contentType
                        + ", expected multipart/form-data or application/octet-stream");
                return;
            }
        } catch (PathException e) {
            Http.envdError(exchange, e.status, e.getMessage());
            return;
        }
        Http.json(exchange, 200, Http.JSON.valueToTree(written), "application/json");
    }

    private ObjectNode write(EmulatedSandbox sb, Machine ws, String path, byte[] content) throws PathException, IOException {
        String abs = Paths.resolve(path);
        String stored = Paths.storage(abs);
        if (abs.equals("/") || abs.equals(E2bEmulator.HOME) || Files.isDirectory(ws.workDirectory().resolve(stored))) {
            throw new PathException(400, "path is a directory: " + abs);
        }
        ws.writeFile(stored, content);
        if (Paths.relativeToHome(abs) == null) {
            sb.writtenOutside.add(abs);
        }
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        n.put("path", abs);
        n.put("name", abs.substring(abs.lastIndexOf('/') + 1));
        n.put("type", "file");
        return n;
    }

    void download(HttpExchange exchange, EmulatedSandbox sb) throws IOException {
        Map<String, List<String>> query = HttpEmulator.queryParams(exchange.getRequestURI().getRawQuery());
        String path = first(query, "path");
        String problem = checkSigning(exchange, sb, query, path == null ? "" : path, "read");
        if (problem != null) {
            Http.envdError(exchange, 401, problem);
            return;
        }
        String abs = Paths.resolve(path == null ? "" : path);
        Machine ws;
        try {
            ws = sb.workspace(emulator.workspaces);
        } catch (IllegalStateException e) {
            HttpEmulator.cut(exchange);
            return;
        }
        String stored = Paths.storage(abs);
        if (abs.equals("/") || abs.equals(E2bEmulator.HOME) || Files.isDirectory(ws.workDirectory().resolve(stored), LinkOption.NOFOLLOW_LINKS)) {
            Http.envdError(exchange, 400, "path '" + abs + "' is a directory");
            return;
        }
        dev.sandbox4j.api.SandboxFile file;
        try {
            // through the workspace, which follows no link: a link the code made never reads a host file
            file = ws.readFile(stored, emulator.maxUploadBytes + 1);
        } catch (java.nio.file.NoSuchFileException e) {
            Http.envdError(exchange, 404, "path '" + abs + "' does not exist");
            return;
        } catch (IOException e) {
            Http.envdError(exchange, 400, "path '" + abs + "' cannot be read: " + e.getMessage());
            return;
        }
        if (file.truncated()) {
            Http.envdError(exchange, 500, "file too large for the emulator");
            return;
        }
        Http.bytes(exchange, 200, file.content(), "application/octet-stream");
    }

    /**
     * envd's check for {@code /files}: a matching {@code X-Access-Token}, or a {@code v1_} signature of
     * {@code path:operation:username:token[:expiration]}. Null when allowed, else the 401 message.
     */
    private static String checkSigning(HttpExchange exchange, EmulatedSandbox sb, Map<String, List<String>> query,
                                       String path, String operation) {
        if (sb.accessToken == null) {
            return null;
        }
        String header = exchange.getRequestHeaders().getFirst("X-Access-Token");
        if (header != null && !header.isEmpty()) {
            return Envd.tokenMatches(exchange, sb) ? null : "access token present in header but does not match";
        }
        String signature = first(query, "signature");
        if (signature == null) {
            return "missing signature query parameter";
        }
        String username = first(query, "username");
        String expiration = first(query, "signature_expiration");
        String raw = path + ":" + operation + ":" + (username == null ? "" : username) + ":" + sb.accessToken
                + (expiration == null ? "" : ":" + expiration);
        String expected;
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(raw.getBytes(StandardCharsets.UTF_8));
            expected = "v1_" + Base64.getEncoder().withoutPadding().encodeToString(hash);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        if (!MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8), signature.getBytes(StandardCharsets.UTF_8))) {
            return "invalid signature";
        }
        if (expiration != null) {
            try {
                if (Long.parseLong(expiration) < Instant.now().getEpochSecond()) {
                    return "signature is already expired";
                }
            } catch (NumberFormatException e) {
                return "invalid signature";
            }
        }
        return null;
    }

    private byte[] readUpload(HttpExchange exchange) throws IOException, UploadTooLarge {
        InputStream in = exchange.getRequestBody();
        String encoding = exchange.getRequestHeaders().getFirst("Content-Encoding");
        if (encoding != null && encoding.trim().equalsIgnoreCase("gzip")) {
            in = new GZIPInputStream(in);
        }
        try (InputStream body = in) {
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            byte[] chunk = new byte[64 * 1024];
            long total = 0;
            int n;
            while ((n = body.read(chunk)) > 0) {
                total += n;
                if (total > emulator.maxUploadBytes) {
                    while (body.read(chunk) > 0) {
                        total += chunk.length; // drain, so the answer reaches the client
                    }
                    throw new UploadTooLarge(total);
                }
                buf.write(chunk, 0, n);
            }
            return buf.toByteArray();
        }
    }

    private static String first(Map<String, List<String>> query, String key) {
        List<String> v = query.get(key);
        return v == null || v.isEmpty() ? null : v.get(0);
    }

    private static final class UploadTooLarge extends Exception {
        final long size;

        UploadTooLarge(long size) {
            super(null, null, false, false);
            this.size = size;
        }
    }

    static final class PathException extends Exception {
        final int status;

        PathException(int status, String message) {
            super(message, null, false, false);
            this.status = status;
        }
    }
}
