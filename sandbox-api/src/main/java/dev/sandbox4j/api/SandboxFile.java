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

    public static Builder builder(String path) {
        return new Builder(path);
    }

    /** Relative to the sandbox's working directory, with {@code /} between its parts. */
    public String path() {
        return path;
    }

    /** The last part of {@link #path()}. */
    public String name() {
        int i = path.lastIndexOf('/');
        return i < 0 ? path : path.substring(i + 1);
    }

    /** The file's size in the sandbox, in bytes (not what was kept). */
    public long size() {
        return size;
    }

    /** A copy of the bytes kept: all of them unless {@link #truncated()}. */
    public byte[] content() {
        return content.clone();
    }

    /** How many bytes were kept. */
    public int contentLength() {
        return content.length;
    }

    /** Guessed from the file name ({@code application/octet-stream} when unknown); never sniffed. */
    public String mediaType() {
        return mediaType;
    }

    /** True when fewer bytes were kept than the file holds. */
    public boolean truncated() {
        return truncated;
    }

    @Override
    public String toString() {
        return "SandboxFile[" + path + ", " + size + " bytes, " + mediaType + (truncated ? ", truncated to " + content.length : "") + "]";
    }

    public static final class Builder {
        private final String path;
        private byte[] content = new byte[0];
        private long size = -1;
        private String mediaType;
        private boolean truncated;

        private Builder(String path) {
            this.path = Objects.requireNonNull(path, "path");
        }

        /** The bytes kept; copied. */
        public Builder content(byte[] content) {
            this.content = Objects.requireNonNull(content, "content");
            return this;
        }

        /** The file's size in the sandbox; default the length of the content. */
        public Builder size(long size) {
            this.size = size;
            return this;
        }

        public Builder mediaType(String mediaType) {
            this.mediaType = mediaType;
            return this;
        }

        public Builder truncated(boolean truncated) {
            this.truncated = truncated;
            return this;
        }

        public SandboxFile build() {
            if (size < 0) {
                size = content.length;
            }
            return new SandboxFile(this);
        }
    }
}
