package dev.sandbox4j.emulators.campaign;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.emulators.Faults;
import dev.sandbox4j.emulators.Faults.Fault;
import dev.sandbox4j.emulators.HttpEmulator;
import dev.sandbox4j.emulators.Ledger;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The fault campaign's engine, shared by every adapter's campaign (the REST adapters' in
 * {@link FaultCampaignTest}, Modal's in its emulator's module, the Docker runner's in {@code sandbox-docker}
 * against the real engine behind a fault proxy, the Kubernetes runner's in {@code sandbox-kubernetes}
 * against the agent-sandbox emulator): the seeded plans, the runs (a replayable
 * share one at a time, the rest eight at once, with random interrupts), and the counts from the
 * emulator's {@link Ledger} after {@code runner.close()}. See {@link FaultCampaignTest} for what is
 * counted and the properties that scale and replay a campaign.
 */
final class Campaign {
    static final String RUN_LABEL = "campaign-run";
    /** Logged once at the start: the log scan must catch it, or it could not catch a key either. */
    static final String CANARY_SECRET = "canary-5ecret-3c9e41d07b";
    static final Duration BUDGET = Duration.ofSeconds(6);
    /** A hung lookup outlasts the client's timeout. */
    static final Duration LOOKUP_HANG = Duration.ofMillis(1500);
    static final Duration LATE_CREATE_MAX = Duration.ofMillis(1500);
    static final int PARALLEL = 8;
    /** The share of runs made one at a time (each with exactly its own faults, so it replays); slow ones. */
    static final int SEQUENTIAL_PERCENT = 5;
    /** Every run ends within this, or the campaign fails (bounded, whatever the faults). */
    static final Duration RUN_BOUND = Duration.ofSeconds(60);
    /** How often each knob must fire in a campaign of {@link #FULL_RUNS} runs; in proportion at other sizes. */
    static final int MIN_FIRES = 20;
    static final int FULL_RUNS = 160;
    static final Pattern NONCE = Pattern.compile("cmpn[0-9a-f]+x[a-z0-9]+x[0-9]+x");
    static final Fault[] CAMPAIGN_FAULTS = {Fault.FAIL_CREATE, Fault.RATE_LIMIT_CREATE, Fault.LOSE_CREATE_RESPONSE,
        Fault.LATE_CREATE, Fault.HANG_LOOKUP, Fault.GARBLE_CREATE, Fault.GARBLE_ANSWER, Fault.LOSE_EXEC_RESPONSE,
        Fault.DROP_STREAM, Fault.FAIL_TEARDOWN};

    static final int SCALE = Integer.getInteger("sandbox4j.campaign.scale", 1);
    /**
     * Runs per adapter. The suite's default (64) hits every knob several times (each must fire, see
     * {@link #minFires}); {@code -Dsandbox4j.campaign.scale=10} runs 640, {@code -Dsandbox4j.campaign.runs=160}
     * the size this campaign had before (issue 29 made the suite's one smaller to keep the build fast).
     */
    static final int RUNS = Integer.getInteger("sandbox4j.campaign.runs", 64) * SCALE;
    static final String REPLAY = System.getProperty("sandbox4j.campaign.replay", "");

    /**
     * The run count of a campaign whose runs cost more than an emulator's (the Docker runner's real
     * containers): {@code sandbox4j.campaign.runs} when given, else {@code atScaleOne}; times the scale.
     */
    static int runs(int atScaleOne) {
        return Integer.getInteger("sandbox4j.campaign.runs", atScaleOne) * SCALE;
    }

    private Campaign() {
    }

    /**
     * Whether a run's outcome tells the application that a sandbox may be left behind, so that a
     * sandbox of this run still alive is reported rather than leaked. Today only a result whose
     * teardown FAILED says so; an exception says nothing of a sandbox (issue 13 adds an accessor for
     * that, and this is the one place to recognise it).
     */
    static boolean reportsPossibleLeak(Object outcome) {
        if (outcome instanceof RunResult r) {
            return r.teardown() == Teardown.FAILED;
        }
        for (Throwable t = outcome instanceof Throwable th ? th : null; t != null; t = t.getCause()) {
            if (t instanceof SandboxException se && se.sandboxMayExist()) {
                return true; // the exception names the run id of a sandbox that may still exist
            }
        }
        return false;
    }

