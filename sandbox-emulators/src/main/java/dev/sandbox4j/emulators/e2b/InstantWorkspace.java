package dev.sandbox4j.emulators.e2b;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.FileEntry;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxFile;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/** The workspace of instant mode: holds nothing, drops writes, finds no file (no local sandbox behind it). */
final class InstantWorkspace implements Workspace {
    /** A directory that cannot exist ({@code /dev/null} is not a directory), so no host file is ever seen. */
    private static final Path NOWHERE = Path.of("/dev/null/instant");
    static final Workspace.Factory FACTORY = (hostNetwork, env) -> new InstantWorkspace();

    private volatile boolean closed;

    @Override
    public void writeFile(String relativePath, byte[] content) {
        // accepted and dropped
    }

    @Override
    public Path workDirectory() {
        return NOWHERE;
    }

    @Override
    public SandboxFile readFile(String relativePath, long maxBytes) throws IOException {
        throw new NoSuchFileException(relativePath);
    }

    @Override
    public List<FileEntry> listFiles(String relativeDirectory) throws IOException {
        if (relativeDirectory.isEmpty()) {
            return List.of();
        }
        throw new NoSuchFileException(relativeDirectory);
    }

    @Override
    public String sandboxPath() {
        return LocalWorkspace.SANDBOX_PATH;
    }

    @Override
    public void hostNetwork(boolean on) {
        // no network to switch
    }

    @Override
    public RunResult exec(Execution execution) {
        throw new IllegalStateException("instant mode answers execs without running them");
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        closed = true;
    }
}
