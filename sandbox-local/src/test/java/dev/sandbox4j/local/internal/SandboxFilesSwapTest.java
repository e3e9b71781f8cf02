package dev.sandbox4j.local.internal;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.sandbox4j.api.SandboxFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 27, finding 3: a live process (a survivor, in the review) swaps a file for a FIFO and back as
 * fast as it can while the host reads it. (The API serialises reads with execs, and since finding 1 no
 * process of the code outlives its exec, so the swapper here is a host process standing in for one.)
 * Every read returns the file or a typed refusal, each within an upper bound; before, an open that
 * met the FIFO between the type check and the open waited for a writer for ever.
 */
class SandboxFilesSwapTest {
    /** An upper bound per read (the open is given up after 2 s), not a wait. */
    private static final Duration PER_READ = Duration.ofSeconds(15);

    @Test
    void aFileSwappedForAFifoWhileBeingReadIsRefusedPromptly(@TempDir Path work) throws Exception {
        // hard links renamed over the name: no file is made per swap, so the loop runs as fast as renames
        String swapper = "import os, time\n"
                + "os.mkfifo('fifo')\n"
                + "with open('reg', 'w') as f:\n"
                + "    f.write('regular')\n"
                + "os.link('reg', 'target')\n"
                + "os.mkdir('ready')\n"
                + "n = 0\n"
                + "while True:\n"
                + "    os.link('fifo', 't1')\n"
                + "    os.rename('t1', 'target')\n"
                + "    os.link('reg', 't2')\n"
                + "    os.rename('t2', 'target')\n"
                // now and then the regular file stays a moment, so that some reads meet it whole whatever the
                // scheduling (a run on a quiet machine once met only the FIFO in 14 reads)
                + "    n += 1\n"
                + "    if n % 50 == 0:\n"
                + "        time.sleep(0.005)\n";
        Process p = new ProcessBuilder("/usr/bin/python3", "-c", swapper).directory(work.toFile())
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!Files.isDirectory(work.resolve("ready"))) {
                assertTrue(System.nanoTime() < until && p.isAlive(), "the swapper did not start");
                Thread.onSpinWait();
            }
            Map<String, Integer> outcomes = new TreeMap<>();
            // until the race was met a few times (each costs the 2 s the open is given) and the file was read
            // whole at least once, or 2000 reads; at most 10 given-up opens, which bounds the time
            for (int i = 0; i < 2000 && outcomes.getOrDefault("refused: did not open", 0) < 10
                    && !(outcomes.getOrDefault("refused: did not open", 0) >= 3 && outcomes.containsKey("content regular")); i++) {
                String outcome = assertTimeoutPreemptively(PER_READ, () -> {
                    try {
                        SandboxFile f = SandboxFiles.read(work, "target", 1024);
                        return "content " + new String(f.content(), StandardCharsets.UTF_8);
                    } catch (SandboxFiles.Refused e) {
                        String m = e.getMessage();
                        return m.contains("not a regular file") ? "refused: not a regular file"
                                : m.contains("did not open") ? "refused: did not open"
                                : m.contains("still wait on FIFOs") ? "refused: too many stalled" : "other refusal: " + m;
                    } catch (IOException e) {
                        return "error: " + e;
                    }
                }, "a read of a file being swapped for a FIFO did not return");
                outcomes.merge(outcome, 1, Integer::sum);
            }
            for (String o : outcomes.keySet()) {
                if (!o.equals("content regular") && !o.startsWith("refused: ")) {
                    fail("unexpected outcome " + o + " in " + outcomes);
                }
            }
            assertTrue(outcomes.containsKey("content regular") && outcomes.keySet().stream().anyMatch(o -> o.startsWith("refused: ")),
                    "both the file and the FIFO were met: " + outcomes);
            assertTrue(p.isAlive(), "the swapper ran all along");
        } finally {
            p.destroyForcibly();
            p.waitFor(30, TimeUnit.SECONDS);
            // the given-up opens wait on the FIFO's inode: a writer lets them return (and be closed)
            Thread unblock = new Thread(() -> {
                try (java.io.FileOutputStream w = new java.io.FileOutputStream(work.resolve("fifo").toFile())) {
                    w.flush();
                } catch (IOException ignored) {
                    // nothing waited
                }
            });
            unblock.setDaemon(true);
            unblock.start();
            unblock.join(10_000);
            p.destroyForcibly();
            p.waitFor(30, TimeUnit.SECONDS);
        }
    }
}