    /** Makes the runners a campaign runs through. */
    interface RunnerFactory {
        /**
         * @param callerClient whether the runner gets a caller's own transport client (a REST adapter's
         *                     OkHttpClient with OkHttp's defaults); ignored by an adapter without one
         */
        SandboxRunner create(boolean callerClient);

        /** Releases what the factory made besides the runners, once both are closed. */
        default void release() {
        }
    }

    /** What a campaign needs of an emulator: its knobs, its ledger, and what it still handles. */
    interface Emulated {
        Faults faults();

        Ledger ledger();

        /** Requests being handled right now; 0 where the emulator does not count them. */
        int inFlight();

        List<String> inFlightRequests();

        /** The knobs this emulator honours: the campaign arms no other. */
        Set<Fault> knobs();

        /**
         * The code a run executes; it must hold {@code nonce} exactly once (the double-run count looks
         * for it in the code each sandbox received).
         */
        default String code(String nonce) {
            return "print('" + nonce + "')";
        }

        static Emulated of(HttpEmulator e) {
            return new Emulated() {
                public Faults faults() {
                    return e.faults();
                }

                public Ledger ledger() {
                    return e.ledger();
                }

                public int inFlight() {
                    return e.inFlight();
                }

                public List<String> inFlightRequests() {
                    return e.inFlightRequests();
                }

                public Set<Fault> knobs() {
                    return Set.of(CAMPAIGN_FAULTS);
                }
            };
        }
    }

    // ---------------------------------------------------------------- the campaign

    /**
     * One adapter's campaign against its emulator: the plans from the adapter's seed, the runs, then the
     * counts from the ledger; fails with the seed and the replay command on any problem.
     */
    static void campaign(LogTap logs, String adapter, Emulated emulator, String secret, RunnerFactory factory)
            throws Exception {
        campaign(logs, adapter, emulator, secret, factory, RUNS);
    }

