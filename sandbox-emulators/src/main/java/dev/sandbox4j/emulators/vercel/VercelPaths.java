package dev.sandbox4j.emulators.vercel;

import java.util.ArrayDeque;
import java.util.Deque;

/** Vercel paths and where the emulator keeps them under a machine's work directory. */
final class VercelPaths {
    /** The session's working directory on Vercel. */
    static final String SESSION_CWD = "/vercel/sandbox";
    /** Where files uploaded outside the session directory live, inside the machine's work directory. */
    static final String OUTSIDE_DIR = ".vercel-root";

    private VercelPaths() {
    }

    /**
     * Where a Vercel path is stored under the machine's work directory: the session directory maps to it
     * directly ("" is the directory itself); any other absolute path goes under {@value #OUTSIDE_DIR}.
     */
    static String storagePath(String abs) {
        String rel = relative(abs);
        return rel != null ? rel : OUTSIDE_DIR + abs;
    }

    /** Joins and normalises a path; null if it climbs above the root. */
    static String resolve(String base, String name) {
        String joined = name.startsWith("/") ? name : base + "/" + name;
        Deque<String> parts = new ArrayDeque<>();
        for (String p : joined.split("/")) {
            if (p.isEmpty() || p.equals(".")) {
                continue;
            }
            if (p.equals("..")) {
                if (parts.isEmpty()) {
                    return null;
                }
                parts.removeLast();
            } else {
                parts.addLast(p);
            }
        }
        return "/" + String.join("/", parts);
    }

    /** The path relative to the session directory ("" for the directory itself), or null outside it. */
    static String relative(String absolute) {
        if (absolute == null) {
            return null;
        }
        if (absolute.equals(SESSION_CWD)) {
            return "";
        }
        return absolute.startsWith(SESSION_CWD + "/") ? absolute.substring(SESSION_CWD.length() + 1) : null;
    }
}
