package dev.sandbox4j.emulators.e2b;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Sandbox paths as envd resolves them (relative paths and {@code ~} against the home directory, then
 * cleaned), and where they live in the workspace: the emulated {@code /home/user} is the workspace's
 * working directory; other absolute paths are not kept.
 */
final class Paths {
    private Paths() {
    }

    /** The cleaned absolute path: {@code ""} and {@code ~} are the home, {@code ~/x} and {@code x} are under it. */
    static String resolve(String path) {
        String p = path == null ? "" : path;
        if (p.isEmpty() || p.equals("~")) {
            p = E2bEmulator.HOME;
        } else if (p.startsWith("~/")) {
            p = E2bEmulator.HOME + p.substring(1);
        } else if (!p.startsWith("/")) {
            p = E2bEmulator.HOME + "/" + p;
        }
        Deque<String> parts = new ArrayDeque<>();
        for (String part : p.split("/")) {
            if (part.isEmpty() || part.equals(".")) {
                continue;
            }
            if (part.equals("..")) {
                parts.pollLast();
            } else {
                parts.addLast(part);
            }
        }
        return "/" + String.join("/", parts);
    }

    /** The path relative to the home ({@code ""} for the home itself), or null when it is outside. */
    static String relativeToHome(String absolute) {
        if (absolute.equals(E2bEmulator.HOME)) {
            return "";
        }
        if (absolute.startsWith(E2bEmulator.HOME + "/")) {
            return absolute.substring(E2bEmulator.HOME.length() + 1);
        }
        return null;
    }
}