    /**
     * As above, with {@code runs} runs (see {@link #runs(int)}); each knob must fire as often as
     * {@link #minFires} says for that many runs.
     */
    static void campaign(LogTap logs, String adapter, Emulated emulator, String secret, RunnerFactory factory,
            int runs) throws Exception {
        int only = -1;
        if (!REPLAY.isEmpty()) {
            String[] p = REPLAY.split(":");
            if (!p[0].equals(adapter)) {
                return;
            }
            only = Integer.parseInt(p[1]);
        }
        Faults faults = emulator.faults();
        faults.reset().lateCreate(0, LATE_CREATE_MAX).hangLookup(0, LOOKUP_HANG).failCreate(503, 0)
                .rateLimitCreate(0, 0).failTeardown(500, 0);
        Set<Fault> knobs = emulator.knobs();
        SandboxRunner plain = factory.create(false);
        SandboxRunner custom = factory.create(true);
        boolean lockDown = plain.capabilities().supports(Capabilities.Egress.LIVE_UPDATE)
                && plain.capabilities().supports(Capabilities.Feature.SETUP_COMMANDS)
                && lockDownAccepted(logs, adapter, plain, emulator);
        long seed = Seeds.of(adapter);
        List<Fault> mains = Plan.mainFaults(seed, adapter, runs, knobs);
        List<Boolean> rateLimited = Plan.spread(seed, adapter + "/429", runs, 22);
        List<Boolean> garbled = Plan.spread(seed, adapter + "/garble", runs, 24);
        List<Boolean> failedTeardown = Plan.spread(seed, adapter + "/teardown", runs, 14);
        List<Plan> plans = new ArrayList<>();
        for (int i = 0; i < runs; i++) {
            Plan p = Plan.of(seed, adapter, i, mains.get(i), lockDown, knobs);
            if (rateLimited.get(i) && knobs.contains(Fault.RATE_LIMIT_CREATE)) {
                p.faults.put(Fault.RATE_LIMIT_CREATE, 1); // retried: the retry meets the run's other faults
            }
            if (garbled.get(i) && knobs.contains(Fault.GARBLE_ANSWER)) {
                p.faults.put(Fault.GARBLE_ANSWER, 1); // the next 2xx body: a lookup, poll, exec or teardown
            }
            if (failedTeardown.get(i) && knobs.contains(Fault.FAIL_TEARDOWN)) {
                p.faults.put(Fault.FAIL_TEARDOWN, 1 + i % 2);
            }
            plans.add(p);
        }
        Map<Integer, Object> outcomes = new ConcurrentHashMap<>();
        List<Integer> hung = Collections.synchronizedList(new ArrayList<>());
        ScheduledExecutorService interrupter = Executors.newSingleThreadScheduledExecutor();
        long t0 = System.nanoTime();
        long sequentialMs = 0;
        long runsMs = 0;
        try {
            if (only >= 0) {
                Plan p = plans.get(only);
                faults.reset();
                p.arm(faults);
                runAlone(p, p.callerClient ? custom : plain, emulator, interrupter, outcomes, hung);
            } else {
                // the replayable share: one at a time, each with exactly its own faults armed
                for (Plan p : plans) {
                    if (!p.concurrent) {
                        faults.reset();
                        p.arm(faults);
                        runAlone(p, p.callerClient ? custom : plain, emulator, interrupter, outcomes, hung);
                    }
                }
                sequentialMs = (System.nanoTime() - t0) / 1_000_000;
                faults.reset();
                // the rest eight at once: each run arms its faults as it starts, so they land on runs in flight
                ExecutorService pool = Executors.newFixedThreadPool(PARALLEL);
                try {
                    List<Future<?>> futures = new ArrayList<>();
                    for (Plan p : plans) {
                        if (p.concurrent) {
                            futures.add(pool.submit(() -> {
                                p.arm(faults);
                                run(p, p.callerClient ? custom : plain, emulator, interrupter, outcomes);
                            }));
                        }
                    }
                    long bound = System.nanoTime() + RUN_BOUND.toNanos() * Math.max(1, futures.size() / PARALLEL);
                    for (int i = 0; i < futures.size(); i++) {
                        try {
                            futures.get(i).get(Math.max(1, bound - System.nanoTime()), TimeUnit.NANOSECONDS);
                        } catch (TimeoutException e) {
                            hung.add(i);
                        }
                    }
                } finally {
                    pool.shutdownNow();
                }
            }
        } finally {
            interrupter.shutdownNow();
            faults.reset();
            runsMs = (System.nanoTime() - t0) / 1_000_000;
            // both at once: a runner's close may wait (bounded) for work it still does in the background
            Thread closing = new Thread(plain::close, "campaign-close");
            closing.start();
            custom.close();
            closing.join(RUN_BOUND.toMillis());
            factory.release();
        }
        // late creates and hung lookups finish on the emulator's side before the ledger is read
        long quiet = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (emulator.inFlight() > 0 && System.nanoTime() < quiet) {
            Thread.sleep(20);
        }
        List<String> stillInHand = emulator.inFlightRequests();
        if (!stillInHand.isEmpty()) {
            logs.original.println("campaign " + adapter + ": the emulator still handles " + stillInHand.size()
                    + " requests 20 s after runner.close() (at " + System.currentTimeMillis() + "): " + stillInHand);
        }
        Duration wall = Duration.ofNanos(System.nanoTime() - t0);
        logs.original.println("campaign " + adapter + ": sequential share " + sequentialMs + " ms, all runs "
                + runsMs + " ms, then runner.close() and the emulator's last requests " + (wall.toMillis() - runsMs)
                + " ms, wall " + wall.toMillis() + " ms");
        Report report = Report.of(adapter, plans, only, outcomes, emulator.ledger(), secret, logs, faults, hung, wall,
                plain.toString() + custom.toString());
        logs.original.println(report.text());
        // what the lifecycle did off the callers' paths, as the application can query it
        String lifecycle = "  lifecycle: " + plain.lifecycleStats().plus(custom.lifecycleStats()).toString()
                .replaceAll(", unresolvedRunIds=\\[[^\\]]*\\]", "");
        logs.original.println(lifecycle);
        keep(adapter, "seed " + seed + ", " + runs + " runs (scale " + SCALE + "), wall " + wall.toMillis() + " ms\n"
                + report.text() + "\n" + lifecycle);

        List<String> problems = new ArrayList<>(report.problems(only >= 0));
        if (only < 0) {
            Map<Fault, Integer> armed = new EnumMap<>(Fault.class);
            plans.forEach(p -> p.faults.forEach((f, n) -> armed.merge(f, n, Integer::sum)));
            for (Fault f : CAMPAIGN_FAULTS) {
                int required = minFires(armed.getOrDefault(f, 0), runs);
                if (knobs.contains(f) && faults.fired(f) < required) {
                    problems.add(f + " fired " + faults.fired(f) + " times (fewer than " + required + "; armed "
                            + armed.getOrDefault(f, 0) + ")");
                }
            }
        }
        if (!problems.isEmpty()) {
            fail(adapter + " campaign, seed " + seed + ": " + String.join("; ", problems)
                    + "\nreplay one run with " + Seeds.replay(adapter) + " -Dsandbox4j.campaign.runs="
                    + runs + " -Dsandbox4j.campaign.replay=" + adapter + ":<run> (a concurrent run replays alone)\n"
                    + report.text());
        }
        assertTrue(report.runs > 0, "no run at all");
    }

