package dev.sandbox4j.emulators.modal.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.api.FileEntry;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.emulators.Machine;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Set;

/**
 * The filesystem tool Modal puts in every sandbox, {@code /__modal/.bin/modal-sandbox-fs-tools}, which
 * the JS SDK 0.11.1's {@code sandbox.filesystem} runs as an exec with one JSON argument
 * ({@code {"ReadFile":{"path":…}}}, {@code ListFiles}, {@code Stat}, {@code WriteFile} with the content
 * on stdin, {@code MakeDirectory}; dist/index.js {@code make*Command}). Success is exit 0 with the file
 * (ReadFile) or JSON (ListFiles: an array of entries sorted by name; Stat: one entry) on stdout; a
 * failure is exit 1 with {@code {"error_kind","message","detail"}} on stderr, the kinds the SDK maps
 * ({@code NotFound}, {@code IsDirectory}, {@code NotDirectory}, {@code AlreadyExists},
 * {@code PermissionDenied}, {@code FileTooLarge}).
 *
 * <p>Served here in Java over the machine's own file calls, which follow no symbolic link: the emulated
 * filesystem is the machine's working directory ({@link Machine#workPath()}); a path elsewhere is
 * {@code PermissionDenied}, and a link on the way is not followed ({@code PermissionDenied}; Modal's tool
 * would follow it). {@code Remove} and {@code Watch} are not served (exit 1, kind {@code Unsupported}).
 * The local sandbox does one thing at a time, so a tool call waits for a running command to end
 * (Modal's tool runs beside it).
 */
