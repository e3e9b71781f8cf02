package dev.sandbox4j.spi.lifecycle;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.FileEntry;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.api.SandboxPaths;
import dev.sandbox4j.policy.Capabilities;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Collects an execution's files: a literal path is read in one call; a glob walks directories from
 * its literal prefix (symbolic links are never descended or read), bounded in directories and entries
 * so a hostile tree cannot make it list forever. Caps per file, per run and on the number of files.
 */
final class FileCollector {
    /** Directories listed per glob at most. */
    static final int MAX_DIRECTORIES = 256;
    /** Entries looked at per glob at most. */
    static final int MAX_ENTRIES = 20_000;
    private static final int MAX_DEPTH = 32;

    interface Source {
        SandboxFile read(String path, long maxBytes) throws InterruptedException;

        List<FileEntry> list(String directory) throws InterruptedException;
    }

    record Collected(List<SandboxFile> files, List<String> problems) {
        static final Collected NONE = new Collected(List.of(), List.of());
    }

    private final Source source;
    private final Execution execution;

    FileCollector(Source source, Execution execution) {
        this.source = source;
        this.execution = execution;
    }

    /** Refuses, before the code runs, globs the runner could not collect. */
    static void check(Capabilities caps, List<String> globs) {
        if (!caps.supports(Capabilities.Feature.READ_FILES)) {
            throw new UnsupportedOperationException(caps.runner() + " cannot read files back, so it cannot collect " + globs);
        }
        for (String g : globs) {
            if (!SandboxPaths.isLiteral(g) && !caps.supports(Capabilities.Feature.LIST_FILES)) {
                throw new UnsupportedOperationException(caps.runner() + " cannot list files, so it cannot collect the glob " + g
                        + " (name the files instead)");
            }
        }
    }

    Collected collect() throws InterruptedException {
        List<SandboxFile> files = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        long left = execution.collectTotalBytes();
        for (String glob : execution.collect()) {
            List<String> paths = SandboxPaths.isLiteral(glob) ? List.of(glob) : walk(glob, problems);
            if (paths.isEmpty()) {
                problems.add(glob + ": no file matched");
            }
            for (String path : paths) {
                if (!seen.add(path)) {
                    continue;
                }
                if (files.size() >= execution.collectMaxFiles()) {
                    problems.add(path + ": not collected, " + execution.collectMaxFiles() + " files already collected");
                    continue;
                }
                long cap = Math.min(execution.collectFileBytes(), left);
                try {
                    SandboxFile f = source.read(path, cap);
                    left -= f.contentLength();
                    files.add(f);
                    if (f.truncated()) {
                        problems.add(path + ": cut at " + f.contentLength() + " of " + f.size() + " bytes"
                                + (cap < execution.collectFileBytes() ? " (the per-run cap)" : " (the per-file cap)"));
                    }
                } catch (SandboxException e) {
                    problems.add(path + ": " + e.getMessage());
                }
            }
        }
        return new Collected(files, problems);
    }

    private List<String> walk(String glob, List<String> problems) throws InterruptedException {
        Pattern pattern = SandboxPaths.glob(glob);
        int depthLimit = glob.contains("**") ? MAX_DEPTH : SandboxPaths.parts(glob).size();
        String start = SandboxPaths.literalPrefix(glob);
        TreeSet<String> matched = new TreeSet<>();
        Deque<String> dirs = new ArrayDeque<>();
        dirs.add(start);
        int listed = 0;
        int entries = 0;
        while (!dirs.isEmpty()) {
            String dir = dirs.poll();
            if (++listed > MAX_DIRECTORIES) {
                problems.add(glob + ": stopped after listing " + MAX_DIRECTORIES + " directories");
                break;
            }
            List<FileEntry> list;
            try {
                list = source.list(dir);
            } catch (SandboxException e) {
                if (dir.equals(start)) {
                    problems.add(glob + ": " + e.getMessage());
                }
                continue;
            }
            for (FileEntry e : list) {
                if (++entries > MAX_ENTRIES) {
                    problems.add(glob + ": stopped after " + MAX_ENTRIES + " entries");
                    return List.copyOf(matched);
                }
                if (e.isFile() && pattern.matcher(e.path()).matches()) {
                    matched.add(e.path());
                } else if (e.isDirectory() && SandboxPaths.parts(e.path()).size() < depthLimit) {
                    dirs.add(e.path());
                }
            }
        }
        return List.copyOf(matched);
    }
}
