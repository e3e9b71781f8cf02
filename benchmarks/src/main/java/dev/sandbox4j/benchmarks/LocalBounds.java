package dev.sandbox4j.benchmarks;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.local.LocalSandboxRunner;
import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Replays the disk, inode, memory and read-only-root attacks of issue 17 against a local runner with
 * its default limits and prints what the kernel let through, and how much the host's file system under
 * the work root changed meanwhile. Usage: {@code LocalBounds} (run as root for the whole-sandbox limits).
 */
public final class LocalBounds {
    private LocalBounds() {
    }

    public static void main(String[] args) throws Exception {
        try (LocalSandboxRunner runner = LocalSandboxRunner.create().verify();
             Sandbox s = runner.open(SandboxSpec.defaults())) {
            System.out.println("enforcement on this machine:");
            runner.enforcement().forEach(l -> System.out.println("  " + l));
            FileStore host = Files.getFileStore(Path.of(System.getProperty("java.io.tmpdir")));
            long hostBefore = used(host);
            // finding 4: 8 files of 255 MiB in the work directory
            print("work dir, 8 x 255 MiB", s.exec(py(FILL + "print(fill('/sandbox', 8, 255))")));
            long hostAfter = used(host);
            print("then /tmp and /dev/shm, 2 x 1 GiB", s.exec(py(FILL + "print(fill('/tmp', 1, 1024), fill('/dev/shm', 1, 1024))")));
            print("free the work dir, then 200,000 files", s.exec(py("import glob, os\n"
                    + "for f in glob.glob('/sandbox/f*'):\n    os.remove(f)\n"
                    + "n = 0\n"
                    + "try:\n"
                    + "    while n < 200000:\n"
                    + "        open('/sandbox/i%d' % n, 'w').close()\n"
                    + "        n += 1\n"
                    + "    print('created', n)\n"
                    + "except OSError as e:\n"
                    + "    print('created', n, 'then', e.strerror)\n")));
            // finding 2: 2 GiB into / and /dev
            print("2 GiB into / and /dev", s.exec(py(FILL + "print(fill('/', 1, 2048), fill('/dev', 1, 2048))")));
            // finding 5: three processes of 1.5 GiB each
            print("three processes of 1536 MiB", s.exec(py(HOGS.replace("SIZE", "1536"))));
            System.out.printf("host file system under %s: %+d MiB during the 8 x 255 MiB write%n",
                    System.getProperty("java.io.tmpdir"), (hostAfter - hostBefore) >> 20);
        }
    }

    private static final String FILL = "import errno\n"
            + "def fill(d, files, mib):\n"
            + "    n = 0\n"
            + "    try:\n"
            + "        for i in range(files):\n"
            + "            with open('%s/f%d-%d' % (d, i, mib), 'wb') as f:\n"
            + "                for j in range(mib):\n"
            + "                    f.write(b'x' * (1 << 20))\n"
            + "                    n += 1\n"
            + "        return '%s: %d MiB written' % (d, n)\n"
            + "    except OSError as e:\n"
            + "        return '%s: %d MiB written, then %s' % (d, n, errno.errorcode[e.errno])\n";

    private static final String HOGS = "import subprocess, sys\n"
            + "child = ('import sys\\n'\n"
            + "    'b = bytearray(SIZE << 20)\\n'\n"
            + "    'for i in range(0, len(b), 4096): b[i] = 1\\n'\n"
            + "    'print(\"held\", flush=True)\\n'\n"
            + "    'sys.stdin.read()\\n')\n"
            + "ps = [subprocess.Popen([sys.executable, '-c', child], stdin=subprocess.PIPE, stdout=subprocess.PIPE,"
            + " stderr=subprocess.DEVNULL) for _ in range(3)]\n"
            + "lines = [p.stdout.readline().strip() for p in ps]\n"
            + "alive = [l == b'held' and p.poll() is None for p, l in zip(ps, lines)]\n"
            + "for p in ps:\n"
            + "    try:\n"
            + "        p.stdin.close()\n"
            + "    except OSError:\n"
            + "        pass\n"
            + "    p.wait()\n"
            + "print('holding at once:', sum(alive), 'of 3; exit codes', [p.returncode for p in ps])\n";

    private static Execution py(String code) {
        return Execution.builder(code).budget(Duration.ofSeconds(120)).build();
    }

    private static void print(String what, RunResult r) {
        System.out.println(what + ": " + r.stdout().strip() + (r.succeeded() ? "" : " [" + r.status() + " " + r.stderr().strip() + "]"));
    }

    private static long used(FileStore fs) throws IOException {
        return fs.getTotalSpace() - fs.getUnallocatedSpace();
    }
}
