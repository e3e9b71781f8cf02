package dev.sandbox4j.api;

import java.util.Objects;

/**
 * A file read back from a sandbox: its path (relative to the sandbox's working directory), its size
 * there, the bytes kept (at most the cap the read was given), a media type guessed from its name, and
 * whether the bytes were cut. The content is untrusted, like everything the code produced.
 *
 * @since 0.1.0
 */
public final class SandboxFile {
    private final String path;
    private final long size;
    private final byte[] content;
    private final String mediaType;
    private final boolean truncated;

    private SandboxFile(Builder b) {
        this.path = SandboxPaths.normalize(b.path);
        this.content = b.content.clone();
        if (b.size < content.length) {
            throw new IllegalArgumentException("size " + b.size + " is smaller than the " + content.length + " bytes kept");
        }
        this.size = b.size;
        this.truncated = b.truncated || content.length < b.size;
        this.mediaType = b.mediaType != null ? b.mediaType : MediaTypes.guess(path);
    }

    /**
     * Starts a file read back from {@code path}: no content, size defaulting to the content's length, media
     * type guessed from the name.
     *
     * @param path relative to the sandbox's working directory; normalized by {@link Builder#build()}
     * @return a new builder
     */
    public static Builder builder(String path) {
        return new Builder(path);
    }

    /** {@return the path, relative to the sandbox's working directory, with {@code /} between its parts} */
    public String path() {
        return path;
    }

    /** {@return the last part of {@link #path()}} */
    public String name() {
        int i = path.lastIndexOf('/');
        return i < 0 ? path : path.substring(i + 1);
    }

    /** {@return the file's size in the sandbox, in bytes (not what was kept)} */
    public long size() {
        return size;
    }

    /** {@return a copy of the bytes kept: all of them unless {@link #truncated()}} */
    public byte[] content() {
        return content.clone();
    }

    /** {@return how many bytes were kept} */
    public int contentLength() {
        return content.length;
    }

    /**
     * {@return the media type, as set or guessed from the file name ({@code application/octet-stream} when
     * unknown); never sniffed from the content}
     */
    public String mediaType() {
        return mediaType;
    }

    /** {@return true when fewer bytes were kept than the file holds} */
    public boolean truncated() {
        return truncated;
    }

    @Override
    public String toString() {
        return "SandboxFile[" + path + ", " + size + " bytes, " + mediaType + (truncated ? ", truncated to " + content.length : "") + "]";
    }

    /**
     * Collects a file read back from a sandbox; {@link #build()} checks it.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private final String path;
        private byte[] content = new byte[0];
        private long size = -1;
        private String mediaType;
        private boolean truncated;

        private Builder(String path) {
            this.path = Objects.requireNonNull(path, "path");
        }

        /**
         * Sets the bytes kept. Default none.
         *
         * @param content copied by {@link #build()}; not null
         * @return this builder
         */
        public Builder content(byte[] content) {
            this.content = Objects.requireNonNull(content, "content");
            return this;
        }

        /**
         * Sets the file's size in the sandbox. Default the length of the content.
         *
         * @param size in bytes; at least the content's length
         * @return this builder
         */
        public Builder size(long size) {
            this.size = size;
            return this;
        }

        /**
         * Sets the media type. Default guessed from the file name.
         *
         * @param mediaType such as {@code text/csv}, or null to guess
         * @return this builder
         */
        public Builder mediaType(String mediaType) {
            this.mediaType = mediaType;
            return this;
        }

        /**
         * Marks the content as cut; it also counts as cut when shorter than the size. Default false.
         *
         * @param truncated true when fewer bytes were kept than the file holds
         * @return this builder
         */
        public Builder truncated(boolean truncated) {
            this.truncated = truncated;
            return this;
        }

        /**
         * Checks and builds the file.
         *
         * @return the file
         * @throws IllegalArgumentException when the path is not a valid relative path or the size is smaller
         *     than the content
         */
        public SandboxFile build() {
            if (size < 0) {
                size = content.length;
            }
            return new SandboxFile(this);
        }
    }
}
