package dev.sandbox4j.api;

import java.util.Objects;

/**
 * One entry of a directory listing in a sandbox. Names are untrusted: the code chose them.
 *
 * @since 0.1.0
 */
public final class FileEntry {
    /**
     * What an entry is. A symbolic link is reported as one and never followed.
     *
     * @since 0.1.0
     */
    public enum Type {
        /** A regular file. */
        FILE,
        /** A directory. */
        DIRECTORY,
        /** A symbolic link, whatever it points to. */
        SYMLINK,
        /** Anything else: a device, a FIFO, a socket. */
        OTHER
    }

    private final String path;
    private final Type type;
    private final long size;

    private FileEntry(String path, Type type, long size) {
        this.path = path;
        this.type = type;
        this.size = size;
    }

    /**
     * An entry at {@code path} (relative to the working directory) of the given type and size.
     *
     * @param path relative to the working directory; normalized
     * @param type not null
     * @param size in bytes; a negative size is stored as 0
     * @return the entry
     * @throws IllegalArgumentException when the path is absolute, climbs out or holds a forbidden character
     */
    public static FileEntry of(String path, Type type, long size) {
        return new FileEntry(SandboxPaths.normalize(path), Objects.requireNonNull(type, "type"), Math.max(0, size));
    }

    /**
     * {@return the entry's path, relative to the sandbox's working directory, with {@code /} between parts}
     */
    public String path() {
        return path;
    }

    /** {@return the last part of {@link #path()}} */
    public String name() {
        int i = path.lastIndexOf('/');
        return i < 0 ? path : path.substring(i + 1);
    }

    /** {@return what the entry is; a symbolic link is {@link Type#SYMLINK}, never its target's type} */
    public Type type() {
        return type;
    }

    /** {@return true for a directory (not a symbolic link to one)} */
    public boolean isDirectory() {
        return type == Type.DIRECTORY;
    }

    /** {@return true for a regular file (not a symbolic link to one)} */
    public boolean isFile() {
        return type == Type.FILE;
    }

    /** {@return the size in bytes for a file; 0 when unknown or not a file} */
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
