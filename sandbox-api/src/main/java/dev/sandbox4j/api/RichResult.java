package dev.sandbox4j.api;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * One typed result of a code cell (E2B's code interpreter: a chart as PNG, JPEG or SVG, an HTML
 * table, a JSON value, text), in the order the cell produced them. Binary formats hold their decoded
 * bytes; text formats their UTF-8 bytes ({@link #text()}). Capped like collected files
 * ({@link Execution#collectFileBytes()} each, {@link Execution#collectTotalBytes()} in all). Untrusted:
 * never show HTML or SVG from a cell unsandboxed.
 *
 * @since 0.1.0
 */
public final class RichResult {
    private final String mediaType;
    private final byte[] content;
    private final long size;
    private final boolean mainResult;

    private RichResult(String mediaType, byte[] content, long size, boolean mainResult) {
        this.mediaType = mediaType;
        this.content = content;
        this.size = size;
        this.mainResult = mainResult;
    }

    /**
     * A result of {@code mediaType} whose full size is {@code size}, of which {@code content} was kept.
     *
     * @param mediaType such as {@code image/png}; not null
     * @param content the bytes kept (decoded for binary formats); copied
     * @param size the full size in bytes; raised to the content's length when smaller
     * @param mainResult whether the cell marked it as its main result
     * @return the result
     */
    public static RichResult of(String mediaType, byte[] content, long size, boolean mainResult) {
        Objects.requireNonNull(mediaType, "mediaType");
        byte[] c = content.clone();
        return new RichResult(mediaType, c, Math.max(size, c.length), mainResult);
    }

    /**
     * {@return the media type: {@code image/png}, {@code image/jpeg}, {@code image/svg+xml}, {@code
     * text/html}, {@code application/json}, {@code text/plain}, ...}
     */
    public String mediaType() {
        return mediaType;
    }

    /** {@return a copy of the bytes kept} */
    public byte[] content() {
        return content.clone();
    }

    /** {@return the kept bytes decoded as UTF-8 (meaningful for the text formats)} */
    public String text() {
        return new String(content, StandardCharsets.UTF_8);
    }

    /** {@return the result's full size in bytes (decoded), whatever was kept} */
    public long size() {
        return size;
    }

    /** {@return true when fewer bytes were kept than {@link #size()}} */
    public boolean truncated() {
        return size > content.length;
    }

    /** {@return true when the cell marked it as its main result (the value of its last expression)} */
    public boolean mainResult() {
        return mainResult;
    }

    @Override
    public String toString() {
        return "RichResult[" + mediaType + ", " + size + " bytes" + (truncated() ? ", cut at " + content.length : "")
                + (mainResult ? ", main" : "") + "]";
    }
}
