package dev.sandbox4j.benchmarks;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.local.LocalSandboxRunner;
import java.time.Duration;
import java.util.Arrays;

/**
 * Files back from a local sandbox: {@code readFile} of a 20 MiB file kept whole, of the same file cut
 * at 1 MiB, and an exec of {@code pass} collecting 20 small files by glob. Prints the median, minimum
 * and maximum of {@code runs} rounds (default 7). Usage: {@code FileReadLatency [runs]}.
 */
public final class FileReadLatency {
    private FileReadLatency() {
    }

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 7;
        String setup = "open('big.bin', 'wb').write(bytes(range(256)) * (20 * 4096))\n"
                + "import os\nos.makedirs('out', exist_ok=True)\n"
                + "for i in range(20):\n    open('out/f%d.txt' % i, 'w').write('x' * 1000)\n";
        try (LocalSandboxRunner runner = LocalSandboxRunner.create();
             Sandbox s = runner.open(SandboxSpec.defaults())) {
            s.exec(Execution.builder(setup).budget(Duration.ofSeconds(60)).build());
            long[] whole = new long[runs];
            long[] cut = new long[runs];
            long[] collect = new long[runs];
            for (int i = 0; i < runs; i++) {
                long t0 = System.nanoTime();
                SandboxFile f = s.readFile("big.bin", 32L << 20);
                whole[i] = System.nanoTime() - t0;
                if (f.contentLength() != 20 << 20 || f.truncated()) {
                    throw new AssertionError(f.toString());
                }
                t0 = System.nanoTime();
                SandboxFile c = s.readFile("big.bin", 1 << 20);
                cut[i] = System.nanoTime() - t0;
                if (!c.truncated() || c.size() != 20 << 20) {
                    throw new AssertionError(c.toString());
                }
                t0 = System.nanoTime();
                RunResult r = s.exec(Execution.builder("pass").collect("out/*.txt").build());
                collect[i] = System.nanoTime() - t0;
                if (r.files().size() != 20) {
                    throw new AssertionError(r.fileProblems().toString());
                }
            }
            print("readFile 20 MiB, kept whole", whole);
            print("readFile 20 MiB, cut at 1 MiB", cut);
            print("exec 'pass' + collect out/*.txt (20 files)", collect);
        }
    }

    private static void print(String what, long[] nanos) {
        long[] ms = Arrays.stream(nanos).map(n -> n / 1_000_000).sorted().toArray();
        System.out.println(what + ": median " + ms[ms.length / 2] + " ms (min " + ms[0] + ", max " + ms[ms.length - 1]
                + ", " + ms.length + " runs)");
    }
}
