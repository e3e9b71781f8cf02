package dev.sandbox4j.api;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Paths inside a sandbox, as the API takes them: relative to the sandbox's working directory, with
 * {@code /} between parts. Checked before anything is sent: absolute paths, {@code ..}, backslashes,
 * NUL and other control characters are refused; {@code .} and empty parts are dropped. A runner
 * confines further where it can (the local runner follows no symbolic link).
 *
 * @since 0.1.0
 */
public final class SandboxPaths {
    /** Longest path accepted, in characters. */
    public static final int MAX_PATH_LENGTH = 1024;

    private SandboxPaths() {
    }

    /**
     * The normalised relative path ({@code ""} for the working directory itself, from {@code "."} or {@code ""}).
     *
     * @param path relative to the working directory, at most {@link #MAX_PATH_LENGTH} characters
     * @return the parts joined by {@code /}, without {@code .} or empty parts
     * @throws IllegalArgumentException when the path is absolute, climbs out or holds a forbidden character
     */
    public static String normalize(String path) {
        if (path == null) {
            throw new IllegalArgumentException("path is null");
        }
        if (path.length() > MAX_PATH_LENGTH) {
            throw new IllegalArgumentException("path longer than " + MAX_PATH_LENGTH + " characters");
        }
        if (path.startsWith("/")) {
            throw new IllegalArgumentException("path must be relative to the sandbox's working directory: '" + printable(path) + "'");
        }
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            if (c < 0x20 || c == 0x7f || c == '\\') {
                throw new IllegalArgumentException("path holds a control character or a backslash: '" + printable(path) + "'");
            }
        }
        List<String> parts = new ArrayList<>();
        for (String part : path.split("/", -1)) {
            if (part.isEmpty() || part.equals(".")) {
                continue;
            }
            if (part.equals("..")) {
                throw new IllegalArgumentException("path may not contain '..': '" + printable(path) + "'");
            }
            parts.add(part);
        }
        return String.join("/", parts);
    }

    /**
     * {@return the parts of a normalised path, in order; none for the working directory}
     *
     * @param normalized a path as {@link #normalize(String)} returns it
     */
    public static List<String> parts(String normalized) {
        return normalized.isEmpty() ? List.of() : List.of(normalized.split("/"));
    }

    /**
     * A glob over relative paths: {@code *} and {@code ?} within one part, {@code **} for any number of
     * parts. Checked like a path ({@code ..} and absolute globs are refused).
     *
     * @param glob such as {@code out/*.csv} or {@code **}{@code /*.png}
     * @return a pattern matching whole normalised paths
     * @throws IllegalArgumentException when the glob is empty, absolute, climbs out or holds a forbidden
     *     character
     */
    public static Pattern glob(String glob) {
        String g = normalize(glob);
        if (g.isEmpty()) {
            throw new IllegalArgumentException("empty glob");
        }
        StringBuilder re = new StringBuilder();
        String[] parts = g.split("/");
        for (int p = 0; p < parts.length; p++) {
            String part = parts[p];
            boolean last = p == parts.length - 1;
            if (part.equals("**")) {
                re.append(last ? ".*" : "(?:[^/]+/)*");
                continue;
            }
            for (int i = 0; i < part.length(); i++) {
                char c = part.charAt(i);
                if (c == '*') {
                    re.append("[^/]*");
                } else if (c == '?') {
                    re.append("[^/]");
                } else {
                    re.append(Pattern.quote(String.valueOf(c)));
                }
            }
            if (!last) {
                re.append('/');
            }
        }
        return Pattern.compile(re.toString());
    }

    /**
     * {@return true when the glob has no wildcard ({@code *} or {@code ?}), so it names one path}
     *
     * @param glob a path or glob
     */
    public static boolean isLiteral(String glob) {
        return glob.indexOf('*') < 0 && glob.indexOf('?') < 0;
    }

    /**
     * {@return the leading parts of a glob, before its last part, that hold no wildcard: where a walk for it
     * starts; {@code ""} for the working directory}
     *
     * @param glob a path or glob
     * @throws IllegalArgumentException when the glob is absolute, climbs out or holds a forbidden character
     */
    public static String literalPrefix(String glob) {
        List<String> out = new ArrayList<>();
        List<String> parts = parts(normalize(glob));
        for (int i = 0; i < parts.size() - 1; i++) {
            if (!isLiteral(parts.get(i))) {
                break;
            }
            out.add(parts.get(i));
        }
        return String.join("/", out);
    }

    static String printable(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length() && i < 200; i++) {
            char c = s.charAt(i);
            b.append(c < 0x20 || c == 0x7f ? '?' : c);
        }
        return b.toString();
    }
}
