package dev.sandbox4j.emulators.campaign;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import dev.sandbox4j.api.Attempt;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
import dev.sandbox4j.compose.WarmPoolRunner;
import dev.sandbox4j.egress.EgressResolver;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.policy.EgressPolicy;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * The project's fault campaign for the local runner (issue 29). The local runner has no wire to fault: its
 * faults are the caller's and the code's. Each run, seeded ({@link Seeds}, adapter {@code local}), takes
 * one hazard of {@link Hazard} (an infinite loop, code that SIGKILLs every process it can, a daemon that
 * tries to outlive its exec, an output flood, a signal death, FIFOs and links planted for the host's file
 * reads, a setup command that fails), one route (a one-shot {@code run()}, a session with two execs, or a
 * {@code run()} served by a {@link WarmPoolRunner}), a deny-all or domain-list egress, and in a quarter of
 * runs an interrupt at a random moment; 5 % run one at a time, the rest eight at once. Then a second runner
 * is closed while eight such runs are in flight.
 *
 * <p>Every run's code first reports its nonce, through the runner's egress proxy, to a recorder on a
 * loopback address routed by the proxy's test setting; a deny-all run tries the same and also connects
 * to the recorder's raw address. What is counted, each able to fail:
 * <ul>
 *   <li><b>double runs</b>: a nonce reported twice (each report carries the reporting process's pid and 40
 *       random bits, so two runs of one code are two lines); a run whose setup failed must report nothing;
 *       the check needs reports to arrive, so fewer than half of the list runs that ran to the end
 *       reporting fails it too;</li>
 *   <li><b>weaker egress</b>: anything a deny-all run sent reaching the recorder, or a raw connection of
 *       any run;</li>
 *   <li><b>outliving</b>: a process whose command line carries a run's nonce (the daemon's) alive when
 *       its exec, or its run, returned;</li>
 *   <li><b>leaks</b>, after the runners' {@code close()}: an open sandbox, a directory under the work
 *       root, a mount under it, a cgroup of a sandbox seen during the campaign, a process of this JVM's
 *       tree that was not there before;</li>
 *   <li><b>sandboxes used twice</b>: one sandbox id in two runs' results; the pool must serve at least one
 *       run, or its share of the campaign checked nothing;</li>
 *   <li><b>wrong outcomes</b>: an exception that is not a {@link SandboxException}; a run not interrupted
 *       whose result is not what its hazard gives (a loop {@code TIMED_OUT}, a flood {@code OUTPUT_LIMIT},
 *       a plain run exit 0); a link or FIFO read back as content; a teardown other than {@code DESTROYED};
 *       an interrupt that neither ended the run nor left the caller's flag set (swallowed);</li>
 *   <li><b>hung runs</b>: a run not ended within {@link Campaign#RUN_BOUND}.</li>
 * </ul>
 * Size: {@value #RUNS_AT_SCALE_ONE} runs; {@code -Dsandbox4j.campaign.scale=10} runs ten times as many,
 * {@code -Dsandbox4j.campaign.seed=N|random} changes the seed, {@code -Dsandbox4j.campaign.replay=local:<run>}
 * replays one run alone.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(900)
@Isolated("its leftover check counts this JVM's child processes, which another class's sandboxes would add to")
class LocalFaultCampaignTest {
    static final String ADAPTER = "local";
    static final int RUNS_AT_SCALE_ONE = 64;
    static final String HOST = "campaign.test";
    static final Duration BUDGET = Duration.ofSeconds(8);
    static final Duration LOOP_BUDGET = Duration.ofMillis(1500);
    static final long HARD_CAP = 256 * 1024;
    static final int POOL_SIZE = 2;
    static final int CLOSE_RUNS = 8;

    /** What the code (or its spec) does besides reporting its nonce. */
    enum Hazard { PLAIN, LOOP, KILL_ALL, DAEMON, FLOOD, SIGNAL, LINKS, SETUP_FAILS }

    enum Route { ONE_SHOT, SESSION, POOL }

    enum Egress { DENY_ALL, LIST }

    private Path workRoot;
    private Recorder recorder;
    private LocalSandboxRunner local;
    private WarmPoolRunner pool;
    private final Set<String> sandboxDirs = ConcurrentHashMap.newKeySet();
    private Set<Long> childrenBefore;

    @BeforeAll
    void start() throws IOException {
        workRoot = Files.createTempDirectory("campaign-localrunner-");
        Files.setPosixFilePermissions(workRoot, PosixFilePermissions.fromString("rwx--x--x"));
        recorder = Recorder.start();
        childrenBefore = children();
        local = runner();
        pool = WarmPoolRunner.builder(local, poolSpec()).size(POOL_SIZE).maxIdle(Duration.ofMinutes(2)).budget(BUDGET)
                .ownsDelegate(false).build();
        System.out.println("fault campaign: " + Seeds.describe() + ", " + Campaign.runs(RUNS_AT_SCALE_ONE)
                + " local runs (scale " + Campaign.SCALE + ")" + (Campaign.REPLAY.isEmpty() ? "" : ", replaying "
                + Campaign.REPLAY));
    }

    @AfterAll
    void stop() throws IOException {
        if (pool != null) {
            pool.close();
        }
        if (local != null) {
            local.close();
        }
        if (recorder != null) {
            recorder.close();
        }
        if (workRoot != null) {
            try (Stream<Path> s = Files.walk(workRoot)) {
                for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    private LocalSandboxRunner runner() {
        InetAddress a = recorder.address();
        return LocalSandboxRunner.builder().workRoot(workRoot).maxAddressSpaceMib(2048)
                .egressProxy(b -> b.resolver(EgressResolver.fixed(Map.of(HOST, List.of(a))))
                        .domainPorts(List.of(80, 443, recorder.port()))
                        .route(HOST, recorder.port(), new InetSocketAddress(a, recorder.port())))
                .build();
    }

    static SandboxSpec poolSpec() {
        return SandboxSpec.builder().egress(EgressPolicy.allowOnly(HOST)).build();
    }

    @Test
    void local() throws Exception {
        long seed = Seeds.of(ADAPTER);
        int runs = Campaign.runs(RUNS_AT_SCALE_ONE);
        int only = -1;
        if (!Campaign.REPLAY.isEmpty()) {
            String[] p = Campaign.REPLAY.split(":");
            if (!p[0].equals(ADAPTER)) {
                return;
            }
            only = Integer.parseInt(p[1]);
        }
        List<Plan> plans = Plan.all(seed, runs);
        Map<Integer, Run> done = new ConcurrentHashMap<>();
        List<Integer> hung = Collections.synchronizedList(new ArrayList<>());
        ScheduledExecutorService interrupter = Executors.newSingleThreadScheduledExecutor();
        Thread sampler = sampler();
        long t0 = System.nanoTime();
        try {
            if (only >= 0) {
                runAlone(plans.get(only), interrupter, done, hung);
            } else {
                for (Plan p : plans) {
                    if (!p.concurrent) {
                        runAlone(p, interrupter, done, hung);
                    }
                }
                ExecutorService threads = Executors.newFixedThreadPool(Campaign.PARALLEL);
                try {
                    List<Plan> concurrent = plans.stream().filter(p -> p.concurrent).toList();
                    List<Future<?>> futures = new ArrayList<>();
                    for (Plan p : concurrent) {
                        futures.add(threads.submit(() -> done.put(p.index, run(p, local, pool, interrupter, NOT_CLOSING))));
                    }
                    long bound = System.nanoTime()
                            + Campaign.RUN_BOUND.toNanos() * Math.max(1, futures.size() / Campaign.PARALLEL);
                    for (int i = 0; i < futures.size(); i++) {
                        try {
                            futures.get(i).get(Math.max(1, bound - System.nanoTime()), TimeUnit.NANOSECONDS);
                        } catch (TimeoutException e) {
                            hung.add(concurrent.get(i).index);
                        }
                    }
                } finally {
                    threads.shutdownNow();
                }
            }
        } finally {
            interrupter.shutdownNow();
        }
        long runsMs = (System.nanoTime() - t0) / 1_000_000;
        List<String> closePhase = only >= 0 ? List.of() : closeWhileRunning(seed, runs);
        pool.close();
        local.close();
        sampler.interrupt();
        sampler.join(5_000);
        Report report = Report.of(plans, done, recorder, pool, only >= 0);
        report.problems.addAll(closePhase);
        report.problems.addAll(leftovers());
        if (!hung.isEmpty()) {
            report.problems.add(hung.size() + " runs did not end within " + Campaign.RUN_BOUND.toSeconds() + " s: " + hung);
        }
        String text = "campaign local seed " + seed + ": " + report.text() + ", hung " + hung.size() + ", runs took "
                + runsMs + " ms, wall " + (System.nanoTime() - t0) / 1_000_000 + " ms";
        System.out.println(text);
        Campaign.keep(ADAPTER, text + (report.problems.isEmpty() ? "" : "\nproblems: " + report.problems));
        if (!report.problems.isEmpty()) {
            fail("local campaign, seed " + seed + ": " + report.problems.size() + " problems: "
                    + String.join("; ", report.problems) + "\nreplay one run with " + Seeds.replay(ADAPTER)
                    + " -Dsandbox4j.campaign.runs=" + runs + " -Dsandbox4j.campaign.replay=local:<run>\n" + text);
        }
        assertEquals(only >= 0 ? 1 : runs, done.size(), "every run has an outcome");
    }

    private void runAlone(Plan p, ScheduledExecutorService interrupter, Map<Integer, Run> done, List<Integer> hung)
            throws InterruptedException {
        Thread t = new Thread(() -> done.put(p.index, run(p, local, pool, interrupter, NOT_CLOSING)), "campaign-local-" + p.index);
        t.setDaemon(true);
        t.start();
        t.join(Campaign.RUN_BOUND.toMillis());
        if (t.isAlive()) {
            hung.add(p.index);
            t.interrupt();
        }
    }

    /** Eight runs on a runner of their own, closed at a seeded moment while they are in flight. */
    private List<String> closeWhileRunning(long seed, int runs) throws Exception {
        List<String> problems = new ArrayList<>();
        Random r = new Random(seed ^ 0x5DEECE66DL);
        for (int round = 0; round < Campaign.SCALE; round++) {
            LocalSandboxRunner closing = runner();
            long delayMs = 50 + r.nextInt(1200);
            ExecutorService threads = Executors.newFixedThreadPool(CLOSE_RUNS);
            ScheduledExecutorService interrupter = Executors.newSingleThreadScheduledExecutor();
            List<Future<Run>> futures = new ArrayList<>();
            List<Plan> plans = new ArrayList<>();
            AtomicBoolean closed = new AtomicBoolean();
            for (int i = 0; i < CLOSE_RUNS; i++) {
                Plan p = Plan.of(seed, runs + round * CLOSE_RUNS + i, Hazard.values()[i % Hazard.values().length], true);
                plans.add(p);
                futures.add(threads.submit(() -> run(p, closing, null, interrupter, closed)));
            }
            Thread.sleep(delayMs);
            closed.set(true); // from here a session's exec may end KILLED: close() destroys what is open
            closing.close();
            if (closing.openSandboxes() != 0) {
                problems.add("close round " + round + " (after " + delayMs + " ms): " + closing.openSandboxes()
                        + " sandboxes open the moment close() returned");
            }
            Map<String, Integer> outcomes = new TreeMap<>();
            for (int i = 0; i < futures.size(); i++) {
                Run run;
                try {
                    run = futures.get(i).get(Campaign.RUN_BOUND.toSeconds(), TimeUnit.SECONDS);
                } catch (TimeoutException e) {
                    problems.add("close round " + round + ": " + plans.get(i) + " did not end");
                    continue;
                }
                outcomes.merge(Report.describe(run.outcome), 1, Integer::sum);
                // a closed runner refuses new work with IllegalStateException; anything else must be typed
                if (run.outcome instanceof Throwable t && !(t instanceof SandboxException)
                        && !(t instanceof IllegalStateException && String.valueOf(t.getMessage()).contains("closed"))) {
                    problems.add("close round " + round + ": " + plans.get(i) + " ended untyped: " + t);
                }
                problems.addAll(run.problems);
            }
            threads.shutdownNow();
            interrupter.shutdownNow();
            System.out.println("campaign local: close round " + round + " after " + delayMs + " ms: " + outcomes);
        }
        return problems;
    }

    // ---------------------------------------------------------------- one run

    /** What one run did: its outcome and what was seen on the way. */
    static final class Run {
        final Plan plan;
        Object outcome;
        boolean interrupted;
        boolean flagAfter;
        String sandboxId;
        boolean pooled;
        final List<String> problems = new ArrayList<>();

        Run(Plan plan) {
            this.plan = plan;
        }
    }

    /** The main rounds' runner is never closed under a run. */
    private static final AtomicBoolean NOT_CLOSING = new AtomicBoolean();

    private static Run run(Plan p, SandboxRunner runner, WarmPoolRunner pool, ScheduledExecutorService interrupter,
            AtomicBoolean closed) {
        Run run = new Run(p);
        Thread self = Thread.currentThread();
        Object slot = new Object();
        boolean[] over = {false};
        if (p.interruptAfterMs >= 0) {
            interrupter.schedule(() -> {
                synchronized (slot) {
                    if (!over[0]) {
                        run.interrupted = true;
                        self.interrupt();
                    }
                }
            }, p.interruptAfterMs, TimeUnit.MILLISECONDS);
        }
        try {
            run.outcome = switch (p.route) {
                case ONE_SHOT -> runner.run(RunRequest.of(p.spec(), p.execution()));
                case POOL -> pool == null ? runner.run(RunRequest.of(p.spec(), p.execution()))
                        : pool.run(RunRequest.of(p.spec(), p.execution()));
                case SESSION -> session(p, runner, run, closed);
            };
        } catch (Throwable e) {
            run.outcome = e;
        }
        synchronized (slot) {
            over[0] = true;
        }
        run.flagAfter = Thread.interrupted(); // a late interrupt must not reach the next run on this thread
        if (run.outcome instanceof RunResult r) {
            run.sandboxId = r.sandboxId();
            List<Attempt> attempts = r.attempts();
            run.pooled = !attempts.isEmpty() && attempts.get(attempts.size() - 1).source() == Attempt.Source.POOL;
        }
        outlivers(p, "its run returned", run.problems);
        return run;
    }

    /**
     * A session: the run's exec, the host's reads when it planted links, a second exec, close. The second
     * exec of a plain run prints its line, or, once the runner's close() began, ends KILLED (the runner
     * destroyed the sandbox under it).
     */
    private static RunResult session(Plan p, SandboxRunner runner, Run run, AtomicBoolean closed) {
        Sandbox s = runner.open(p.spec());
        RunResult first;
        try {
            first = s.exec(p.execution());
            outlivers(p, "its first exec returned", run.problems);
            if (p.hazard == Hazard.LINKS) {
                readsBack(p, s, first, run);
            }
            RunResult second = s.exec(Execution.builder("print('second " + p.nonce + "')").budget(BUDGET).build());
            boolean closedUnder = closed.get() && second.status() == RunStatus.KILLED;
            if (p.hazard == Hazard.PLAIN && !second.stdout().contains("second " + p.nonce) && !closedUnder) {
                run.problems.add(p + ": the session's second exec said " + second);
            }
        } finally {
            s.close();
        }
        return first.toBuilder().teardown(s.teardown()).build();
    }

    /** The code planted a FIFO and links where the host then reads: each read is refused, the file beside them read. */
    private static void readsBack(Plan p, Sandbox s, RunResult first, Run run) {
        if (first.status() != RunStatus.EXITED || first.exitCode().orElse(-1) != 0) {
            return; // interrupted or killed before it planted them
        }
        SandboxFile ok = s.readFile("ok.txt");
        if (!new String(ok.content(), StandardCharsets.UTF_8).equals(p.nonce)) {
            run.problems.add(p + ": the regular file read back as " + new String(ok.content(), StandardCharsets.UTF_8));
        }
        for (String planted : List.of("fifo", "shadow", "root/etc/hostname", "proc-mem")) {
            try {
                SandboxFile f = s.readFile(planted);
                run.problems.add(p + ": the planted " + planted + " was read back (" + f.content().length + " bytes)");
            } catch (SandboxException e) {
                // refused, as it must be
            }
        }
    }

    /** Processes whose command line carries this run's nonce: none may outlive an exec. */
    private static void outlivers(Plan p, String when, List<String> problems) {
        List<String> alive = new ArrayList<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path d : procs.filter(x -> x.getFileName().toString().chars().allMatch(Character::isDigit)).toList()) {
                try {
                    String cmd = new String(Files.readAllBytes(d.resolve("cmdline")), StandardCharsets.UTF_8);
                    if (cmd.contains(p.nonce + "-daemon")) {
                        alive.add(d.getFileName() + " " + cmd.replace('\0', ' ').strip());
                    }
                } catch (IOException e) {
                    // gone while listed
                }
            }
        } catch (IOException e) {
            problems.add("could not list /proc: " + e);
        }
        if (!alive.isEmpty()) {
            problems.add(p + ": alive after " + when + ": " + alive);
        }
    }

    // ---------------------------------------------------------------- plans

    /** Everything random about one run, from the seed and its index (so one run replays). */
    static final class Plan {
        final int index;
        final String nonce;
        final Hazard hazard;
        final Route route;
        final Egress egress;
        final boolean concurrent;
        final long interruptAfterMs;

        private Plan(int index, String nonce, Hazard hazard, Route route, Egress egress, boolean concurrent,
                long interruptAfterMs) {
            this.index = index;
            this.nonce = nonce;
            this.hazard = hazard;
            this.route = route;
            this.egress = egress;
            this.concurrent = concurrent;
            this.interruptAfterMs = interruptAfterMs;
        }

        /** Every hazard in the same share of the runs, shuffled by the seed. */
        static List<Plan> all(long seed, int runs) {
            List<Hazard> hazards = new ArrayList<>();
            for (int i = 0; i < runs; i++) {
                hazards.add(Hazard.values()[i % Hazard.values().length]);
            }
            Collections.shuffle(hazards, new Random(seed ^ ADAPTER.hashCode()));
            List<Plan> plans = new ArrayList<>();
            for (int i = 0; i < runs; i++) {
                plans.add(of(seed, i, hazards.get(i), false));
            }
            return plans;
        }

        static Plan of(long seed, int index, Hazard hazard, boolean noPool) {
            Random r = new Random(seed * 1_000_003L + index * 7919L + ADAPTER.hashCode());
            String nonce = "cmpl" + Long.toHexString(seed) + "x" + index + "x";
            int k = r.nextInt(100);
            Route route = hazard == Hazard.LINKS ? Route.SESSION
                    : k < 50 ? Route.ONE_SHOT : k < 75 || hazard == Hazard.SETUP_FAILS || noPool ? Route.SESSION : Route.POOL;
            Egress egress = route == Route.POOL || r.nextBoolean() ? Egress.LIST : Egress.DENY_ALL;
            boolean concurrent = r.nextInt(100) >= Campaign.SEQUENTIAL_PERCENT;
            long interrupt = r.nextInt(100) < 25 ? r.nextInt(1200) : -1;
            return new Plan(index, nonce, hazard, route, egress, concurrent, interrupt);
        }

        SandboxSpec spec() {
            if (route == Route.POOL) {
                return poolSpec();
            }
            SandboxSpec.Builder b = SandboxSpec.builder().egress(egress == Egress.LIST ? EgressPolicy.allowOnly(HOST)
                    : EgressPolicy.denyAll());
            if (hazard == Hazard.SETUP_FAILS) {
                b.setupCommand("echo setting up; exit 3").setupBudget(Duration.ofSeconds(5));
            }
            return b.build();
        }

        Execution execution() {
            Execution.Builder b = Execution.builder(code()).budget(hazard == Hazard.LOOP ? LOOP_BUDGET : BUDGET);
            if (hazard == Hazard.FLOOD) {
                b.hardCapBytes(HARD_CAP);
            }
            return b.build();
        }

        String code() {
            String prelude = """
                    import os, random, socket, sys, urllib.request
                    N = '@N@'
                    def via_proxy(tag):
                        url = 'http://@HOST@:@PORT@/%s-%s-%d-%d' % (tag, N, os.getpid(), random.getrandbits(40))
                        try:
                            urllib.request.urlopen(url, timeout=3).read()
                            return 'reached'
                        except Exception:
                            return 'refused'
                    def raw(tag):
                        try:
                            s = socket.create_connection(('@ADDR@', @PORT@), timeout=1)
                            s.sendall(('GET /%s-%s-raw HTTP/1.0\\r\\n\\r\\n' % (tag, N)).encode())
                            s.close()
                            return 'reached'
                        except Exception:
                            return 'refused'
                    print('report', via_proxy('@TAG@'), flush=True)
                    print('raw', raw('w'), flush=True)
                    """;
            String body = switch (hazard) {
                case PLAIN, SETUP_FAILS -> "print('done')\n";
                case LOOP -> "while True:\n    pass\n";
                case KILL_ALL -> "os.kill(-1, 9)\nprint('done')\n";
                case DAEMON -> """
                        if os.fork() == 0:
                            os.setsid()
                            if os.fork() == 0:
                                fd = os.open('/dev/null', os.O_RDWR)
                                for i in (0, 1, 2):
                                    os.dup2(fd, i)
                                os.execv('/bin/sh', ['sh', '-c', 'trap "" HUP TERM INT; while :; do sleep 0.05; done', N + '-daemon'])
                            os._exit(0)
                        os.wait()
                        print('done')
                        """;
                case FLOOD -> "chunk = 'x' * 65536\nfor i in range(128):\n    sys.stdout.write(chunk)\nprint('done')\n";
                case SIGNAL -> "sys.stdout.flush()\nos.kill(os.getpid(), 11)\n";
                case LINKS -> """
                        os.mkfifo('fifo')
                        os.symlink('/etc/shadow', 'shadow')
                        os.symlink('/', 'root')
                        os.symlink('/proc/self/mem', 'proc-mem')
                        with open('ok.txt', 'w') as f:
                            f.write(N)
                        print('done')
                        """;
            };
            return (prelude + body).replace("@N@", nonce).replace("@HOST@", HOST)
                    .replace("@PORT@", Integer.toString(RECORDER_PORT)).replace("@ADDR@", RECORDER_ADDRESS)
                    .replace("@TAG@", egress == Egress.LIST ? "n" : "w");
        }

        @Override
        public String toString() {
            return "run " + index + (concurrent ? " (concurrent)" : "") + " " + hazard + " " + route + " " + egress
                    + (interruptAfterMs >= 0 ? ", interrupt at " + interruptAfterMs + " ms" : "");
        }
    }

    /** Set once the recorder is up (the plans' code carries them). */
    static volatile int RECORDER_PORT;
    static volatile String RECORDER_ADDRESS;

    // ---------------------------------------------------------------- counting

    static final class Report {
        final List<String> problems = new ArrayList<>();
        final Map<String, Integer> outcomes = new TreeMap<>();
        int reports;
        int listRunsToTheEnd;
        int listRunsReached;
        int pooled;
        int interrupted;

        static Report of(List<Plan> plans, Map<Integer, Run> done, Recorder recorder, WarmPoolRunner pool,
                boolean replay) {
            Report rep = new Report();
            Map<String, Integer> ids = new HashMap<>();
            for (Run run : done.values()) {
                Plan p = run.plan;
                Object o = run.outcome;
                rep.outcomes.merge(p.hazard + " " + describe(o), 1, Integer::sum);
                rep.problems.addAll(run.problems);
                if (run.interrupted) {
                    rep.interrupted++;
                }
                if (run.pooled) {
                    rep.pooled++;
                }
                if (run.sandboxId != null) {
                    ids.merge(run.sandboxId, 1, Integer::sum);
                }
                if (o instanceof Throwable t && !(t instanceof SandboxException)) {
                    rep.problems.add(p + " ended with an untyped " + t);
                }
                if (run.interrupted && !run.flagAfter && !interruptedEnd(o)) {
                    rep.problems.add(p + ": the interrupt was swallowed (" + describe(o) + ", flag clear)");
                }
                if (o instanceof RunResult r && r.teardown() != Teardown.DESTROYED) {
                    rep.problems.add(p + ": teardown " + r.teardown());
                }
                if (!run.interrupted) {
                    String wrong = expected(p, o);
                    if (wrong != null) {
                        rep.problems.add(p + ": " + wrong);
                    }
                }
                List<String> mine = recorder.linesWith("-" + p.nonce + "-");
                long reported = mine.stream().filter(l -> l.contains("/n-" + p.nonce + "-")).count();
                rep.reports += (int) reported;
                if (reported > 1) {
                    rep.problems.add(p + ": double run, its nonce reported " + reported + " times: " + mine);
                }
                if (mine.stream().anyMatch(l -> l.contains("/w-" + p.nonce + "-"))) {
                    rep.problems.add(p + ": weaker egress, the recorder got " + mine);
                }
                if (p.hazard == Hazard.SETUP_FAILS && !mine.isEmpty()) {
                    rep.problems.add(p + ": its setup failed, yet its code ran: " + mine);
                }
                if (p.egress == Egress.LIST && o instanceof RunResult r && r.stdout().contains("report ")) {
                    rep.listRunsToTheEnd++;
                    if (r.stdout().contains("report reached")) {
                        rep.listRunsReached++;
                        if (reported == 0) {
                            rep.problems.add(p + ": the code said it reported, the recorder has nothing");
                        }
                    }
                }
            }
            ids.forEach((id, n) -> {
                if (n > 1) {
                    rep.problems.add("sandbox " + id + " served " + n + " runs");
                }
            });
            if (!replay) {
                if (rep.listRunsReached * 2 < rep.listRunsToTheEnd || rep.listRunsReached == 0) {
                    rep.problems.add("only " + rep.listRunsReached + " of " + rep.listRunsToTheEnd
                            + " list runs reached the recorder: the double-run check needs their reports");
                }
                if (rep.pooled == 0 || pool.handedOut() == 0) {
                    rep.problems.add("the pool served no run (" + pool + "): its share checked nothing");
                }
            }
            return rep;
        }

        /** Why a run that was not interrupted ended wrongly for its hazard, or null. */
        static String expected(Plan p, Object o) {
            if (p.hazard == Hazard.SETUP_FAILS) {
                return o instanceof SandboxException ? null : "a failing setup ended as " + describe(o);
            }
            if (p.hazard == Hazard.KILL_ALL) {
                return o instanceof RunResult || o instanceof SandboxException ? null : "ended as " + describe(o);
            }
            if (!(o instanceof RunResult r)) {
                return "ended as " + describe(o) + (o instanceof Throwable t ? ": " + t.getMessage() : "");
            }
            return switch (p.hazard) {
                case LOOP -> r.status() == RunStatus.TIMED_OUT ? null : "a loop ended as " + describe(o);
                case FLOOD -> r.status() == RunStatus.OUTPUT_LIMIT ? null : "a flood ended as " + describe(o);
                case SIGNAL -> r.exitCode().isPresent() && r.exitCode().getAsInt() != 0 ? null
                        : "a signal death ended as " + describe(o);
                default -> r.status() == RunStatus.EXITED && r.exitCode().orElse(-1) == 0 && r.stdout().contains("done")
                        ? null : p.hazard + " ended as " + describe(o) + ", stdout " + abbreviate(r.stdout())
                        + ", stderr " + abbreviate(r.stderr());
            };
        }

        static boolean interruptedEnd(Object o) {
            for (Throwable t = o instanceof Throwable th ? th : null; t != null; t = t.getCause()) {
                if (t instanceof SandboxInterruptedException || t instanceof InterruptedException) {
                    return true;
                }
            }
            return false;
        }

        static String describe(Object o) {
            if (o instanceof RunResult r) {
                return r.status() + (r.exitCode().isPresent() ? " " + r.exitCode().getAsInt() : "");
            }
            return o == null ? "none" : o.getClass().getSimpleName();
        }

        static String abbreviate(String s) {
            return s.length() > 300 ? s.substring(0, 300) + "..." : s;
        }

        String text() {
            return "outcomes " + outcomes + ", interrupted " + interrupted + ", pooled " + pooled + ", reports "
                    + reports + " (list runs to the end " + listRunsToTheEnd + ", reached " + listRunsReached + ")"
                    + ", problems " + problems.size();
        }
    }

    // ---------------------------------------------------------------- leftovers

    /** Samples the sandbox directories while the campaign runs: their cgroups carry the same names. */
    private Thread sampler() {
        Thread t = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                try (Stream<Path> s = Files.list(workRoot)) {
                    s.forEach(p -> sandboxDirs.add(p.getFileName().toString()));
                } catch (IOException | RuntimeException e) {
                    // a directory removed while listed
                }
                try {
                    Thread.sleep(2);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "campaign-local-sampler");
        t.setDaemon(true);
        t.start();
        return t;
    }

    private List<String> leftovers() throws IOException {
        List<String> out = new ArrayList<>();
        if (local.openSandboxes() != 0) {
            out.add(local.openSandboxes() + " local sandboxes open after close()");
        }
        try (Stream<Path> s = Files.list(workRoot)) {
            List<String> dirs = s.map(p -> p.getFileName().toString()).sorted().toList();
            if (!dirs.isEmpty()) {
                out.add("left under the work root: " + dirs);
            }
        }
        String prefix = workRoot.toAbsolutePath().normalize() + "/";
        List<String> mounts = Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
                .filter(l -> l.split(" ")[4].startsWith(prefix)).toList();
        if (!mounts.isEmpty()) {
            out.add("mounts left: " + mounts);
        }
        List<Path> cgroups = cgroupsNamed(sandboxDirs);
        if (!cgroups.isEmpty()) {
            out.add("cgroups left: " + cgroups);
        }
        Set<Long> now = children();
        now.removeAll(childrenBefore);
        if (!now.isEmpty()) {
            out.add("processes left: " + now.stream().map(LocalFaultCampaignTest::describePid).toList());
        }
        if (sandboxDirs.isEmpty()) {
            out.add("the sampler saw no sandbox directory: the cgroup check checked nothing");
        }
        return out;
    }

    private static List<Path> cgroupsNamed(Set<String> names) throws IOException {
        Path base = Path.of("/sys/fs/cgroup");
        if (!Files.isDirectory(base) || names.isEmpty()) {
            return List.of();
        }
        for (int attempt = 1; ; attempt++) {
            try (Stream<Path> s = Files.find(base, 10, (p, a) -> a.isDirectory() && p.getFileName() != null
                    && names.contains(p.getFileName().toString()) && p.getParent().getFileName() != null
                    && p.getParent().getFileName().toString().equals("sandbox4j"))) {
                return s.collect(Collectors.toList());
            } catch (java.io.UncheckedIOException e) {
                if (attempt == 5) { // another JVM's cgroup removed while walking: walk again, a few times
                    throw e;
                }
            }
        }
    }

    private static Set<Long> children() {
        return ProcessHandle.current().descendants().filter(ProcessHandle::isAlive).map(ProcessHandle::pid)
                .collect(Collectors.toCollection(HashSet::new));
    }

    private static String describePid(long pid) {
        try {
            return pid + " " + new String(Files.readAllBytes(Path.of("/proc/" + pid + "/cmdline")), StandardCharsets.UTF_8)
                    .replace('\0', ' ').strip();
        } catch (IOException e) {
            return pid + " (gone)";
        }
    }

    // ---------------------------------------------------------------- the recorder

    /**
     * A loopback HTTP endpoint that keeps the request line of every connection (a list, so a line sent
     * twice is there twice) and answers 200. It binds a random {@code 127.x.y.z}, so two JVMs do not meet.
     */
    static final class Recorder implements AutoCloseable {
        private final ServerSocket server;
        private final ConcurrentLinkedQueue<String> lines = new ConcurrentLinkedQueue<>();

        private Recorder(ServerSocket server) {
            this.server = server;
        }

        static Recorder start() throws IOException {
            SecureRandom r = new SecureRandom();
            IOException last = null;
            for (int attempt = 0; attempt < 5; attempt++) {
                byte[] a = {127, (byte) (1 + r.nextInt(254)), (byte) (1 + r.nextInt(254)), (byte) (1 + r.nextInt(254))};
                try {
                    ServerSocket s = new ServerSocket();
                    s.bind(new InetSocketAddress(InetAddress.getByAddress(a), 0), 64);
                    Recorder rec = new Recorder(s);
                    RECORDER_PORT = s.getLocalPort();
                    RECORDER_ADDRESS = InetAddress.getByAddress(a).getHostAddress();
                    Thread t = new Thread(rec::accept, "campaign-local-recorder");
                    t.setDaemon(true);
                    t.start();
                    return rec;
                } catch (IOException e) {
                    last = e;
                }
            }
            throw last;
        }

        InetAddress address() {
            return server.getInetAddress();
        }

        int port() {
            return server.getLocalPort();
        }

        List<String> linesWith(String part) {
            return lines.stream().filter(l -> l.contains(part)).toList();
        }

        private void accept() {
            while (!server.isClosed()) {
                try {
                    Socket s = server.accept();
                    Thread t = new Thread(() -> serve(s), "campaign-local-recorder-conn");
                    t.setDaemon(true);
                    t.start();
                } catch (IOException e) {
                    return; // closed
                }
            }
        }

        private void serve(Socket s) {
            try (s) {
                s.setSoTimeout(5_000);
                BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.ISO_8859_1));
                String first = in.readLine();
                if (first == null) {
                    return;
                }
                lines.add(first);
                for (String l = in.readLine(); l != null && !l.isEmpty(); l = in.readLine()) {
                    // the headers; a body, if any, is not read
                }
                OutputStream out = s.getOutputStream();
                out.write("HTTP/1.0 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
            } catch (IOException e) {
                // a connection the code dropped
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }
}