    /**
     * Writes a campaign's report to {@code target/campaign-reports/<adapter>.txt} as well: what the log tap's
     * original stream gets lands in {@code target/test-debug.log} among every log line of the test JVM, not
     * on the console, and the figures per runner are wanted after a passing run too.
     */
    static void keep(String adapter, String text) {
        try {
            Path dir = Path.of("target", "campaign-reports");
            Files.createDirectories(dir);
            Files.writeString(dir.resolve(adapter + ".txt"), text + "\n", StandardCharsets.UTF_8);
        } catch (IOException e) {
            System.err.println("campaign " + adapter + ": could not keep the report: " + e);
        }
    }

    /**
     * How often a knob armed {@code armed} times in the plans must have fired: {@link #MIN_FIRES} at
     * {@link #FULL_RUNS} runs, in proportion to the run count (at least once), and never more than it was
     * armed (a seed may arm a knob less often than its average share). A knob that never fires fails the
     * campaign at any size: the campaign cannot pass without meeting every fault it claims.
     */
    static int minFires(int armed, int runs) {
        return Math.max(1, Math.min((int) ((long) MIN_FIRES * runs / FULL_RUNS), armed));
    }

    private static void runAlone(Plan p, SandboxRunner runner, Emulated emulator, ScheduledExecutorService interrupter,
            Map<Integer, Object> outcomes, List<Integer> hung) throws InterruptedException {
        Thread t = new Thread(() -> run(p, runner, emulator, interrupter, outcomes), "campaign-run-" + p.index);
        t.setDaemon(true);
        t.start();
        t.join(RUN_BOUND.toMillis());
        if (t.isAlive()) {
            hung.add(p.index);
            t.interrupt();
        }
    }

    /**
     * Whether the runner takes the campaign's lock-down (an allow-all setup egress, then none) in the
     * configuration it was built with, asked once before any fault is armed by opening and closing one
     * sandbox. A runner may declare lock-down and still refuse this form of it up front (the Docker runner
     * on the engine's host network: {@code UnsupportedPolicyException}, before any request); its lock-down
     * runs would then end before they reach the provider, and the faults armed for them could fire only on
     * other runs, so the required fire counts would depend on timing (a Docker campaign in CI saw 7 cut
     * streams where 8 were required, with 8 runs refused). Such a runner gets allow-all runs instead, as a
     * runner without lock-down does, and the campaign says so. Only a refusal counts: an open that
     * fails otherwise (the Docker proxy's own faults are armed already) took the policy.
     */
    static boolean lockDownAccepted(LogTap logs, String adapter, SandboxRunner runner, Emulated emulator) {
        SandboxSpec probe = Plan.withEgress(SandboxSpec.builder().label("campaign-probe", "lock-down"), Egress.LOCK_DOWN)
                .build();
        try {
            Sandbox s = runner.open(probe);
            s.close();
            // the probe is no run of the campaign (no run label): its own teardown is checked here
            assertTrue(s.teardown() == Teardown.DESTROYED, "the lock-down probe's sandbox was not destroyed: " + s.teardown());
            return true;
        } catch (UnsupportedPolicyException e) {
            logs.original.println("campaign " + adapter + ": the runner refuses the campaign's lock-down up front, so its"
                    + " lock-down runs are allow-all runs: " + e.getMessage());
            return false;
        } catch (SandboxException e) {
            return true; // the policy was taken (a refusal comes before any request); this open met a fault
        }
    }

