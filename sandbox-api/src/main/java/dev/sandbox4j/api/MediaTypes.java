package dev.sandbox4j.api;

import java.util.Locale;
import java.util.Map;

/**
 * Media types guessed from a file name's extension, never from its (untrusted) content.
 *
 * @since 0.1.0
 */
public final class MediaTypes {
    /** The media type of bytes of unknown kind, and of every name whose extension is not known here. */
    public static final String OCTET_STREAM = "application/octet-stream";

    private static final Map<String, String> BY_EXTENSION = Map.ofEntries(
            Map.entry("png", "image/png"), Map.entry("jpg", "image/jpeg"), Map.entry("jpeg", "image/jpeg"),
            Map.entry("gif", "image/gif"), Map.entry("webp", "image/webp"), Map.entry("svg", "image/svg+xml"),
            Map.entry("bmp", "image/bmp"), Map.entry("pdf", "application/pdf"), Map.entry("json", "application/json"),
            Map.entry("csv", "text/csv"), Map.entry("tsv", "text/tab-separated-values"), Map.entry("txt", "text/plain"),
            Map.entry("log", "text/plain"), Map.entry("md", "text/markdown"), Map.entry("html", "text/html"),
            Map.entry("htm", "text/html"), Map.entry("xml", "application/xml"), Map.entry("py", "text/x-python"),
            Map.entry("js", "text/javascript"), Map.entry("sh", "application/x-sh"), Map.entry("zip", "application/zip"),
            Map.entry("gz", "application/gzip"), Map.entry("tar", "application/x-tar"), Map.entry("parquet", "application/vnd.apache.parquet"),
            Map.entry("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
            Map.entry("yaml", "application/yaml"), Map.entry("yml", "application/yaml"));

    private MediaTypes() {
    }

    /**
     * {@return the media type for a file name by its extension (ignoring case), {@link #OCTET_STREAM} when
     * the extension is unknown or missing}
     *
     * @param name a file name or path
     */
    public static String guess(String name) {
        int slash = name.lastIndexOf('/');
        int dot = name.lastIndexOf('.');
        if (dot <= slash + 1 || dot == name.length() - 1) {
            return OCTET_STREAM;
        }
        return BY_EXTENSION.getOrDefault(name.substring(dot + 1).toLowerCase(Locale.ROOT), OCTET_STREAM);
    }
}