final class FsTools {
    static final String PATH = "/__modal/.bin/modal-sandbox-fs-tools";
    /** The emulator's read size limit (Modal's own is not documented): past it, FileTooLarge. */
    static final long READ_LIMIT = 32L << 20;
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The work path itself, as {@link #lookup} answers it (any path stands in; compared by identity). */
    private static final FileEntry ROOT = FileEntry.of("root", FileEntry.Type.DIRECTORY, 0);

    /** What one run of the tool printed and how it ended. */
    static final class Outcome {
        final byte[] stdout;
        final byte[] stderr;
        final int code;

        Outcome(byte[] stdout, byte[] stderr, int code) {
            this.stdout = stdout;
            this.stderr = stderr;
            this.code = code;
        }
    }

    private static final class Failure extends Exception {
        final String kind;

        Failure(String kind, String message) {
            super(message);
            this.kind = kind;
        }
    }

    private FsTools() {
    }

    static boolean isTool(List<String> argv) {
        return !argv.isEmpty() && argv.get(0).equals(PATH);
    }

    /** Whether this run reads its content from stdin (WriteFile). */
    static boolean readsStdin(List<String> argv) {
        return argv.size() == 2 && argv.get(1).trim().startsWith("{\"WriteFile\"");
    }

    /**
     * Runs the tool. {@code stdin} is the content for WriteFile: it waits for the client's EOF.
     */
    static Outcome run(Machine machine, List<String> argv, StdinSource stdin) throws InterruptedException {
        try {
            if (argv.size() != 2) {
                throw new Failure("InvalidArgument", "expected one JSON command");
            }
            JsonNode cmd;
            try {
                cmd = JSON.readTree(argv.get(1));
            } catch (IOException e) {
                throw new Failure("InvalidArgument", "the command is not JSON");
            }
            if (cmd == null || !cmd.isObject() || cmd.size() != 1) {
                throw new Failure("InvalidArgument", "expected one operation");
            }
            String op = cmd.fieldNames().next();
            JsonNode args = cmd.get(op);
            String path = args.path("path").asText("");
            String rel = relative(machine, path);
            switch (op) {
                case "ReadFile":
                    return ok(read(machine, rel, path));
                case "ListFiles":
                    return ok(list(machine, rel, path));
                case "Stat":
                    return ok(JSON.writeValueAsBytes(stat(machine, rel, path)));
                case "WriteFile": {
                    byte[] content = stdin.await();
                    if (content == null) {
                        throw new Failure("Other", "stdin was not closed");
                    }
                    write(machine, rel, path, content);
                    return ok(new byte[0]);
                }
                case "MakeDirectory":
                    mkdir(machine, rel, path, args.path("parents").asBoolean(true));
                    return ok(new byte[0]);
                default:
                    throw new Failure("Unsupported", "the emulator does not serve " + op);
            }
        } catch (Failure f) {
            ObjectNode err = JSON.createObjectNode().put("error_kind", f.kind).put("message", f.getMessage()).put("detail", "");
            return new Outcome(new byte[0], err.toString().getBytes(StandardCharsets.UTF_8), 1);
        } catch (IOException e) {
            ObjectNode err = JSON.createObjectNode().put("error_kind", "Other").put("message", String.valueOf(e.getMessage()))
                    .put("detail", "");
            return new Outcome(new byte[0], err.toString().getBytes(StandardCharsets.UTF_8), 1);
        }
    }

    /** Where the client's stdin comes from (the exec's, once closed). */
    interface StdinSource {
        byte[] await() throws InterruptedException;
    }

    private static Outcome ok(byte[] stdout) {
        return new Outcome(stdout, new byte[0], 0);
    }

    /** The machine-relative path of an absolute one under the work path ("" for the work path itself). */
    private static String relative(Machine machine, String path) throws Failure {
        if (!path.startsWith("/")) {
            throw new Failure("InvalidArgument", "the path must be absolute");
        }
        Path p = Path.of(path).normalize();
        Path root = Path.of(machine.workPath());
        if (!p.startsWith(root)) {
            throw new Failure("PermissionDenied", "the emulated filesystem is " + root + " only");
        }
        return root.relativize(p).toString();
    }

    private static String parent(String rel) {
        int slash = rel.lastIndexOf('/');
        return slash < 0 ? "" : rel.substring(0, slash);
    }

    /** The entry for {@code rel} as its parent lists it (no link followed), or null when missing. */
    private static FileEntry lookup(Machine machine, String rel) throws IOException, Failure {
        if (rel.isEmpty()) {
            return ROOT;
        }
        List<FileEntry> siblings;
        try {
            siblings = machine.listFiles(parent(rel));
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new Failure(e.getMessage() != null && e.getMessage().contains("link") ? "PermissionDenied" : "NotDirectory",
                    "a component of the path is not a directory (links are not followed here)");
        }
        for (FileEntry e : siblings) {
            if (e.path().equals(rel)) {
                return e;
            }
        }
        return null;
    }

    private static byte[] read(Machine machine, String rel, String path) throws IOException, Failure {
        FileEntry e = lookup(machine, rel);
        if (e == null) {
            throw new Failure("NotFound", "No such file or directory");
        }
        if (e.type() == FileEntry.Type.DIRECTORY) {
            throw new Failure("IsDirectory", "Is a directory");
        }
        if (e.type() != FileEntry.Type.FILE) {
            throw new Failure("PermissionDenied", "not a regular file (links are not followed here)");
        }
        if (e.size() > READ_LIMIT) {
            throw new Failure("FileTooLarge", "File is larger than " + READ_LIMIT + " bytes");
        }
        SandboxFile f = machine.readFile(rel, READ_LIMIT);
        return f.content();
    }

    private static byte[] list(Machine machine, String rel, String path) throws IOException, Failure {
        FileEntry dir = lookup(machine, rel);
        if (dir == null) {
            throw new Failure("NotFound", "No such file or directory");
        }
        if (dir.type() != FileEntry.Type.DIRECTORY) {
            throw new Failure(dir.type() == FileEntry.Type.SYMLINK ? "PermissionDenied" : "NotDirectory", "Not a directory");
        }
        ArrayNode out = JSON.createArrayNode();
        List<FileEntry> entries = new java.util.ArrayList<>(machine.listFiles(rel));
        // the JS SDK documents the array as sorted by name
        entries.sort(java.util.Comparator.comparing(FileEntry::name));
        for (FileEntry e : entries) {
            out.add(entry(machine, e, path.endsWith("/") ? path + e.name() : path + "/" + e.name()));
        }
        return JSON.writeValueAsBytes(out);
    }

    private static ObjectNode stat(Machine machine, String rel, String path) throws IOException, Failure {
        FileEntry e = lookup(machine, rel);
        if (e == null) {
            throw new Failure("NotFound", "No such file or directory");
        }
        return entry(machine, e, path);
    }

    /** One entry as the tool prints it; the attributes are the file's own (lstat on the host). */
    private static ObjectNode entry(Machine machine, FileEntry e, String absolute) throws IOException {
        ObjectNode n = JSON.createObjectNode();
        Path host = e == ROOT ? machine.workDirectory() : machine.workDirectory().resolve(e.path());
        PosixFileAttributes a = Files.readAttributes(host, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        String type = a.isSymbolicLink() ? "symlink" : a.isDirectory() ? "directory" : a.isRegularFile() ? "file" : "other";
        int mode = 0;
        Set<PosixFilePermission> perms = a.permissions();
        PosixFilePermission[] bits = PosixFilePermission.values();
        for (int i = 0; i < 9; i++) {
            if (perms.contains(bits[i])) {
                mode |= 0400 >> i;
            }
        }
        int typeBits = a.isSymbolicLink() ? 0120000 : a.isDirectory() ? 0040000 : a.isRegularFile() ? 0100000 : 0;
        n.put("name", Path.of(absolute).getFileName() == null ? "/" : Path.of(absolute).getFileName().toString());
        n.put("path", absolute);
        n.put("type", type);
        n.put("size", a.size());
        n.put("mode", typeBits | mode);
        n.put("permissions", PosixFilePermissions.toString(perms));
        n.put("owner", a.owner().getName());
        n.put("group", a.group().getName());
        n.put("modified_time", a.lastModifiedTime().toMillis() / 1000);
        if (a.isSymbolicLink()) {
            n.put("symlink_target", Files.readSymbolicLink(host).toString());
        } else {
            n.putNull("symlink_target");
        }
        return n;
    }

    private static void write(Machine machine, String rel, String path, byte[] content) throws IOException, Failure {
        if (rel.isEmpty()) {
            throw new Failure("IsDirectory", "Is a directory");
        }
        FileEntry e = lookup(machine, rel);
        if (e != null && e.type() == FileEntry.Type.DIRECTORY) {
            throw new Failure("IsDirectory", "Is a directory");
        }
        if (e != null && e.type() != FileEntry.Type.FILE) {
            throw new Failure("PermissionDenied", "not a regular file (links are not followed here)");
        }
        machine.writeFile(rel, content);
    }

    private static void mkdir(Machine machine, String rel, String path, boolean parents) throws IOException, Failure {
        FileEntry e = lookup(machine, rel);
        if (e != null) {
            if (e.type() == FileEntry.Type.DIRECTORY && parents) {
                return;
            }
            throw new Failure(e.type() == FileEntry.Type.DIRECTORY ? "AlreadyExists" : "NotDirectory", "File exists");
        }
        if (!parents && lookup(machine, parent(rel)) == null) {
            throw new Failure("NotFound", "No such file or directory");
        }
        machine.mkdir(rel);
    }
}