    /** One run on the current thread, interrupted at its random moment; its flag is clean afterwards. */
    private static void run(Plan p, SandboxRunner runner, Emulated emulator, ScheduledExecutorService interrupter,
            Map<Integer, Object> outcomes) {
        Thread self = Thread.currentThread();
        Object slot = new Object();
        boolean[] done = {false};
        if (p.interruptAfterMs >= 0) {
            interrupter.schedule(() -> {
                synchronized (slot) {
                    if (!done[0]) {
                        self.interrupt();
                    }
                }
            }, p.interruptAfterMs, TimeUnit.MILLISECONDS);
        }
        Object outcome;
        try {
            outcome = runner.run(p.request(emulator));
        } catch (Throwable e) {
            outcome = e;
        }
        synchronized (slot) {
            done[0] = true;
        }
        Thread.interrupted(); // an interrupt that landed late must not reach the next run on this thread
        outcomes.put(p.index, outcome);
    }

    // ---------------------------------------------------------------- one run's plan

    enum Egress { DENY_ALL, ALLOW_ALL, LOCK_DOWN }

    /** Everything random about one run, from the seed, the run count and its index (so one run replays). */
    static final class Plan {
        final int index;
        final String nonce;
        final boolean concurrent;
        final boolean callerClient;
        final long interruptAfterMs;
        final Egress egress;
        final Map<Fault, Integer> faults = new EnumMap<>(Fault.class);

        private Plan(int index, String nonce, boolean concurrent, boolean callerClient, long interruptAfterMs,
                Egress egress) {
            this.index = index;
            this.nonce = nonce;
            this.concurrent = concurrent;
            this.callerClient = callerClient;
            this.interruptAfterMs = interruptAfterMs;
            this.egress = egress;
        }

        /** The exclusive fault of each run, in exact proportions (then shuffled), so every knob gets its share. */
        static List<Fault> mainFaults(long seed, String adapter, int runs, Set<Fault> knobs) {
            Object[][] all = {{null, 2}, {Fault.FAIL_CREATE, 14}, {Fault.LOSE_CREATE_RESPONSE, 14},
                {Fault.LATE_CREATE, 16}, {Fault.GARBLE_CREATE, 15}, {Fault.LOSE_EXEC_RESPONSE, 20},
                {Fault.DROP_STREAM, 19}};
            // the knobs an emulator lacks give their share to the others, in proportion
            List<Object[]> kept = new ArrayList<>();
            int total = 0;
            for (Object[] share : all) {
                if (share[0] == null || knobs.contains((Fault) share[0])) {
                    kept.add(share);
                    total += (Integer) share[1];
                }
            }
            Object[][] shares = kept.toArray(new Object[0][]);
            List<Fault> out = new ArrayList<>(runs);
            for (int i = 0; out.size() < runs; i++) {
                // run i gets the share whose cumulative weight covers it, spread evenly over the runs
                int slot = (int) ((long) i * total / runs) % total;
                int acc = 0;
                for (Object[] share : shares) {
                    acc += (Integer) share[1];
                    if (slot < acc) {
                        out.add((Fault) share[0]);
                        break;
                    }
                }
            }
            Collections.shuffle(out, new Random(seed ^ adapter.hashCode()));
            return out;
        }

        /** Exactly {@code percent} of the runs, spread by a seeded shuffle. */
        static List<Boolean> spread(long seed, String salt, int runs, int percent) {
            List<Boolean> out = new ArrayList<>(runs);
            for (int i = 0; i < runs; i++) {
                out.add((long) i * 100 / runs % 100 < percent);
            }
            Collections.shuffle(out, new Random(seed ^ salt.hashCode()));
            return out;
        }

