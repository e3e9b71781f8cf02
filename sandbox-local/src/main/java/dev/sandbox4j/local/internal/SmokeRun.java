package dev.sandbox4j.local.internal;

import dev.sandbox4j.spi.RunIds;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local runner's probe: one run of {@code /usr/bin/true} with the real command line (launcher,
 * seccomp filter, options) in a throwaway sandbox directory, so a machine where bubblewrap cannot make a
 * sandbox is told why (user namespaces, AppArmor, a container's seccomp profile) before any code is given.
 */
final class SmokeRun {
    private static final Logger log = LoggerFactory.getLogger(SmokeRun.class);

    /** Starts a process for an argv (the driver's, with an empty environment). */
    interface Starter {
        Process start(List<String> argv) throws IOException;
    }

    private SmokeRun() {
    }

    static void check(LocalSettings settings, byte[] seccomp, ExecutorService io, Starter starter) throws InterruptedException {
        Path root;
        try {
            root = SandboxDirs.create(settings, "probe" + RunIds.next().substring(0, 8), seccomp);
            SandboxDirs.prepareFs(settings, root);
        } catch (IOException e) {
            throw LocalDriver.config("could not create a sandbox directory under " + settings.workRoot() + ": " + e.getMessage(), e);
        }
        try {
            List<String> argv = new ArrayList<>(BwrapCommand.launcher(settings, root.resolve(SandboxDirs.SECCOMP), List.of()));
            argv.add("--");
            argv.addAll(BwrapCommand.command(settings, 10, List.of("/usr/bin/true")));
            byte[] options = BwrapCommand.encode(BwrapCommand.options(settings, root, false, Map.of(), false));
            Process p;
            try {
                p = starter.start(argv);
            } catch (IOException e) {
                throw LocalDriver.config("bubblewrap at " + settings.bwrap() + " could not be started (" + e.getMessage() + "); "
                        + LocalDriver.INSTALL_HINT, e);
            }
            try {
                try (OutputStream stdin = p.getOutputStream()) {
                    stdin.write(options);
                } catch (IOException ignored) {
                    // reported through the exit code
                }
                Future<String> stderr = io.submit(() -> readBounded(p.getErrorStream(), 4096));
                io.submit(() -> readBounded(p.getInputStream(), 4096));
                if (!p.waitFor(20, TimeUnit.SECONDS)) {
                    throw LocalDriver.config("bubblewrap at " + settings.bwrap() + " did not finish a smoke run in 20 s", null);
                }
                String message;
                try {
                    message = stderr.get(5, TimeUnit.SECONDS).strip();
                } catch (ExecutionException | TimeoutException e) {
                    message = "";
                }
                if (p.exitValue() != 0) {
                    throw LocalDriver.config("bubblewrap at " + settings.bwrap() + " cannot create a sandbox here (exit " + p.exitValue()
                            + (message.isEmpty() ? "" : ": " + message) + "). It needs unprivileged user namespaces:"
                            + " check sysctl user.max_user_namespaces > 0 (and kernel.unprivileged_userns_clone=1 where it exists);"
                            + " on Ubuntu 23.10+ set kernel.apparmor_restrict_unprivileged_userns=0 or install an AppArmor"
                            + " profile for bwrap; inside Docker use a seccomp profile that allows unshare and mount."
                            + " The sandbox's init runs from the work root (" + settings.workRoot() + "): on a noexec mount,"
                            + " set another with LocalSandboxRunner.builder().workRoot(path)."
                            + " If bubblewrap is broken, reinstall it: " + LocalDriver.INSTALL_HINT, null);
                }
            } finally {
                ProcessTree.kill(p);
            }
        } finally {
            try {
                SandboxDirs.delete(root);
            } catch (IOException e) {
                log.warn("could not delete probe directory {}: {}", root, e.getMessage());
            }
        }
    }

    private static String readBounded(InputStream in, int max) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        byte[] buf = new byte[4096];
        int n;
        while ((n = in.read(buf)) != -1) {
            if (b.size() < max) {
                b.write(buf, 0, Math.min(n, max - b.size()));
            }
        }
        return b.toString(StandardCharsets.UTF_8);
    }

}
