package dev.sandbox4j.emulators.e2b;

import dev.sandbox4j.emulators.Machine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Comparator;
import java.util.stream.Stream;

/** A copy of a workspace's regular files (symbolic links are not followed), to restore elsewhere. */
final class Snapshot {
    private static final long MAX_BYTES = 256L * 1024 * 1024;
    private final Path dir;

    private Snapshot(Path dir) {
        this.dir = dir;
    }

    static Snapshot of(Path source) {
        try {
            Path dir = Files.createTempDirectory("e2bemu-snapshot");
            long[] total = {0};
            Files.walkFileTree(source, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    if (attrs.isRegularFile() && total[0] + attrs.size() <= MAX_BYTES) {
                        total[0] += attrs.size();
                        Path target = dir.resolve(source.relativize(file).toString());
                        Files.createDirectories(target.getParent());
                        Files.copy(file, target, StandardCopyOption.REPLACE_EXISTING, LinkOption.NOFOLLOW_LINKS);
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException exc) {
                    return FileVisitResult.CONTINUE; // a file the killed command was still writing
                }
            });
            return new Snapshot(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    void restoreInto(Machine workspace) {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
                workspace.writeFile(dir.relativize(f).toString(), Files.readAllBytes(f));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    void delete() {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temporary directory: best effort
        }
    }
}