        static Plan of(long seed, String adapter, int index, Fault main, boolean lockDown, Set<Fault> knobs) {
            Random r = new Random(seed * 1_000_003L + index * 7919L + adapter.hashCode());
            String nonce = "cmpn" + Long.toHexString(seed) + "x" + adapter + "x" + index + "x";
            boolean concurrent = r.nextInt(100) >= SEQUENTIAL_PERCENT;
            boolean caller = r.nextBoolean();
            long interrupt = r.nextInt(100) < 25 ? r.nextInt(1500) : -1;
            int e = r.nextInt(100);
            Egress egress = e < 55 ? Egress.DENY_ALL : e < 80 || !lockDown ? Egress.ALLOW_ALL : Egress.LOCK_DOWN;
            Plan p = new Plan(index, nonce, concurrent, caller, interrupt, egress);
            // one fault that ends the run's course (a create that fails, is lost, late or garbled; or
            // an exec whose answer is lost or whose stream drops), in nearly every run; the rest stack
            if (main != null) {
                p.faults.put(main, 1);
            }
            boolean ambiguousCreate = main == Fault.FAIL_CREATE || main == Fault.LOSE_CREATE_RESPONSE
                    || main == Fault.LATE_CREATE || main == Fault.GARBLE_CREATE;
            if (ambiguousCreate && r.nextInt(100) < 40 && knobs.contains(Fault.HANG_LOOKUP)) {
                p.faults.put(Fault.HANG_LOOKUP, 1);
            }
            return p;
        }

        void arm(Faults f) {
            faults.forEach(f::arm);
        }

        RunRequest request(Emulated emulator) {
            SandboxSpec.Builder spec = withEgress(SandboxSpec.builder().label(RUN_LABEL, Integer.toString(index)), egress);
            return RunRequest.of(spec.build(), Execution.builder(emulator.code(nonce)).budget(BUDGET).build());
        }

        static SandboxSpec.Builder withEgress(SandboxSpec.Builder spec, Egress egress) {
            switch (egress) {
                case DENY_ALL:
                    spec.egress(EgressPolicy.denyAll());
                    break;
                case ALLOW_ALL:
                    spec.egress(EgressPolicy.allowAll());
                    break;
                default:
                    spec.egress(EgressPolicy.denyAll()).setupEgress(EgressPolicy.allowAll()).setupCommand("true")
                            .setupBudget(Duration.ofSeconds(5));
            }
            return spec;
        }

        boolean codeMayReachHost() {
            return egress == Egress.ALLOW_ALL;
        }

        @Override
        public String toString() {
            return "run " + index + (concurrent ? " (concurrent)" : "") + " " + egress
                    + (callerClient ? ", caller client" : "")
                    + (interruptAfterMs >= 0 ? ", interrupt at " + interruptAfterMs + " ms" : "") + ", faults " + faults;
        }
    }

    // ---------------------------------------------------------------- counting

    static final class Report {
        String adapter;
        int runs;
        final List<String> leaked = new ArrayList<>();
        final List<String> doubleRuns = new ArrayList<>();
        final List<String> weaker = new ArrayList<>();
        final List<String> secrets = new ArrayList<>();
        int reportedTeardownFailures;
        int execsWithHostNetwork;
        int execsWithoutNetwork;
        int reportedSandboxes;
        int created;
        final Map<String, Integer> outcomes = new TreeMap<>();
        final Map<String, String> samples = new TreeMap<>();
        /** What the leaked and double runs had in common, to point at a cause (a run counts under each trait). */
        final Map<String, Integer> traits = new TreeMap<>();
        Map<Fault, Integer> fired;
        List<Integer> hung;
        Duration wall;

