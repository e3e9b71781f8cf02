package dev.sandbox4j.cli.internal;

import dev.sandbox4j.api.SandboxFile;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Writes collected files into {@code --save-dir}. The names are the code's, so untrusted: each path is
 * flattened to one sanitised file name ({@code out/chart.png} becomes {@code out_chart.png}; anything
 * but letters, digits, {@code .}, {@code _} and {@code -} becomes {@code _}; no leading dot), written
 * with CREATE_NEW so nothing in the directory is overwritten or followed (a taken name gets a suffix).
 */
public final class SavedFiles {
    private static final int MAX_NAME = 120;

    private SavedFiles() {
    }

    /** The name each file was saved under, in the files' order. */
    public static List<String> save(Path dir, List<SandboxFile> files) throws IOException {
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException(dir + " is not a directory");
        }
        List<String> names = new ArrayList<>();
        Set<String> used = new HashSet<>();
        for (SandboxFile f : files) {
            String base = sanitise(f.path());
            for (int i = 0; ; i++) {
                String name = i == 0 ? base : suffixed(base, i);
                Path target = dir.resolve(name);
                if (!target.getParent().equals(dir) || !used.add(name)) {
                    continue;
                }
                try {
                    Files.write(target, f.content(), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                            LinkOption.NOFOLLOW_LINKS);
                    names.add(name);
                    break;
                } catch (FileAlreadyExistsException e) {
                    if (i > 1000) {
                        throw e;
                    }
                }
            }
        }
        return names;
    }

    static String sanitise(String path) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < path.length() && b.length() < MAX_NAME; i++) {
            char c = path.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
            b.append(ok ? c : '_');
        }
        if (b.length() == 0 || b.charAt(0) == '.') {
            b.insert(0, '_');
        }
        return b.toString();
    }

    private static String suffixed(String name, int i) {
        int dot = name.lastIndexOf('.');
        return dot > 0 ? name.substring(0, dot) + "-" + i + name.substring(dot) : name + "-" + i;
    }
}
