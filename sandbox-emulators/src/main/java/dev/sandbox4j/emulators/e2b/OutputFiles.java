package dev.sandbox4j.emulators.e2b;

import dev.sandbox4j.emulators.Machine;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The two files a command's stdout and stderr go to inside the workspace, read on the host while the
 * command runs, in chunks of at most 32 KiB (envd's own chunk size). Memory stays at one chunk
 * whatever the command prints; the emulator's cap on output is in bytes per stream.
 */
final class OutputFiles {
    static final int CHUNK = 32 * 1024;
    private static final String DIR = ".e2b-out";

    /** The files as commands in the sandbox name them. */
    static final class Inside {
        final String dir;
        final String stdout;
        final String stderr;

        Inside(String dir, String stdout, String stderr) {
            this.dir = dir;
            this.stdout = stdout;
            this.stderr = stderr;
        }
    }

    /** Receives a chunk of one stream. */
    interface Sink {
        void accept(boolean stderr, byte[] chunk, int length) throws IOException;
    }

    final Inside inside;
    private final Path stdout;
    private final Path stderr;
    private final byte[] buffer = new byte[CHUNK];
    private long stdoutRead;
    private long stderrRead;

    OutputFiles(Machine workspace, int pid) {
        String name = "cmd-" + pid + "-" + E2bEmulator.randomId(8);
        Path dir = workspace.workDirectory().resolve(DIR);
        this.stdout = dir.resolve(name + ".out");
        this.stderr = dir.resolve(name + ".err");
        String in = workspace.workPath() + "/" + DIR;
        this.inside = new Inside(in, in + "/" + name + ".out", in + "/" + name + ".err");
    }

    /** Where a code cell's source goes, relative to the working directory. */
    String cellFile(String extension) {
        return DIR + "/" + stdout.getFileName().toString().replace(".out", extension);
    }

    void deleteCellFile(String relative) {
        try {
            Files.deleteIfExists(stdout.getParent().getParent().resolve(relative));
        } catch (IOException ignored) {
            // the workspace may be gone already
        }
    }

    long stdoutBytes() {
        return stdoutRead;
    }

    long stderrBytes() {
        return stderrRead;
    }

    /**
     * Passes on what is new in each file, at most one chunk per stream per call.
     *
     * @return whether anything was read
     */
    boolean pump(Sink sink) throws IOException {
        int a = readChunk(stdout, stdoutRead);
        if (a > 0) {
            stdoutRead += a;
            sink.accept(false, buffer, a);
        }
        int b = readChunk(stderr, stderrRead);
        if (b > 0) {
            stderrRead += b;
            sink.accept(true, buffer, b);
        }
        return a > 0 || b > 0;
    }

    /** Passes on everything left, once the command has ended. */
    void drain(Sink sink) throws IOException {
        while (pump(sink)) {
            // until both files are read to their end
        }
    }

    private int readChunk(Path file, long position) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer bb = ByteBuffer.wrap(buffer);
            int n = ch.read(bb, position);
            return Math.max(n, 0);
        } catch (NoSuchFileException e) {
            return 0; // not created yet, or the workspace is gone
        }
    }

    void delete() {
        try {
            Files.deleteIfExists(stdout);
            Files.deleteIfExists(stderr);
        } catch (IOException ignored) {
            // the workspace may be gone already
        }
    }
}
