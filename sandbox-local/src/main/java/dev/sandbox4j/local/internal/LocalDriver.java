package dev.sandbox4j.local.internal;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.InputFile;
import dev.sandbox4j.api.SandboxConfigurationException;
import dev.sandbox4j.api.SandboxException;
import dev.sandbox4j.api.SandboxNotFoundException;
import dev.sandbox4j.api.spi.CreateRequest;
import dev.sandbox4j.api.spi.ExecOutcome;
import dev.sandbox4j.api.spi.OutputSink;
import dev.sandbox4j.api.spi.RunIds;
import dev.sandbox4j.api.spi.SandboxDriver;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bubblewrap driver: a sandbox is a host directory; each exec is a fresh bwrap process over it,
 * so egress can change between execs (the lock-down after setup is just the next exec's flags).
 */
public final class LocalDriver implements SandboxDriver<LocalHandle> {
    private static final Logger log = LoggerFactory.getLogger(LocalDriver.class);
    public static final String PROVIDER = "local";
    static final String INSTALL_HINT = "install it with `apt-get install -y bubblewrap` (`sudo apt-get install -y bubblewrap` when not root)";
    private static final int MAX_ENV_VALUE_BYTES = 100 * 1024;
    private static final int MAX_ENV_TOTAL_BYTES = 512 * 1024;
    private static final long DRAIN_WAIT_SECONDS = 10;

    private static final ExecutorService IO = Executors.newCachedThreadPool(daemon("sandbox4j-local-io"));
    private static final ScheduledExecutorService EXPIRY = expiryScheduler();
    /** Every open local sandbox in this JVM, for the shutdown hook. */
    private static final Set<LocalHandle> ALL = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(LocalDriver::destroyAllAtExit, "sandbox4j-local-shutdown"));
    }

    private final LocalSettings settings;
    private final Capabilities capabilities;
    private final Set<LocalHandle> live = ConcurrentHashMap.newKeySet();
    private final Object probeLock = new Object();
    private volatile boolean probed;

    public LocalDriver(LocalSettings settings) {
        this.settings = settings;
        Capabilities.Builder caps = Capabilities.builder(PROVIDER)
                .egress(Capabilities.Egress.DENY_ALL, Capabilities.Egress.ALLOW_ALL, Capabilities.Egress.LIVE_UPDATE)
                .limits(Capabilities.Limit.LIFETIME)
                .features(Capabilities.Feature.OUTPUT_ON_TIMEOUT, Capabilities.Feature.SEPARATE_STDERR, Capabilities.Feature.SESSIONS,
                        Capabilities.Feature.SETUP_COMMANDS, Capabilities.Feature.INPUT_FILES, Capabilities.Feature.ENV);
        for (Language l : Language.values()) {
            // declared only when the interpreter is installed
            if (Files.isExecutable(BwrapCommand.interpreterPath(settings, l))) {
                caps.languages(l);
            }
        }
        this.capabilities = caps.build();
    }

    public LocalSettings settings() {
        return settings;
    }

    @Override
    public String provider() {
        return PROVIDER;
    }

    @Override
    public Capabilities capabilities() {
        return capabilities;
    }

    /** Open sandboxes created by this driver. */
    public int openSandboxes() {
        return live.size();
    }

    /** The open sandbox with this id, if it is one of this driver's. */
    public java.util.Optional<LocalHandle> handle(String id) {
        return live.stream().filter(h -> h.id().equals(id)).findFirst();
    }

    @Override
    public LocalHandle create(CreateRequest request) throws InterruptedException {
        verify();
        shareNet(request.initialEgress());
        checkEnv(request.spec().env());
        Path root;
        try {
            root = SandboxDirs.create(settings, request.runId());
        } catch (IOException e) {
            throw config("could not create the sandbox directory under " + settings.workRoot() + ": " + e.getMessage(), e);
        }
        LocalHandle h = new LocalHandle("local-" + request.runId(), request.runId(), root, request.initialEgress(),
                request.spec().env(), request.lifetime());
        live.add(h);
        ALL.add(h);
        long lifetimeMs = Math.max(1, request.lifetime().toMillis());
        h.expiry(EXPIRY.schedule(() -> expire(h), lifetimeMs, TimeUnit.MILLISECONDS));
        log.debug("local sandbox {} created in {} (lifetime {})", h.id(), root, request.lifetime());
        return h;
    }

    @Override
    public void writeFiles(LocalHandle h, List<InputFile> files) {
        ensureOpen(h);
        try {
            SandboxDirs.writeFiles(settings, h.work(), files);
        } catch (IOException e) {
            throw SandboxException.builder("could not write input files into local sandbox " + h.id() + ": " + e.getMessage())
                    .provider(PROVIDER).cause(e).build();
        }
    }

    @Override
    public void updateEgress(LocalHandle h, EgressPolicy egress) {
        shareNet(egress);
        ensureOpen(h);
        h.egress(egress);
    }

    /**
     * Kills the process tree of the exec in progress, if any, and leaves the sandbox open: that exec
     * returns as its process died. False when nothing was running.
     */
    public boolean killRunning(LocalHandle h) {
        Process p = h.running();
        if (p == null || !p.isAlive()) {
            return false;
        }
        ProcessTree.kill(p);
        return true;
    }

    @Override
    public ExecOutcome exec(LocalHandle h, Execution e, OutputSink sink) throws InterruptedException {
        Language language = e.language();
        if (!capabilities.supports(language)) {
            throw config(language.id() + " is not available: " + BwrapCommand.interpreterPath(settings, language)
                    + " is not installed (set its path on LocalSandboxRunner.builder())", null);
        }
        long start = System.nanoTime();
        String code = e.code();
        Path codeFile = null;
        List<String> interpreter;
        if (BwrapCommand.needsFile(settings, code)) {
            String name = BwrapCommand.codeFileName(language, RunIds.next().substring(0, 10));
            codeFile = h.work().resolve(name);
            try {
                SandboxDirs.writeFile(settings, codeFile, code.getBytes(StandardCharsets.UTF_8));
            } catch (IOException ex) {
                ensureOpen(h);
                throw SandboxException.builder("could not write the code file into local sandbox " + h.id() + ": "
                        + ex.getMessage()).provider(PROVIDER).cause(ex).build();
            }
            interpreter = BwrapCommand.fileCode(settings, language, BwrapCommand.SANDBOX_DIR + "/" + name);
        } else {
            interpreter = BwrapCommand.inlineCode(settings, language, code);
        }
        try {
            return run(h, e, sink, interpreter, start);
        } finally {
            if (codeFile != null) {
                try {
                    Files.deleteIfExists(codeFile);
                } catch (IOException ignored) {
                    // the directory goes with the sandbox
                }
            }
        }
    }

    private ExecOutcome run(LocalHandle h, Execution e, OutputSink sink, List<String> interpreter, long start)
            throws InterruptedException {
        List<String> argv = new ArrayList<>(BwrapCommand.launcher(settings));
        argv.add("--");
        argv.addAll(BwrapCommand.command(settings, cpuSeconds(e.budget()), interpreter));
        byte[] options = BwrapCommand.encode(BwrapCommand.options(settings, h.root(), shareNet(h.egress()), h.env()));

        Process p;
        synchronized (h) {
            // started under the handle's lock so a concurrent destroy either sees it or refuses it
            ensureOpen(h);
            try {
                p = start(argv);
            } catch (IOException ex) {
                throw SandboxException.builder("could not start bubblewrap (" + settings.bwrap() + "): " + ex.getMessage())
                        .provider(PROVIDER).cause(ex).build();
            }
            h.attach(p);
        }
        AtomicBoolean capped = new AtomicBoolean();
        Future<?> out = null;
        Future<?> err = null;
        try {
            try (OutputStream stdin = p.getOutputStream()) {
                stdin.write(options);
            } catch (IOException ex) {
                // bwrap exited before reading its options; its exit code and stderr say why
                log.debug("local sandbox {}: could not pass options to bwrap: {}", h.id(), ex.getMessage());
            }
            out = IO.submit(new Drainer(p.getInputStream(), sink::stdout, capped, p));
            err = IO.submit(new Drainer(p.getErrorStream(), sink::stderr, capped, p));
            long left = e.budget().toNanos() - (System.nanoTime() - start);
            boolean exited = p.waitFor(Math.max(0, left), TimeUnit.NANOSECONDS);
            if (!exited) {
                ProcessTree.kill(p);
            }
            awaitDrainer(h, out);
            awaitDrainer(h, err);
            int exit = p.exitValue();
            if (capped.get()) {
                return ExecOutcome.outputLimit();
            }
            if (!exited) {
                return ExecOutcome.timedOut();
            }
            if (h.state() != LocalHandle.State.OPEN) {
                return ExecOutcome.killed(exit);
            }
            return ExecOutcome.exited(exit);
        } catch (InterruptedException ie) {
            ProcessTree.kill(p);
            throw ie;
        } finally {
            if (p.isAlive()) {
                ProcessTree.kill(p);
            }
            h.detach(p);
            closeQuietly(p.getInputStream());
            closeQuietly(p.getErrorStream());
        }
    }

    private Process start(List<String> argv) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(argv).directory(new File("/"));
        // an empty environment for bwrap itself: its PID 1 would otherwise expose the JVM's env in /proc/1/environ
        pb.environment().clear();
        return pb.start();
    }

    private static void awaitDrainer(LocalHandle h, Future<?> f) throws InterruptedException {
        try {
            f.get(DRAIN_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException ex) {
            log.warn("local sandbox {}: output reader failed: {}", h.id(), ex.getCause().toString());
        } catch (TimeoutException ex) {
            // cannot happen once the process tree is gone; never hang the caller on it
            log.warn("local sandbox {}: output reader did not finish", h.id());
        }
    }

    /** Reads one stream into the sink; kills the tree when the sink reports the hard cap. */
    private static final class Drainer implements Runnable {
        interface Target {
            boolean accept(byte[] b, int off, int len);
        }

        private final InputStream in;
        private final Target target;
        private final AtomicBoolean capped;
        private final Process process;

        Drainer(InputStream in, Target target, AtomicBoolean capped, Process process) {
            this.in = in;
            this.target = target;
            this.capped = capped;
            this.process = process;
        }

        @Override
        public void run() {
            byte[] buf = new byte[64 * 1024];
            try {
                int n;
                while ((n = in.read(buf)) != -1) {
                    if (!target.accept(buf, 0, n)) {
                        capped.set(true);
                        ProcessTree.kill(process);
                        return;
                    }
                }
            } catch (IOException e) {
                // the stream was closed: the process is gone
            }
        }
    }

    @Override
    public boolean destroy(LocalHandle h) {
        return destroy(h, "closed");
    }

    private boolean destroy(LocalHandle h, String reason) {
        Process p;
        synchronized (h) {
            if (h.state() == LocalHandle.State.GONE) {
                return false;
            }
            p = h.beginDestroy(reason);
        }
        if (p != null) {
            ProcessTree.kill(p);
        }
        try {
            SandboxDirs.delete(h.root());
        } catch (IOException e) {
            throw SandboxException.builder("could not delete local sandbox directory " + h.root() + ": " + e.getMessage())
                    .provider(PROVIDER).retriable(true).cause(e).build();
        }
        h.gone();
        live.remove(h);
        ALL.remove(h);
        return true;
    }

    private void expire(LocalHandle h) {
        try {
            if (destroy(h, "expired after its lifetime of " + h.lifetime())) {
                log.info("local sandbox {} destroyed: its lifetime of {} elapsed before close()", h.id(), h.lifetime());
            }
        } catch (RuntimeException e) {
            log.warn("local sandbox {} expired but could not be destroyed: {}", h.id(), e.getMessage());
        }
    }

    private static void ensureOpen(LocalHandle h) {
        if (h.state() != LocalHandle.State.OPEN) {
            String reason = h.goneReason();
            throw new SandboxNotFoundException(SandboxException.builder("local sandbox " + h.id() + " is gone"
                    + (reason == null ? "" : " (" + reason + ")")).provider(PROVIDER));
        }
    }

    /** Deny-all is an empty network namespace; allow-all shares the host's. Nothing else is enforceable. */
    static boolean shareNet(EgressPolicy egress) {
        if (egress.isDenyAll()) {
            return false;
        }
        if (egress.isAllowAll()) {
            return true;
        }
        throw new UnsupportedPolicyException(PROVIDER, List.of(egress
                + " (the local runner enforces only deny-all and allow-all)"));
    }

    private static void checkEnv(Map<String, String> env) {
        long total = 0;
        for (Map.Entry<String, String> en : env.entrySet()) {
            String v = en.getValue();
            if (v.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("environment variable " + en.getKey() + " contains a NUL character");
            }
            int bytes = v.getBytes(StandardCharsets.UTF_8).length;
            if (bytes > MAX_ENV_VALUE_BYTES) {
                throw new IllegalArgumentException("environment variable " + en.getKey() + " is " + bytes
                        + " bytes; at most " + MAX_ENV_VALUE_BYTES + " fit a process environment (use an input file)");
            }
            total += bytes + en.getKey().length() + 2;
        }
        if (total > MAX_ENV_TOTAL_BYTES) {
            throw new IllegalArgumentException("the environment is " + total + " bytes; at most " + MAX_ENV_TOTAL_BYTES
                    + " fit a process environment (use input files)");
        }
    }

    /** RLIMIT_CPU as a backstop behind the wall-clock budget: generous enough for every core busy all along. */
    static long cpuSeconds(Duration budget) {
        long seconds = Math.max(1, (budget.toMillis() + 999) / 1000);
        return seconds * Runtime.getRuntime().availableProcessors() + 1;
    }

    /**
     * Checks once, with a smoke run of the real command line, that bubblewrap can make a sandbox here.
     *
     * @throws SandboxConfigurationException saying what is missing and how to install it
     */
    public void verify() throws InterruptedException {
        if (probed) {
            return;
        }
        synchronized (probeLock) {
            if (probed) {
                return;
            }
            String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
            if (!os.contains("linux")) {
                throw config("the local runner needs Linux (bubblewrap and user namespaces); this is "
                        + System.getProperty("os.name") + ". Use a cloud provider (e2b, vercel, daytona, modal) instead", null);
            }
            if (!Files.isRegularFile(settings.bwrap()) || !Files.isExecutable(settings.bwrap())) {
                throw config("bubblewrap (bwrap) was not found at " + settings.bwrap() + ". The local runner never runs"
                        + " code without a sandbox: " + INSTALL_HINT + ", or set its path with LocalSandboxRunner.builder().bwrap(path)", null);
            }
            if (!Files.isExecutable(settings.prlimit())) {
                throw config("prlimit was not found at " + settings.prlimit() + ": install util-linux", null);
            }
            if (settings.dropPrivileges() && !Files.isExecutable(settings.setpriv())) {
                throw config("setpriv was not found at " + settings.setpriv() + " (needed to leave root before bwrap):"
                        + " install util-linux", null);
            }
            smokeRun();
            probed = true;
        }
    }

    private void smokeRun() throws InterruptedException {
        Path root;
        try {
            root = SandboxDirs.create(settings, "probe" + RunIds.next().substring(0, 8));
        } catch (IOException e) {
            throw config("could not create a sandbox directory under " + settings.workRoot() + ": " + e.getMessage(), e);
        }
        try {
            List<String> argv = new ArrayList<>(BwrapCommand.launcher(settings));
            argv.add("--");
            argv.addAll(BwrapCommand.command(settings, 10, List.of("/usr/bin/true")));
            byte[] options = BwrapCommand.encode(BwrapCommand.options(settings, root, false, Map.of()));
            Process p;
            try {
                p = start(argv);
            } catch (IOException e) {
                throw config("bubblewrap at " + settings.bwrap() + " could not be started (" + e.getMessage() + "); "
                        + INSTALL_HINT, e);
            }
            try {
                try (OutputStream stdin = p.getOutputStream()) {
                    stdin.write(options);
                } catch (IOException ignored) {
                    // reported through the exit code
                }
                Future<String> stderr = IO.submit(() -> readBounded(p.getErrorStream(), 4096));
                IO.submit(() -> readBounded(p.getInputStream(), 4096));
                if (!p.waitFor(20, TimeUnit.SECONDS)) {
                    throw config("bubblewrap at " + settings.bwrap() + " did not finish a smoke run in 20 s", null);
                }
                String message;
                try {
                    message = stderr.get(5, TimeUnit.SECONDS).strip();
                } catch (ExecutionException | TimeoutException e) {
                    message = "";
                }
                if (p.exitValue() != 0) {
                    throw config("bubblewrap at " + settings.bwrap() + " cannot create a sandbox here (exit " + p.exitValue()
                            + (message.isEmpty() ? "" : ": " + message) + "). It needs unprivileged user namespaces:"
                            + " check sysctl user.max_user_namespaces > 0 (and kernel.unprivileged_userns_clone=1 where it exists);"
                            + " on Ubuntu 23.10+ set kernel.apparmor_restrict_unprivileged_userns=0 or install an AppArmor"
                            + " profile for bwrap; inside Docker use a seccomp profile that allows unshare and mount."
                            + " If bubblewrap is broken, reinstall it: " + INSTALL_HINT, null);
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

    private static SandboxConfigurationException config(String message, Throwable cause) {
        return new SandboxConfigurationException(SandboxException.builder(message).provider(PROVIDER).cause(cause));
    }

    private static void closeQuietly(InputStream in) {
        try {
            in.close();
        } catch (IOException ignored) {
            // nothing to do
        }
    }

    private static void destroyAllAtExit() {
        for (LocalHandle h : ALL) {
            Process p = h.beginDestroy("JVM shutdown");
            if (p != null) {
                // wait for the namespace to be empty before deleting what its processes could still change
                ProcessTree.kill(p);
            }
            try {
                SandboxDirs.delete(h.root());
            } catch (IOException | RuntimeException e) {
                // best effort at exit
            }
        }
    }

    private static ThreadFactory daemon(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    private static ScheduledExecutorService expiryScheduler() {
        ScheduledThreadPoolExecutor s = new ScheduledThreadPoolExecutor(1, daemon("sandbox4j-local-lifetime"));
        s.setRemoveOnCancelPolicy(true);
        return s;
    }
}
