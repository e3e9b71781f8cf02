package dev.sandbox4j.emulators.daytona.internal;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Where a path inside an emulated Daytona sandbox lives on the local machine. The Daytona user's home
 * ({@value #HOME}, the daemon's working directory, where relative paths resolve) is the machine's
 * working directory. Any other absolute path (e.g. {@code /tmp/main.py}) is stored under
 * {@value #OUTSIDE} in the working directory and linked into place before each command, where the
 * local sandbox lets a command create it ({@code /tmp} does; {@code /etc} does not).
 */
public final class SandboxPaths {
    /** The default Daytona user's home. */
    public static final String HOME = "/home/daytona";
    /** Where files uploaded outside the home are kept, relative to the working directory. */
    public static final String OUTSIDE = ".daytona-fs";

    private SandboxPaths() {
    }

    /**
     * The absolute, normalized form of a sandbox path ({@code ..} cannot climb above {@code /}).
     *
     * @throws IllegalArgumentException for an empty path or one holding a NUL character
     */
    public static String absolute(String path) {
        if (path == null || path.isEmpty() || path.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("empty path");
        }
        String full = path.startsWith("/") ? path : HOME + "/" + path;
        Deque<String> segments = new ArrayDeque<>();
        for (String s : full.split("/")) {
            if (s.isEmpty() || s.equals(".")) {
                continue;
            }
            if (s.equals("..")) {
                segments.pollLast();
            } else {
                segments.addLast(s);
            }
        }
        return "/" + String.join("/", segments);
    }

    /** The path relative to the home for an absolute path inside it, else null. */
    public static String underHome(String absolute) {
        if (absolute.equals(HOME)) {
            return "";
        }
        return absolute.startsWith(HOME + "/") ? absolute.substring(HOME.length() + 1) : null;
    }

    /**
     * Where the bytes of an upload to {@code path} go, relative to the machine's working directory:
     * the same relative path under the home, else under {@value #OUTSIDE}.
     */
    public static String storage(String path) {
        String abs = absolute(path);
        String home = underHome(abs);
        if (home != null) {
            if (home.isEmpty()) {
                throw new IllegalArgumentException("the home directory itself is not a file");
            }
            return home;
        }
        if (abs.equals("/")) {
            throw new IllegalArgumentException("/ is not a file");
        }
        return OUTSIDE + abs;
    }
}