        static Report of(String adapter, List<Plan> plans, int only, Map<Integer, Object> outcomes, Ledger ledger,
                String secret, LogTap logs, Faults faults, List<Integer> hung, Duration wall, String runnerText) {
            Report rep = new Report();
            rep.adapter = adapter;
            rep.runs = outcomes.size();
            rep.fired = faults.firedCounts();
            rep.hung = List.copyOf(hung);
            rep.wall = wall;
            Map<String, Plan> byNonce = new HashMap<>();
            plans.forEach(p -> byNonce.put(p.nonce, p));
            for (Map.Entry<Integer, Object> e : outcomes.entrySet()) {
                Object o = e.getValue();
                rep.outcomes.merge(describe(o), 1, Integer::sum);
                if (o instanceof Throwable t) {
                    rep.samples.putIfAbsent(describe(o), String.valueOf(t.getMessage()).replace(secret, "<SECRET>"));
                }
                if (reportsPossibleLeak(o)) {
                    rep.reportedTeardownFailures++;
                }
                String text = everything(o);
                if (text.contains(secret)) {
                    rep.secrets.add("run " + e.getKey() + ": " + o.getClass().getSimpleName());
                }
            }
            if (runnerText.contains(secret)) {
                rep.secrets.add("a runner's toString()");
            }
            logs.secretLines().forEach(l -> rep.secrets.add("log line: " + l));

            Map<String, List<String>> nonceSeen = new LinkedHashMap<>();
            for (Ledger.SandboxRecord s : ledger.sandboxes()) {
                String label = s.labels().get(RUN_LABEL);
                if (label == null) {
                    continue;
                }
                rep.created++;
                int index = Integer.parseInt(label);
                Plan plan = plans.get(index);
                Object outcome = outcomes.get(index);
                if (!s.killedByClient()) {
                    if (reportsPossibleLeak(outcome)) {
                        rep.reportedSandboxes++;
                    } else {
                        rep.trait("leaked", plan, outcome);
                        rep.leaked.add(plan + " -> sandbox " + s.id() + (s.live() ? " (live)" : " (expired)")
                                + ", outcome: " + describe(outcome));
                    }
                }
                for (Ledger.Exec x : s.execs()) {
                    Matcher m = NONCE.matcher(x.code());
                    while (m.find()) {
                        nonceSeen.computeIfAbsent(m.group(), k -> new ArrayList<>()).add(s.id());
                        Plan owner = byNonce.get(m.group());
                        if (x.hostNetwork()) {
                            rep.execsWithHostNetwork++;
                        } else {
                            rep.execsWithoutNetwork++;
                        }
                        if (owner != null && x.hostNetwork() && !owner.codeMayReachHost()) {
                            rep.weaker.add(owner + " ran with the host network in " + s.id());
                        }
                    }
                }
            }
            nonceSeen.forEach((nonce, sandboxes) -> {
                if (sandboxes.size() > 1) {
                    Plan p = byNonce.get(nonce);
                    if (p != null) {
                        rep.trait("double", p, outcomes.get(p.index));
                    }
                    rep.doubleRuns.add((p == null ? nonce : p.toString()) + " -> code received " + sandboxes.size()
                            + " times in " + sandboxes + ", outcome: " + (p == null ? "?" : describe(outcomes.get(p.index))));
                }
            });
            return rep;
        }

        private void trait(String what, Plan p, Object outcome) {
            List<String> t = new ArrayList<>();
            if (outcome instanceof RunResult) {
                t.add("the run looked fine");
            }
            if (p.callerClient) {
                t.add("caller client");
            }
            if (p.interruptAfterMs >= 0) {
                t.add("interrupted");
            }
            p.faults.keySet().forEach(f -> t.add(f.name()));
            t.forEach(x -> traits.merge(what + " with " + x, 1, Integer::sum));
        }

        /** The problems found; a replayed single run is not held to the campaign-wide checks. */
        List<String> problems(boolean replay) {
            List<String> out = new ArrayList<>();
            if (!replay && (execsWithHostNetwork == 0 || execsWithoutNetwork == 0)) {
                out.add("the egress check saw " + execsWithHostNetwork + " runs' code with the host network and "
                        + execsWithoutNetwork + " without: it needs both to be able to fail");
            }
            if (!hung.isEmpty()) {
                out.add(hung.size() + " runs did not end within " + RUN_BOUND.toSeconds() + " s: " + hung);
            }
            if (!leaked.isEmpty()) {
                out.add(leaked.size() + " leaked (first: " + leaked.get(0) + ")");
            }
            if (!doubleRuns.isEmpty()) {
                out.add(doubleRuns.size() + " double runs (first: " + doubleRuns.get(0) + ")");
            }
            if (!secrets.isEmpty()) {
                out.add(secrets.size() + " secrets (first: " + secrets.get(0) + ")");
            }
            if (!weaker.isEmpty()) {
                out.add(weaker.size() + " weaker egress (first: " + weaker.get(0) + ")");
            }
            return out;
        }

