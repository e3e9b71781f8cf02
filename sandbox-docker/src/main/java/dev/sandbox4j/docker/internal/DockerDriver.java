package dev.sandbox4j.docker.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.FileEntry;
import dev.sandbox4j.api.InputFile;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.spi.Attachable;
import dev.sandbox4j.spi.Backoff;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.spi.ExecOutcome;
import dev.sandbox4j.spi.Labelled;
import dev.sandbox4j.spi.ListingScript;
import dev.sandbox4j.spi.OutputSink;
import dev.sandbox4j.spi.RunIds;
import dev.sandbox4j.spi.SandboxDriver;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Docker driver: one container per sandbox, created and started with the whole policy (see
 * {@link ContainerSpec}), one Engine API exec per command, removed (force, with its volume) at teardown; a
 * one-shot's code, where it needs no session, is instead its container's own process ({@link
 * #runsAsFirstProcess}, {@link OneShotRun}), and that container is removed without force.
 * Per exec: create, start (the attached stream), inspect for the exit code (polled with the driver's
 * {@link Backoff} for up to 5 s until the engine has recorded it); a kill is one more exec (see
 * {@link Scripts}).
 */
public final class DockerDriver implements SandboxDriver<DockerHandle> {
    private static final Logger log = LoggerFactory.getLogger(DockerDriver.class);
    public static final String PROVIDER = DockerApi.PROVIDER;
    /** Entries listed per directory at most, as the local runner. */
    static final int MAX_LIST_ENTRIES = 10_000;
    private static final int MAX_LIST_BYTES = 4 << 20;
    /** What the engine accepts as a container name or id; anything else is no container of ours. */
    private static final Pattern CONTAINER_REF = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,254}");
    /** How long an exec's exit code is waited for after its stream ended, and the first and longest delay. */
    static final Duration EXIT_CODE_WAIT = Duration.ofSeconds(5);
    static final Duration EXIT_CODE_FIRST_DELAY = Duration.ofMillis(1);
    static final Duration EXIT_CODE_MAX_DELAY = Duration.ofMillis(50);

    private static final ExecutorService IO = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "sandbox4j-docker-io-" + Counter.N.incrementAndGet());
        t.setDaemon(true);
        return t;
    });
    /** Every open Docker sandbox in this JVM with its driver, for the shutdown hook. */
    private static final Map<DockerHandle, DockerDriver> ALL = new ConcurrentHashMap<>();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(DockerDriver::removeAllAtExit, "sandbox4j-docker-shutdown"));
    }

    private enum Counter {
        ;
        static final AtomicInteger N = new AtomicInteger();
    }

    private final DockerSettings settings;
    private final DockerApi api;
    /** The clock and sleeps of the driver's status polls (real ones outside tests). */
    private final Backoff backoff;
    private final Capabilities capabilities;
    private final Set<DockerHandle> live = ConcurrentHashMap.newKeySet();
    // a lock, not a monitor: the probe makes network calls (no pinned virtual thread on Java 21)
    private final ReentrantLock probeLock = new ReentrantLock();
    private final java.util.function.Consumer<dev.sandbox4j.egress.EgressProxy.Builder> egressProxy;
    /** What the host egress proxy enforces (not DEFAULT_ALLOW_WITH_DENIES: behind a proxy only HTTP and CONNECT leave). */
    static final List<Capabilities.Egress> PROXIED_EGRESS = List.of(Capabilities.Egress.DEFAULT_DENY_WITH_RULES,
            Capabilities.Egress.ALLOW_DOMAINS, Capabilities.Egress.ALLOW_WILDCARD_DOMAINS,
            Capabilities.Egress.ALLOW_CIDRS_IPV4, Capabilities.Egress.ALLOW_CIDRS_IPV6,
            Capabilities.Egress.DENY_CIDRS_IPV4, Capabilities.Egress.DENY_CIDRS_IPV6,
            Capabilities.Egress.DENY_INSIDE_ALLOWED_CIDR, Capabilities.Egress.DENY_OVER_DOMAINS,
            Capabilities.Egress.DOMAINS_WITH_CIDRS, Capabilities.Egress.HEADER_RULES, Capabilities.Egress.HEADER_RULE_SCOPES);
    private volatile String engine;

    public DockerDriver(DockerSettings settings) {
        this(settings, b -> { });
    }

    /**
     * @param egressProxy sets up the builder of each proxied sandbox's host proxy (resolver, limits, upstream
     *        trust); the driver sets its policy and socket
     */
    public DockerDriver(DockerSettings settings,
            java.util.function.Consumer<dev.sandbox4j.egress.EgressProxy.Builder> egressProxy) {
        this(settings, egressProxy, Backoff.builder().build());
    }

    /**
     * The same, with the clock and sleeper its status polls use ({@link Backoff#poll}, {@link
     * Backoff#nanoTime}); tests inject fakes, so that no real time passes.
     */
    DockerDriver(DockerSettings settings, java.util.function.Consumer<dev.sandbox4j.egress.EgressProxy.Builder> egressProxy,
            Backoff backoff) {
        this.settings = settings;
        this.egressProxy = java.util.Objects.requireNonNull(egressProxy, "egressProxy");
        this.backoff = java.util.Objects.requireNonNull(backoff, "backoff");
        this.api = new DockerApi(settings);
        this.capabilities = Capabilities.builder(PROVIDER)
                .egress(Capabilities.Egress.DENY_ALL, Capabilities.Egress.ALLOW_ALL)
                // a lock-down to deny-all or a list (updateEgress); checkLockDown refuses what cannot be shown
                .egress(Capabilities.Egress.LIVE_UPDATE)
                // lists through the host proxy (DockerEgress); the image needs python3 for the forwarder
                .egress(PROXIED_EGRESS.toArray(new Capabilities.Egress[0]))
                // NETWORK: counted by the sandbox's egress proxies, as its lists are (ContainerSpec.networkAllowance
                // refuses it with allow-all, whose traffic goes past them)
                .limits(Capabilities.Limit.LIFETIME, Capabilities.Limit.MEMORY, Capabilities.Limit.VCPUS, Capabilities.Limit.DISK,
                        Capabilities.Limit.NETWORK)
                .features(Capabilities.Feature.OUTPUT_ON_TIMEOUT, Capabilities.Feature.SEPARATE_STDERR, Capabilities.Feature.SESSIONS,
                        Capabilities.Feature.SETUP_COMMANDS, Capabilities.Feature.INPUT_FILES, Capabilities.Feature.ENV,
                        Capabilities.Feature.READ_FILES, Capabilities.Feature.LIST_FILES, Capabilities.Feature.STREAMING,
                        Capabilities.Feature.ATTACH)
                // the image is documented to hold python3, node and bash; a missing one fails with exit 127 and says so
                .languages(Language.values())
                .build();
    }

    public DockerSettings settings() {
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

    /** The engine's version line, after {@link #verify()}; null before. */
    public String engine() {
        return engine;
    }

    /** Containers and volumes on the engine that carry the run-id label (any runner's), for leak checks. */
    public int labelledResources() throws InterruptedException {
        return labelledResources(null);
    }

    /** Containers and volumes on the engine labelled with this run id (any when null), running or not. */
    public int labelledResources(String runId) throws InterruptedException {
        return api.listByLabel(CreateRequest.RUN_ID_LABEL, runId).size()
                + api.volumesByLabel(CreateRequest.RUN_ID_LABEL, runId).size();
    }

    /**
     * Checks once that the engine answers and holds the image.
     *
     * @throws SandboxConfigurationException saying what to start, or the pull command
     */
    public void verify() throws InterruptedException {
        if (engine != null) {
            return;
        }
        probeLock.lock();
        try {
            if (engine != null) {
                return;
            }
            String version;
            try {
                version = api.version();
            } catch (dev.sandbox4j.api.exception.SandboxAuthenticationException | dev.sandbox4j.api.exception.SandboxRateLimitException e) {
                throw e; // an engine (or a proxy in front of it) that answers and refuses: not "start Docker"
            } catch (SandboxException e) {
                throw config("no Docker engine answers at " + api.where() + " (" + e.getMessage() + "): start Docker Desktop,"
                        + " Colima or Podman (on Linux, `dockerd`), or point DOCKER_HOST at a running engine", e);
            }
            if (!api.hasImage(settings.image())) {
                throw missingImage();
            }
            engine = version;
            log.debug("docker engine at {}: {}; image {}", api.where(), version, settings.image());
            sweepAtStart();
        } finally {
            probeLock.unlock();
        }
    }

    private SandboxConfigurationException missingImage() {
        return config("the image " + settings.image() + " is not on the Docker engine at " + api.where() + ": pull it once with"
                + " `docker pull " + settings.image() + "` (the runner never pulls an image by itself), or choose another with"
                + " DockerSandboxRunner.builder().image(...) or SANDBOX4J_DOCKER_IMAGE", null);
    }

    @Override
    public DockerHandle create(CreateRequest request) throws InterruptedException {
        // policy first: nothing is called for a spec the runner refuses
        com.fasterxml.jackson.databind.node.ObjectNode body = ContainerSpec.body(settings, request);
        checkEnv(request.spec().env());
        dev.sandbox4j.egress.NetworkAllowance allowance = ContainerSpec.networkAllowance(settings, request);
        EgressPolicy setupEgress = request.initialEgress();
        EgressPolicy codeEgress = request.spec().egress();
        if (DockerEgress.proxied(setupEgress)) {
            capabilities.check(setupEgress, dev.sandbox4j.policy.Limits.defaults());
        }
        checkLockDown(setupEgress, codeEgress);
        dev.sandbox4j.api.Execution first = request.firstProcess().orElse(null);
        if (first != null && !firstProcessFits(request.spec(), first)) {
            throw new IllegalArgumentException("docker: this create cannot run its execution as the container's first process"
                    + " (ask runsAsFirstProcess first)");
        }
        verify();
        DockerEgress channel = null;
        if (DockerEgress.needed(setupEgress, codeEgress)) {
            try {
                channel = DockerEgress.open(egressProxy, setupEgress,
                        !setupEgress.headerRules().isEmpty() || !codeEgress.headerRules().isEmpty(), allowance);
            } catch (java.io.IOException e) {
                throw config("could not start the egress proxy: " + e.getMessage(), e);
            }
            channel.apply(body, ContainerSpec.lifetimeSeconds(request));
        }
        String name = name(request.runId());
        String id;
        try {
            id = api.createContainer(name, body);
        } catch (RuntimeException e) {
            if (channel != null) {
                channel.close();
            }
            if (e instanceof SandboxException && ((SandboxException) e).httpStatus().orElse(0) == 404) {
                engine = null; // checked again next time
                throw missingImage();
            }
            throw e;
        }
        DockerHandle h = new DockerHandle(name, request.runId(), id, request.initialEgress());
        h.egressChannel(channel);
        live.add(h);
        ALL.put(h, this);
        if (first != null) {
            // created, not started: no code has run; the handle's one exec starts it (OneShotRun)
            h.firstProcess(first);
            log.debug("docker sandbox {} created for a one-shot ({}, network {}, lifetime {})", name, id,
                    ContainerSpec.networkMode(settings, request.initialEgress()), request.lifetime());
            return h;
        }
        try {
            api.start(id);
            if (channel != null) {
                awaitForwarder(h);
            }
        } catch (SandboxException e) {
            // a container that never started ran nothing: remove it, and the lifecycle sees a create that failed
            try {
                destroy(h);
            } catch (RuntimeException ex) {
                log.warn("docker sandbox {} did not start and could not be removed: {}", name, ex.getMessage());
                // it may still be there: the lifecycle looks it up by run id instead of trusting "failed"
                throw e.toBuilder().retriable(false).requestMayHaveSucceeded(true).build();
            }
            throw e;
        }
        log.debug("docker sandbox {} started ({}, network {}, lifetime {})", name, id, ContainerSpec.networkMode(settings,
                request.initialEgress()), request.lifetime());
        return h;
    }

    /**
     * Yes when the one-shot needs nothing but its container: no input files, setup commands or lock-down
     * (the lifecycle asks only then), no files to collect afterwards (the work directory is a tmpfs that
     * goes with the container's process), code that fits the command line (no NUL, at most the argv
     * limit: no code file), and deny-all or allow-all egress (no proxy or forwarder: those need an exec
     * before the code). The code then runs as the container's own process under Docker's init, as the
     * code's user, with every other setting of a session's container ({@link ContainerSpec}).
     */
    @Override
    public boolean runsAsFirstProcess(SandboxSpec spec, Execution execution) {
        return oneShotAsContainerProcess && firstProcessFits(spec, execution);
    }

    private volatile boolean oneShotAsContainerProcess = true;

    /** Off: every one-shot's code runs as an exec in a session's container ({@code Builder.oneShotAsContainerProcess}). */
    public void oneShotAsContainerProcess(boolean on) {
        this.oneShotAsContainerProcess = on;
    }

    private boolean firstProcessFits(SandboxSpec spec, Execution e) {
        String code = e.code();
        return spec.files().isEmpty() && spec.setupCommands().isEmpty() && !spec.needsLockDown()
                && e.collect().isEmpty() && !DockerEgress.needed(spec.egress(), spec.egress())
                && code.indexOf('\0') < 0 && code.getBytes(StandardCharsets.UTF_8).length <= settings.argvLimitBytes();
    }

    static String name(String runId) {
        return "sandbox4j-" + runId;
    }

    @Override
    public List<DockerHandle> findByRunId(String runId) throws InterruptedException {
        List<DockerHandle> out = new ArrayList<>();
        for (DockerApi.Listed c : api.listByLabel(CreateRequest.RUN_ID_LABEL, runId)) {
            if (runId.equals(c.labels.get(CreateRequest.RUN_ID_LABEL))) {
                out.add(new DockerHandle(c.name, runId, c.id, null));
            }
        }
        return out;
    }

    @Override
    public List<Labelled<DockerHandle>> listLabelled(String owner) throws InterruptedException {
        List<Labelled<DockerHandle>> out = new ArrayList<>();
        for (DockerApi.Listed c : api.listByLabel(CreateRequest.RUN_ID_LABEL, null)) {
            String runId = c.labels.get(CreateRequest.RUN_ID_LABEL);
            if (runId == null || (owner != null && !owner.equals(c.labels.get(CreateRequest.OWNER_LABEL)))) {
                continue;
            }
            out.add(new Labelled<>(new DockerHandle(c.name, runId, c.id, null), c.labels));
        }
        return out;
    }

    /**
     * {@code GET /containers/{id}/json} (the id or the name {@code sandbox4j-<run id>}) and
     * {@code GET /volumes/{name}} for its work volume; the engine's report of the policy is compared
     * with a create for {@code expected} ({@link ContainerReport}). Read-only.
     */
    @Override
    public Attachable<DockerHandle> attach(String sandboxId, SandboxSpec expected) throws InterruptedException {
        if (!CONTAINER_REF.matcher(sandboxId).matches()) {
            throw new SandboxNotFoundException(SandboxException.builder("docker: '" + (sandboxId.length() > 80
                    ? sandboxId.substring(0, 80) + "..." : sandboxId) + "' is not a container name or id").provider(PROVIDER));
        }
        verify();
        JsonNode inspect = api.inspect(sandboxId);
        if (inspect == null) {
            throw new SandboxNotFoundException(SandboxException.builder("docker: no container " + sandboxId + " on the engine at "
                    + api.where()).provider(PROVIDER));
        }
        Map<String, String> labels = ContainerReport.labels(inspect);
        String name = inspect.path("Name").asText("").replaceFirst("^/", "");
        DockerHandle h = new DockerHandle(name.isEmpty() ? sandboxId : name, labels.get(CreateRequest.RUN_ID_LABEL),
                inspect.path("Id").asText(sandboxId), expected.egress());
        // registered as a create's handle is, so the shutdown hook removes it; release() undoes it on a refusal
        live.add(h);
        ALL.put(h, this);
        Attachable.Builder<DockerHandle> b = Attachable.builder(h).labels(labels)
                .state(ContainerReport.state(inspect), ContainerReport.running(inspect));
        String volume = ContainerReport.workVolume(inspect);
        try {
            ContainerReport.compare(settings, expected, inspect, volume == null ? null : api.inspectVolume(volume),
                    Instant.now(), b);
        } catch (RuntimeException | InterruptedException e) {
            release(h);
            throw e;
        }
        return b.build();
    }

    @Override
    public void release(DockerHandle h) {
        boolean ours = live.remove(h);
        ALL.remove(h);
        // a list's proxy lives in this JVM and goes with the handle: the detached container keeps no route out
        closeEgress(h);
        if (ours && h.state() == DockerHandle.State.OPEN) {
            markDetached(h);
        }
    }

    /** The file whose presence says a container was detached (handed on), so no sweep removes it for its creator's death. */
    static final String DETACHED_MARK = "/dev/shm/.sandbox4j-detached";

    /**
     * A detached container may be attached by another JVM after its creator is gone: the root helper marks
     * it (root's file in the sticky /dev/shm, which code cannot remove; code that makes one first only keeps
     * its container from an early sweep, and the lifetime still ends it). Best effort: unmarked, it may be
     * swept once its creator is gone.
     */
    private void markDetached(DockerHandle h) {
        boolean interrupted = Thread.interrupted();
        try {
            Captured c = capture(h, ContainerSpec.SUPERVISOR_USER, List.of("/bin/sh", "-c", ": > " + DETACHED_MARK), 0);
            if (c.exit() != 0) {
                log.warn("docker sandbox {}: could not mark it detached (exit {}); a sweep may remove it once this JVM is gone",
                        h.id(), c.exit());
            }
        } catch (SandboxException | InterruptedException e) {
            interrupted |= e instanceof InterruptedException;
            log.warn("docker sandbox {}: could not mark it detached ({}); a sweep may remove it once this JVM is gone",
                    h.id(), e.getMessage());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private final java.util.concurrent.atomic.AtomicBoolean sweptAtStart = new java.util.concurrent.atomic.AtomicBoolean();

    /** The first verified contact with the engine sweeps what JVMs that are gone left behind; never fails the caller. */
    private void sweepAtStart() {
        if (!sweptAtStart.compareAndSet(false, true)) {
            return;
        }
        try {
            dev.sandbox4j.api.SweepResult r = sweepGoneOwners();
            if (!r.destroyed().isEmpty() || !r.failed().isEmpty()) {
                log.info("docker: swept what JVMs that are gone left on the engine at {}: {}", api.where(), r);
            }
        } catch (SandboxException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            log.warn("docker: the sweep of containers left by JVMs that are gone failed: {}", e.getMessage());
        }
    }

    /**
     * Removes the containers and work volumes whose creating JVM is provably gone ({@link JvmOwner}): only
     * those carrying this library's run-id label and the JVM label, naming this host, boot and pid namespace;
     * never one marked detached (see {@link #release}), never a volume a container still uses.
     */
    public dev.sandbox4j.api.SweepResult sweepGoneOwners() throws InterruptedException {
        List<String> destroyed = new ArrayList<>();
        List<String> gone = new ArrayList<>();
        List<String> failed = new ArrayList<>();
        int listed = 0;
        if (JvmOwner.current().isPresent()) {
            for (DockerApi.Listed c : api.listByLabel(JvmOwner.LABEL, null)) {
                if (c.labels.get(CreateRequest.RUN_ID_LABEL) == null || !JvmOwner.provablyGone(c.labels.get(JvmOwner.LABEL))) {
                    continue; // not ours, or its creator may still run: never trust the engine's filter alone
                }
                listed++;
                try {
                    if ("running".equals(c.state) && detached(c.id)) {
                        continue;
                    }
                    (api.remove(c.id) ? destroyed : gone).add(c.name);
                } catch (SandboxException e) {
                    failed.add(c.name);
                }
            }
            for (DockerApi.Listed v : api.volumesWithLabels(JvmOwner.LABEL)) {
                if (v.labels.get(CreateRequest.RUN_ID_LABEL) == null || !JvmOwner.provablyGone(v.labels.get(JvmOwner.LABEL))) {
                    continue;
                }
                try {
                    Boolean removed = api.removeVolume(v.name);
                    if (Boolean.TRUE.equals(removed)) {
                        destroyed.add("volume " + v.name);
                    }
                } catch (SandboxException e) {
                    failed.add("volume " + v.name);
                }
            }
        }
        return dev.sandbox4j.api.SweepResult.builder().listed(listed).destroyed(destroyed).alreadyGone(gone).failed(failed).build();
    }

    /** Whether the container carries the detached mark (written by root, so code cannot remove it). */
    private boolean detached(String containerId) throws InterruptedException {
        DockerHandle probe = new DockerHandle(containerId, null, containerId, null);
        Captured c = capture(probe, ContainerSpec.SUPERVISOR_USER, List.of("/bin/sh", "-c",
                "[ -f " + DETACHED_MARK + " ] && [ \"$(stat -c %u " + DETACHED_MARK + ")\" = 0 ]"), 0);
        return c.exit() == 0;
    }

    @Override
    public void writeFiles(DockerHandle h, List<InputFile> files) throws InterruptedException {
        ensureOpen(h);
        api.putArchive(h.containerId(), DockerSettings.WORK_DIR, Tar.of(files, Integer.parseInt(settings.uid()),
                Integer.parseInt(settings.gid())));
    }

    @Override
    public SandboxFile readFile(DockerHandle h, String path, long maxBytes) throws InterruptedException {
        ensureOpen(h);
        int cap = (int) Math.min(maxBytes, Integer.MAX_VALUE - 16);
        Captured c = capture(h, Scripts.shell(Scripts.READ, path, Integer.toString(cap)), cap);
        String err = c.stderr().strip();
        if (c.exit != 0) {
            throw fileError(h, Scripts.refusal(c.exit, path, err));
        }
        long size;
        try {
            size = Long.parseLong(err);
        } catch (NumberFormatException e) {
            throw fileError(h, path + ": could not be read (" + err + ")");
        }
        byte[] content = c.stdout.toByteArray();
        size = Math.max(size, content.length);
        return SandboxFile.builder(path).content(content).size(size).truncated(size > content.length).build();
    }

    @Override
    public List<FileEntry> listFiles(DockerHandle h, String directory) throws InterruptedException {
        ensureOpen(h);
        Captured c = capture(h, Scripts.shell(Scripts.LIST, directory), MAX_LIST_BYTES);
        if (c.exit != 0 && !c.capped) {
            throw fileError(h, Scripts.refusal(c.exit, directory.isEmpty() ? "." : directory, c.stderr().strip()));
        }
        return ListingScript.entries(c.stdout.toByteArray(), directory, MAX_LIST_ENTRIES);
    }

    private static SandboxException fileError(DockerHandle h, String message) {
        return SandboxException.builder("docker sandbox " + h.id() + ": " + message).provider(PROVIDER).build();
    }

    /**
     * Whether the network mode's interface can be taken from a live container: {@code host} (the host's own
     * namespace), {@code none} and {@code container:<id>} (another's namespace) cannot; the engine answers
     * "container cannot be disconnected from host network or connected to host network" for the first.
     */
    public static boolean disconnectable(String networkMode) {
        return !networkMode.equals("host") && !networkMode.equals("none") && !networkMode.startsWith("container:");
    }

    /**
     * Refuses, before any call, a setup egress the runner cannot lock down to the code's: a code egress wider
     * than the container's network (an allow-all code egress after any other setup egress: the engine
     * cannot give a container on network {@code none} an interface), and an allow-all setup egress on a
     * network mode nothing can disconnect ({@link #disconnectable}).
     */
    void checkLockDown(EgressPolicy setupEgress, EgressPolicy codeEgress) {
        if (setupEgress.equals(codeEgress)) {
            return;
        }
        List<String> v = new ArrayList<>();
        if (codeEgress.isAllowAll()) {
            v.add("a lock-down from " + setupEgress + " to allow-all (the Docker runner cannot give a live container a"
                    + " network it was created without: use allow-all for the setup too)");
        } else {
            ContainerSpec.networkMode(settings, codeEgress); // refuses what the code's egress cannot be at all
            if (DockerEgress.proxied(codeEgress)) {
                capabilities.check(codeEgress, dev.sandbox4j.policy.Limits.defaults());
            }
            if (setupEgress.isAllowAll() && !disconnectable(settings.allowAllNetwork())) {
                v.add("an allow-all setup egress on the '" + settings.allowAllNetwork() + "' network mode before a"
                        + " lock-down (the engine cannot disconnect a container from it, so the code would keep the"
                        + " setup's network: make the setup egress a domain or CIDR list, which goes through the"
                        + " runner's proxy, or run allow-all on a bridge network, DockerSandboxRunner.builder()"
                        + ".allowAllNetwork(\"bridge\"))");
            }
        }
        if (!v.isEmpty()) {
            throw new UnsupportedPolicyException(PROVIDER, v);
        }
    }

    /**
     * The lock-down after trusted setup, before the first line of the code, in this order: every process of
     * the code's uid (the setup ran as it) is killed and shown gone ({@link #killTree}; when that cannot be
     * shown the container is killed and this fails); the proxy of the setup's policy is closed with every
     * connection it holds, and what it relayed counted against the sandbox's network allowance; an allow-all
     * setup's container is disconnected from each network it is on; the engine's report must then show it on
     * no network but {@code none}; last, a proxy for the code's list starts on the same socket with what is
     * left of the allowance (none for deny-all, nor when nothing is left). Any failure throws, and the lifecycle tears the sandbox
     * down: no code runs under a lock-down that was not shown.
     */
    @Override
    public void updateEgress(DockerHandle h, EgressPolicy egress) throws InterruptedException {
        ensureOpen(h);
        EgressPolicy before = h.egress();
        DockerEgress channel = h.egressChannel();
        if (egress.isAllowAll() || (DockerEgress.proxied(egress) && channel == null)) {
            // checkLockDown refused this at the create; a handle from elsewhere (attach) has no channel
            throw new UnsupportedPolicyException(PROVIDER, List.of("a lock-down of docker sandbox " + h.id() + " from "
                    + before + " to " + egress + " (it was not created for it)"));
        }
        killTree(h);
        ensureOpen(h); // killTree killed the container when it could not show the setup's processes gone
        if (channel != null) {
            channel.stopProxy();
        }
        JsonNode inspect = api.inspect(h.containerId());
        if (inspect == null) {
            throw lockDownFailed(h, "the container is gone", null);
        }
        for (String network : networks(inspect)) {
            try {
                api.disconnect(network, h.containerId());
            } catch (SandboxException e) {
                throw lockDownFailed(h, "the engine did not disconnect it from network " + network, e);
            }
            log.debug("docker sandbox {}: disconnected from network {}", h.id(), network);
        }
        if (!networks(inspect).isEmpty()) {
            inspect = api.inspect(h.containerId());
        }
        List<String> left = inspect == null ? List.of() : networks(inspect);
        if (inspect == null || !inspect.path("State").path("Running").asBoolean(false) || !left.isEmpty()) {
            throw lockDownFailed(h, inspect == null ? "the container is gone" : !left.isEmpty()
                    ? "the engine still reports it on network(s) " + left : "the container no longer runs", null);
        }
        if (channel != null) {
            try {
                channel.lockDown(egress);
            } catch (java.io.IOException | RuntimeException e) {
                throw lockDownFailed(h, "the egress proxy of the code's policy did not start (" + e.getMessage() + ")", e);
            }
        }
        h.egress(egress);
    }

    /** The networks the engine reports the container on, but {@code none} (loopback alone). */
    static List<String> networks(JsonNode inspect) {
        List<String> out = new ArrayList<>();
        inspect.path("NetworkSettings").path("Networks").fieldNames().forEachRemaining(n -> {
            if (!n.equals("none")) {
                out.add(n);
            }
        });
        return out;
    }

    private static SandboxException lockDownFailed(DockerHandle h, String why, Throwable cause) {
        return SandboxException.builder("docker sandbox " + h.id() + ": the lock-down after setup failed: " + why
                + "; no code ran").provider(PROVIDER).cause(cause).build();
    }

    @Override
    public ExecOutcome exec(DockerHandle h, Execution e, OutputSink sink) throws InterruptedException {
        ensureOpen(h);
        long start = System.nanoTime();
        if (h.oneShot()) {
            if (h.firstProcess() != e) {
                throw new IllegalStateException("docker sandbox " + h.id() + " runs its one-shot's execution, no other");
            }
            return new OneShotRun(this, h, sink).run(e.budget().toNanos(), start);
        }
        String code = e.code();
        String codeFile = null;
        List<String> command;
        if (code.indexOf('\0') >= 0 || code.getBytes(StandardCharsets.UTF_8).length > settings.argvLimitBytes()) {
            String name = ".sandbox4j-code-" + RunIds.next().substring(0, 10) + Scripts.extension(e.language());
            api.putArchive(h.containerId(), DockerSettings.WORK_DIR, Tar.of(List.of(InputFile.of(name,
                    code.getBytes(StandardCharsets.UTF_8))), Integer.parseInt(settings.uid()), Integer.parseInt(settings.gid())));
            codeFile = DockerSettings.WORK_DIR + "/" + name;
            command = Scripts.file(e.language(), codeFile);
        } else {
            command = Scripts.inline(e.language(), code);
        }
        List<String> argv = Scripts.shell(Scripts.WRAP);
        argv.addAll(command);
        try {
            return new ExecRun(this, h, sink).run(argv, e.budget().toNanos() - (System.nanoTime() - start));
        } finally {
            if (codeFile != null && h.state() == DockerHandle.State.OPEN) {
                try {
                    capture(h, List.of("rm", "-f", "--", codeFile), 0);
                } catch (RuntimeException | InterruptedException ex) {
                    if (ex instanceof InterruptedException) {
                        Thread.currentThread().interrupt();
                    }
                    log.debug("docker sandbox {}: could not remove the code file: {}", h.id(), ex.toString());
                }
            }
        }
    }

    DockerApi api() {
        return api;
    }

    static ExecutorService io() {
        return IO;
    }

    /**
     * Kills every process of the code's user in the container and checks none is left, from an exec as root
     * with CAP_KILL that the code cannot signal or alter ({@link Scripts#KILL}); when that cannot be shown
     * (the kill exec fails, cannot start, or finds survivors), kills the container itself and marks the
     * sandbox gone: fail closed. Never throws; runs with the interrupt flag cleared (and restores it).
     */
    void killTree(DockerHandle h) {
        boolean interrupted = Thread.interrupted();
        try {
            String why = null;
            // a caller may interrupt again while the kill runs (a cancelled future): the kill still goes on
            for (int attempt = 0; attempt < 3; attempt++) {
                try {
                    Captured c = capture(h, ContainerSpec.SUPERVISOR_USER, Scripts.shell(Scripts.KILL, settings.uid()), 0);
                    if (c.exit == 0 && !c.capped()) { // any stdout means something else wrote there: no proof
                        return;
                    }
                    why = "processes of the code survived the kill (exit " + c.exit + ")";
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                    why = "the kill was interrupted";
                } catch (SandboxException e) {
                    why = "the kill could not run (" + e.getMessage() + ")";
                    break;
                }
            }
            killContainer(h, why);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Kills the whole container (its init, so everything in it): the sandbox is gone from then on. */
    void killContainer(DockerHandle h, String why) {
        boolean interrupted = Thread.interrupted();
        try {
            h.gone("killed: " + why);
            log.warn("docker sandbox {}: {}; the container is killed (the sandbox is gone)", h.id(), why);
            try {
                api.kill(h.containerId());
            } catch (SandboxException | InterruptedException e) {
                log.warn("docker sandbox {}: the container could not be killed ({}); teardown removes it", h.id(), e.getMessage());
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** What a helper exec printed, and its exit status. */
    record Captured(int exit, ByteArrayOutputStream stdout, ByteArrayOutputStream stderrBytes, boolean capped) {
        String stderr() {
            return stderrBytes.toString(StandardCharsets.UTF_8);
        }
    }

    /** Runs a fixed helper command as the code's user and keeps at most {@code maxStdout} bytes of its stdout. */
    Captured capture(DockerHandle h, List<String> argv, int maxStdout) throws InterruptedException {
        return capture(h, settings.user(), argv, maxStdout);
    }

    /** The same as {@code user}. */
    Captured capture(DockerHandle h, String user, List<String> argv, int maxStdout) throws InterruptedException {
        String execId = api.execCreate(h.containerId(), ContainerSpec.exec(user, argv));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        ExecStream.End end;
        try {
            // the whole helper, stream included, within one control deadline; an interrupt cancels it
            end = api.execStart(execId, settings.requestTimeout(), in -> ExecStream.pump(in, (s, b, off, len) -> {
                ByteArrayOutputStream to = s == 1 ? out : err;
                int room = s == 1 ? maxStdout - out.size() : 4096 - err.size();
                to.write(b, off, Math.max(0, Math.min(room, len)));
                return s != 1 || len <= room;
            }));
        } catch (dev.sandbox4j.http.ClientDeadlineException e) {
            throw SandboxException.builder("docker sandbox " + h.id() + ": a helper command did not finish in "
                    + settings.requestTimeout()).provider(PROVIDER).retriable(true).build();
        } catch (java.io.IOException e) {
            throw SandboxException.builder("docker sandbox " + h.id() + ": a helper command's output broke off: "
                    + e).provider(PROVIDER).retriable(true).cause(e).build();
        }
        if (end == ExecStream.End.CAPPED) {
            return new Captured(0, out, err, true);
        }
        Integer exit = exitCode(execId);
        return new Captured(exit == null ? -1 : exit, out, err, false);
    }

    /**
     * The exit code once the engine has recorded it (it may lag the end of the stream by a moment): the
     * exec is inspected at once, then again with {@link Backoff#poll} (delays from 1 ms growing to 50 ms)
     * for up to 5 s on the driver's clock; null when the engine has recorded none by then (or the exec is
     * gone), which the callers take as a kill.
     */
    Integer exitCode(String execId) throws InterruptedException {
        return backoff.poll(EXIT_CODE_WAIT, EXIT_CODE_FIRST_DELAY, EXIT_CODE_MAX_DELAY,
                look -> Optional.ofNullable(api.execExitCode(execId))).orElse(null);
    }

    @Override
    public boolean destroy(DockerHandle h) throws InterruptedException {
        h.gone("closed");
        closeEgress(h);
        // a one-shot's container has exited (or never started): removed without force, nothing to kill;
        // one the engine says still runs falls back to the forced removal
        boolean removed = h.oneShot() ? api.removeStopped(h.containerId()) : api.remove(h.containerId());
        live.remove(h);
        ALL.remove(h);
        log.debug("docker sandbox {} {}", h.id(), removed ? "removed" : "was already gone");
        return removed;
    }

    /** Closes the host proxy of a proxied sandbox, if any: its connections end at once. */
    private static void closeEgress(DockerHandle h) {
        DockerEgress c = h.takeEgressChannel();
        if (c != null) {
            try {
                c.close();
            } catch (RuntimeException e) {
                log.warn("docker sandbox {}: could not close its egress proxy: {}", h.id(), e.toString());
            }
        }
    }

    /** Waits (one exec as the supervisor) until the first process shows the forwarder listens, before any code runs. */
    private void awaitForwarder(DockerHandle h) throws InterruptedException {
        Captured c = capture(h, ContainerSpec.SUPERVISOR_USER, Scripts.shell(DockerEgress.AWAIT), 0);
        if (c.exit() != 0) {
            throw config("the egress forwarder did not start in the container (the image " + settings.image()
                    + " needs python3 on its PATH for domain lists)", null);
        }
    }

    static void ensureOpen(DockerHandle h) {
        if (h.state() != DockerHandle.State.OPEN) {
            String reason = h.goneReason();
            throw new SandboxNotFoundException(SandboxException.builder("docker sandbox " + h.id() + " is gone"
                    + (reason == null ? "" : " (" + reason + ")")).provider(PROVIDER));
        }
    }

    private static void checkEnv(Map<String, String> env) {
        for (Map.Entry<String, String> en : env.entrySet()) {
            if (en.getValue().indexOf('\0') >= 0) {
                throw new IllegalArgumentException("environment variable " + en.getKey() + " contains a NUL character");
            }
        }
    }

    static SandboxConfigurationException config(String message, Throwable cause) {
        return new SandboxConfigurationException(SandboxException.builder("docker: " + message).provider(PROVIDER).cause(cause));
    }

    private static void removeAllAtExit() {
        for (Map.Entry<DockerHandle, DockerDriver> en : ALL.entrySet()) {
            try {
                closeEgress(en.getKey());
                en.getValue().api.remove(en.getKey().containerId());
            } catch (RuntimeException | InterruptedException e) {
                // best effort at exit: the container's own lifetime removes it otherwise
            }
        }
    }
}
