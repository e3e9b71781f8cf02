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

    /** A result of {@code mediaType} whose full size is {@code size}, of which {@code content} was kept. */
    public static RichResult of(String mediaType, byte[] content, long size, boolean mainResult) {
        Objects.requireNonNull(mediaType, "mediaType");
        byte[] c = content.clone();
        return new RichResult(mediaType, c, Math.max(size, c.length), mainResult);
    }

    /** {@code image/png}, {@code image/jpeg}, {@code image/svg+xml}, {@code text/html}, {@code application/json}, {@code text/plain}, ... */
    public String mediaType() {
        return mediaType;
    }

    /** A copy of the bytes kept. */
    public byte[] content() {
        return content.clone();
    }

    /** The kept bytes as UTF-8 text (for the text formats). */
    public String text() {
        return new String(content, StandardCharsets.UTF_8);
    }

    /** The result's full size in bytes (decoded), whatever was kept. */
    public long size() {
        return size;
    }

    public boolean truncated() {
        return size > content.length;
    }

    /** Whether the cell marked it as its main result (the value of its last expression). */
    public boolean mainResult() {
        return mainResult;
    }

    @Override
    public String toString() {
        return "RichResult[" + mediaType + ", " + size + " bytes" + (truncated() ? ", cut at " + content.length : "")
                + (mainResult ? ", main" : "") + "]";
    }
}