        String text() {
            StringBuilder b = new StringBuilder();
            b.append("campaign ").append(adapter).append(" seed ").append(Seeds.of(adapter)).append(": runs ").append(runs)
                    .append(", sandboxes created ").append(created)
                    .append(", leaked ").append(leaked.size())
                    .append(", double runs ").append(doubleRuns.size())
                    .append(", reported teardown failures ").append(reportedTeardownFailures)
                    .append(" (sandboxes left and reported ").append(reportedSandboxes).append(")")
                    .append(", secrets ").append(secrets.size())
                    .append(", weaker egress ").append(weaker.size())
                    .append(" (of ").append(execsWithHostNetwork + execsWithoutNetwork).append(" execs, ")
                    .append(execsWithHostNetwork).append(" with the host network)")
                    .append(", hung ").append(hung.size())
                    .append(", wall ").append(wall.toMillis()).append(" ms\n");
            b.append("  faults fired: ").append(fired).append('\n');
            b.append("  outcomes: ").append(outcomes).append('\n');
            if (!traits.isEmpty()) {
                b.append("  traits: ").append(traits).append('\n');
            }
            samples.forEach((k, v) -> b.append("  e.g. ").append(k).append(": ").append(v).append('\n'));
            leaked.forEach(l -> b.append("  leaked: ").append(l).append('\n'));
            doubleRuns.forEach(l -> b.append("  double run: ").append(l).append('\n'));
            weaker.forEach(l -> b.append("  weaker egress: ").append(l).append('\n'));
            secrets.forEach(l -> b.append("  secret: ").append(l).append('\n'));
            return b.toString();
        }

        static String describe(Object o) {
            if (o == null) {
                return "none (hung)";
            }
            if (o instanceof RunResult r) {
                return "result " + r.status() + "/" + r.teardown();
            }
            return o.getClass().getSimpleName() + (o instanceof SandboxException e
                    ? "(" + (e.requestMayHaveSucceeded() ? "mayHaveSucceeded" : "") + (e.codeMayHaveRun() ? " codeMayHaveRun" : "") + ")"
                    : "");
        }

        /** Every text a user can see of an outcome: toString, messages, causes and suppressed, recursively. */
        static String everything(Object o) {
            StringBuilder b = new StringBuilder();
            if (o instanceof Throwable t) {
                walk(t, b, Collections.newSetFromMap(new java.util.IdentityHashMap<>()));
            } else if (o != null) {
                b.append(o);
                if (o instanceof RunResult r) {
                    b.append(r.stdout()).append(r.stderr());
                }
            }
            return b.toString();
        }

        private static void walk(Throwable t, StringBuilder b, java.util.Set<Throwable> seen) {
            if (t == null || !seen.add(t)) {
                return;
            }
            b.append(t).append('\n').append(t.getMessage()).append('\n').append(t.getLocalizedMessage()).append('\n');
            walk(t.getCause(), b, seen);
            for (Throwable s : t.getSuppressed()) {
                walk(s, b, seen);
            }
        }
    }

    // ---------------------------------------------------------------- log capture

    /**
     * A tee on System.err, where slf4j-simple writes every line (test resources set
     * {@code cacheOutputStream=false}, so the stream is looked up per line): each line is scanned for
     * the secrets, and only lines holding one are kept (shown with the secret masked). Nothing is
     * forwarded: the campaign's thousands of DEBUG lines would drown the report.
     */
    static final class LogTap extends OutputStream {
        final PrintStream original;
        private final List<String> secrets;
        private final List<String> hits = Collections.synchronizedList(new ArrayList<>());
        private final AtomicInteger lines = new AtomicInteger();
        private final java.io.ByteArrayOutputStream line = new java.io.ByteArrayOutputStream();

        private LogTap(PrintStream original, List<String> secrets) {
            this.original = original;
            this.secrets = secrets;
        }

        static LogTap install(List<String> secrets) {
            LogTap tap = new LogTap(System.err, secrets);
            System.setErr(new PrintStream(tap, true, StandardCharsets.UTF_8));
            return tap;
        }

        void uninstall() {
            System.setErr(original);
            original.println("fault campaign: " + lines.get() + " log lines scanned for secrets, "
                    + hits.size() + " held one");
        }

        @Override
        public synchronized void write(int b) {
            if (b == '\n') {
                scan();
            } else {
                line.write(b);
            }
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            for (int i = off; i < off + len; i++) {
                write(b[i]);
            }
        }

        private void scan() {
            String s = line.toString(StandardCharsets.UTF_8);
            line.reset();
            lines.incrementAndGet();
            for (String secret : secrets) {
                if (s.contains(secret) && hits.size() < 50) {
                    hits.add(s.replace(secret, "<SECRET>"));
                }
            }
        }

        List<String> secretLines() {
            return List.copyOf(hits);
        }

        void clear() {
            hits.clear();
        }
    }
}
