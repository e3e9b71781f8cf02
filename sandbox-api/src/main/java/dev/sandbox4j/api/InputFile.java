package dev.sandbox4j.api;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A file written into the sandbox's working directory before any code runs. The path is relative
 * to the working directory, uses {@code /}, and may not climb out of it.
 *
 * @since 0.1.0
 */
public final class InputFile {
    private final String path;
    private final byte[] content;

    private InputFile(String path, byte[] content) {
        this.path = path;
        this.content = content;
    }

    /**
     * A file with the given bytes.
     *
     * @param path relative to the working directory, with {@code /} between parts; no empty, {@code .} or
     *     {@code ..} part, no backslash or NUL
     * @param content copied; not null
     * @return the file
     * @throws IllegalArgumentException when the path is empty, absolute or holds a forbidden part or
     *     character
     */
    public static InputFile of(String path, byte[] content) {
        Objects.requireNonNull(content, "content");
        return new InputFile(checkPath(path), content.clone());
    }

    /**
     * A text file, encoded as UTF-8.
     *
     * @param path relative to the working directory, with {@code /} between parts; no empty, {@code .} or
     *     {@code ..} part, no backslash or NUL
     * @param utf8 the text; not null
     * @return the file
     * @throws IllegalArgumentException when the path is empty, absolute or holds a forbidden part or
     *     character
     */
    public static InputFile of(String path, String utf8) {
        return of(path, utf8.getBytes(StandardCharsets.UTF_8));
    }

    private static String checkPath(String path) {
        if (path == null || path.isEmpty() || path.startsWith("/") || path.contains("\\") || path.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("input file path must be relative and non-empty: '" + path + "'");
        }
        for (String part : path.split("/", -1)) {
            if (part.isEmpty() || part.equals(".") || part.equals("..")) {
                throw new IllegalArgumentException("input file path may not contain empty, '.' or '..' parts: '" + path + "'");
            }
        }
        return path;
    }

    /** {@return the path, relative to the sandbox's working directory} */
    public String path() {
        return path;
    }

    /** {@return a copy of the content} */
    public byte[] content() {
        return content.clone();
    }

    /** {@return the content's length in bytes} */
    public int size() {
        return content.length;
    }

    @Override
    public String toString() {
        return "InputFile[" + path + ", " + content.length + " bytes]";
    }
}
