package dev.sandbox4j.emulators;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.FileEntry;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.SandboxFile;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The machine of instant mode ({@link HttpEmulator#instant()}): nothing behind it. Writes and
 * directories are accepted and dropped, no file is found (the home lists empty), every command "exits"
 * 0 at once with no output. Handlers that see {@link #instant()} answer without calling it at all.
 *
 * @since 0.1.0
 */
public final class InstantMachine implements Machine {
    /** Opens instant machines; holds nothing. */
    public static final Machine.Factory FACTORY = (hostNetwork, env, lifetime) -> new InstantMachine();

    /** A directory that cannot exist ({@code /dev/null} is no directory), so no host file is ever seen. */
    private static final Path NOWHERE = Path.of("/dev/null/instant");

    private volatile boolean closed;

    @Override
    public Path workDirectory() {
        return NOWHERE;
    }

    @Override
    public void writeFile(String relativePath, byte[] content) {
        // accepted and dropped
    }

    @Override
    public void mkdir(String relativePath) {
        // accepted and dropped
    }

    @Override
    public SandboxFile readFile(String relativePath, long maxBytes) throws NoSuchFileException {
        throw new NoSuchFileException(relativePath);
    }

    @Override
    public List<FileEntry> listFiles(String relativeDirectory) throws NoSuchFileException {
        if (relativeDirectory.isEmpty()) {
            return List.of();
        }
        throw new NoSuchFileException(relativeDirectory);
    }

    @Override
    public void setNetwork(boolean hostNetwork) {
        // no network to switch
    }

    @Override
    public RunResult exec(Execution execution) {
        return RunResult.builder().status(RunStatus.EXITED).exitCode(0).stdout("").stderr("")
                .duration(Duration.ZERO).build();
    }

    @Override
    public boolean instant() {
        return true;
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        closed = true;
    }

    @Override
    public String toString() {
        return "InstantMachine";
    }
}
