package dev.sandbox4j.api;

import java.util.Objects;

/**
 * One entry of a directory listing in a sandbox. Names are untrusted: the code chose them.
 *
 * @since 0.1.0
 */
public final class FileEntry {
    /** What an entry is. A symbolic link is reported as one and never followed. */
    public enum Type { FILE, DIRECTORY, SYMLINK, OTHER }

    private final String path;
    private final Type type;
    private final long size;

    private FileEntry(String path, Type type, long size) {
        this.path = path;
        this.type = type;
        this.size = size;
    }

    /** An entry at {@code path} (relative to the working directory) of the given type and size. */
    public static FileEntry of(String path, Type type, long size) {
        return new FileEntry(SandboxPaths.normalize(path), Objects.requireNonNull(type, "type"), Math.max(0, size));
    }

    /** Relative to the sandbox's working directory. */
    public String path() {
        return path;
    }

    /** The last part of {@link #path()}. */
    public String name() {
        int i = path.lastIndexOf('/');
        return i < 0 ? path : path.substring(i + 1);
    }

    public Type type() {
        return type;
    }

    public boolean isDirectory() {
        return type == Type.DIRECTORY;
    }

    public boolean isFile() {
        return type == Type.FILE;
    }

    /** Size in bytes for a file; 0 when unknown or not a file. */
    public long size() {
        return size;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FileEntry e && e.path.equals(path) && e.type == type && e.size == size;
    }

    @Override
    public int hashCode() {
        return Objects.hash(path, type, size);
    }

    @Override
    public String toString() {
        return path + (type == Type.DIRECTORY ? "/" : type == Type.SYMLINK ? "@" : "") + (type == Type.FILE ? " (" + size + " bytes)" : "");
    }
}
