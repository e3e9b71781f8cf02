package dev.sandbox4j.emulators.e2b;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Sandbox paths as envd resolves them (relative paths and {@code ~} against the home directory, then
 * cleaned), and where they live in the workspace: the emulated {@code /home/user} is the workspace's
 * working directory, and any other absolute path {@code /p} is kept at {@code .e2b-root/p} inside it.
 *
 * <p>A local sandbox shows its working directory at its own path (e.g. {@code /sandbox}), so commands
 * are rewritten: {@code /home/user} and every absolute path written through {@code /files} become
 * their place inside the sandbox, in argv elements and in {@code bash -c} strings (never in code given
 * to {@code python3 -c} or {@code node -e}).
 */
final class Paths {
    static final String OUTSIDE_ROOT = ".e2b-root";
    private static final Pattern HOME_TOKEN = Pattern.compile(Pattern.quote(E2bEmulator.HOME) + "(?=$|[/\\s'\";:&|)<>`])");

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

    /** Where an absolute sandbox path is kept, relative to the workspace's working directory. */
    static String storage(String absolute) {
        String rel = relativeToHome(absolute);
        if (rel != null) {
            return rel;
        }
        return absolute.equals("/") ? OUTSIDE_ROOT : OUTSIDE_ROOT + absolute;
    }

    /**
     * Rewrites sandbox paths in a command string or argument to where the workspace shows them:
     * {@code /home/user} and each of {@code written} (absolute paths outside the home that were uploaded).
     *
     * @param inside the workspace's working directory as commands see it
     */
    static String rewrite(String s, Set<String> written, String inside) {
        String out = s;
        for (String p : written) { // longest first, so /tmp/a/b wins over /tmp/a
            if (out.contains(p)) {
                out = out.replace(p, inside + "/" + OUTSIDE_ROOT + p);
            }
        }
        Matcher m = HOME_TOKEN.matcher(out);
        return m.find() ? m.replaceAll(Matcher.quoteReplacement(inside)) : out;
    }
}
