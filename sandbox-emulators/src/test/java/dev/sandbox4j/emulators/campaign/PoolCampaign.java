package dev.sandbox4j.emulators.campaign;

import static org.junit.jupiter.api.Assertions.fail;

import dev.sandbox4j.api.exception.AttachRefusedException;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.compose.WarmPoolRunner;
import dev.sandbox4j.spi.Backoff;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.emulators.Faults;
import dev.sandbox4j.emulators.Faults.Fault;
import dev.sandbox4j.emulators.Ledger;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Limits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import java.util.regex.Matcher;

/**
 * The warm pool and attach under the campaign's faults (issue 29), shared by every adapter's pool
 * campaign (the REST adapters' in {@link PoolFaultCampaignTest}, Modal's in its emulator's module). On one
 * emulator, seeded by the adapter's {@link Seeds campaign seed}:
 * <ol>
 *   <li><b>refills under faults:</b> a {@link WarmPoolRunner} of size 2 serves one-shot runs, one per round, while each
 *       round arms one create fault, which lands on a background refill (or on a run's fallback create):
 *       failed, throttled, lost, late and garbled creates, a lost create whose lookup hangs, and hung
 *       creates (every create held past the client's deadline, then made: what the lifecycle has to find);
 *       every kind the emulator honours is armed in the first rounds, and each must have fired;</li>
 *   <li><b>expired pooled sandboxes:</b> every few rounds, once the pool is full, its idle sandboxes are
 *       destroyed behind its back (through a second runner, as the provider's clock or console would):
 *       the runs served one must fail, never run in another sandbox's place;</li>
 *   <li><b>closed with creates in flight:</b> two more pools are closed right after a run started their
 *       refills, one with slow creates (they answer after close began, and must be destroyed) and one with
 *       hung ones (ambiguous creates the runner resolves and destroys on its close);</li>
 *   <li><b>attach under faults:</b> a detached session attached again after its sandbox was destroyed
 *       (refused, as not found), after its policy label was changed (refused, sandbox left alone), and
 *       with its lookup lost (slow answers past the client's deadline, and on the REST emulators a garbled
 *       answer): refused, the sandbox left alone, and attached once the fault is gone, its own file there.</li>
 * </ol>
 * After every runner is closed, from the emulator's {@link Ledger}: no sandbox left live (the pool's
 * close destroys what it holds and what its creates return), every sandbox received at most one run's
 * code and at most one exec (a pooled sandbox is used once, never after its code ran), no run's code
 * reached two sandboxes, no run was served a sandbox destroyed behind the pool's back, and the pool
 * served runs. A case the provider cannot stage (a label change on a provider without one, {@link
 * Target#relabelImpossible()}) is not run: printed as {@code NOT RUN} with its reason and returned, for
 * the adapter's test to assert. {@code -Dsandbox4j.poolcampaign.rounds} (default: one per create fault the emulator
 * honours, 7 on the REST emulators) and {@code sandbox4j.campaign.scale} (10: ten times the rounds) size it.
 */
final class PoolCampaign {
    /** Rounds at scale 1; 0 (the default) is one round per create fault the emulator honours. */
    static final int ROUNDS = Integer.getInteger("sandbox4j.poolcampaign.rounds", 0);
    /** Runs per round: served from the pool when it is full; the refill it starts (or its fallback) meets the fault. */
    static final int RUNS_PER_ROUND = 1;
    /** Every this many rounds, the idle pooled sandboxes are destroyed behind the pool's back. */
    static final int EXPIRE_EVERY = 3;
    /** How long a round waits for its armed fault to fire before the next round disarms it. */
    static final Duration ROUND_FIRE_WAIT = Duration.ofSeconds(10);
    static final String TAG = "poolcmp";
    /** Generous: a bound a healthy run never meets, so only a real hang or leak reaches it. */
    static final Duration BOUND = Duration.ofSeconds(60);
    /** The create faults a pool's refills meet, in the order the first rounds arm them. */
    static final Fault[] CREATE_FAULTS = {Fault.FAIL_CREATE, Fault.RATE_LIMIT_CREATE, Fault.LOSE_CREATE_RESPONSE,
        Fault.LATE_CREATE, Fault.HANG_LOOKUP, Fault.GARBLE_CREATE};
    /** The pseudo-fault "every create held past the client's deadline": not a knob count, so not in {@link Fault}. */
    static final String HUNG_CREATE = "HUNG_CREATE";
    static final Duration MAX_IDLE = Duration.ofMinutes(2);

    private PoolCampaign() {
    }

    /** What the pool campaign needs of an emulator and its adapter. */
    interface Target {
        Faults faults();

        Ledger ledger();

        /** Requests being handled right now; 0 where the emulator does not count them. */
        int inFlight();

        /** The knobs this emulator honours. */
        Set<Fault> knobs();

        /**
         * Changes one label of a live sandbox on the provider's side; false when there is none, or when the
         * provider cannot change a live sandbox's labels at all ({@link #relabelImpossible()}).
         */
        boolean alterLabel(String id, String key, String value);

        /**
         * Why this provider cannot change a label of a live sandbox (so {@link #alterLabel} returns false for
         * a live one), or null (the default) when it can. When set and {@link #alterLabel} returns false for
         * a live sandbox, the attach-after-relabel case is reported as not run, with this reason, in the
         * printed line and in what {@link PoolCampaign#campaign} returns; it never counts as passed.
         */
        default String relabelImpossible() {
            return null;
        }

        /** A new adapter runner on the emulator, with the campaign's short client deadlines. */
        SandboxRunner runner();

        /** The adapter's client deadline for one request: a hold longer than this loses the answer. */
        Duration requestTimeout();
    }

    /**
     * Runs the pool campaign on {@code target}; fails on any problem.
     *
     * @return the cases not run on this target, each with its reason (empty unless {@link Target#relabelImpossible()})
     */
    static List<String> campaign(String adapter, Target target) {
        long seed = Seeds.of(adapter);
        Random random = new Random(seed * 31 + adapter.hashCode());
        Faults faults = target.faults().reset().lateCreate(0, Campaign.LATE_CREATE_MAX)
                .hangLookup(0, Campaign.LOOKUP_HANG).failCreate(503, 0).rateLimitCreate(0, 0);
        Duration hold = target.requestTimeout().plusMillis(400);
        List<String> kinds = new ArrayList<>();
        for (Fault f : CREATE_FAULTS) {
            if (target.knobs().contains(f)) {
                kinds.add(f.name());
            }
        }
        kinds.add(HUNG_CREATE);
        List<String> plan = new ArrayList<>(kinds); // every kind once first, then seeded picks
        Collections.shuffle(plan, random);
        int rounds = Math.max(ROUNDS, kinds.size()) * Campaign.SCALE;
        while (plan.size() < rounds) {
            plan.add(kinds.get(random.nextInt(kinds.size())));
        }
        SandboxSpec spec = SandboxSpec.defaults();
        List<String> problems = new ArrayList<>();
        Map<String, Integer> outcomes = new TreeMap<>();
        Map<String, String> servedTo = new HashMap<>(); // sandbox id -> the run it served
        Set<String> expired = new LinkedHashSet<>();
        Map<String, Integer> armed = new TreeMap<>();
        int runs = 0;
        int servedExpired = 0;
        long handedOut = 0;
        long refillFailures = 0;
        String report;

        long t0 = System.nanoTime();
        List<String> phases = new ArrayList<>();
        SandboxRunner killer = target.runner();
        SandboxRunner runner = target.runner();
        WarmPoolRunner pool = pool(runner, spec, Duration.ofSeconds(60));
        try {
            for (int round = 0; round < plan.size(); round++) {
                String kind = plan.get(round);
                armed.merge(kind, 1, Integer::sum);
                faults.reset();
                Fault armedFault = kind.equals(HUNG_CREATE) ? null : Fault.valueOf(kind);
                int firedBefore = armedFault == null ? 0 : faults.fired(armedFault);
                if (kind.equals(HUNG_CREATE)) {
                    faults.createDelay(hold);
                } else {
                    Fault f = Fault.valueOf(kind);
                    if (f == Fault.HANG_LOOKUP) {
                        faults.arm(Fault.LOSE_CREATE_RESPONSE, 1); // a lookup follows only an ambiguous create
                    }
                    faults.arm(f, 1);
                }
                for (int k = 0; k < RUNS_PER_ROUND; k++) {
                    String run = TAG + Long.toHexString(seed) + "r" + runs++ + "x";
                    Object outcome = oneRun(pool, spec, run);
                    outcomes.merge(Campaign.Report.describe(outcome), 1, Integer::sum);
                    if (outcome instanceof RunResult r) {
                        String before = servedTo.put(r.sandboxId(), run);
                        if (before != null) {
                            problems.add("sandbox " + r.sandboxId() + " served " + before + " and then " + run);
                        }
                        if (expired.contains(r.sandboxId())) {
                            problems.add(run + " reported a result from " + r.sandboxId() + ", destroyed behind the pool's back");
                        }
                        if (!r.stdout().equals(run + "\n")) {
                            problems.add(run + " printed " + r.stdout().strip() + " (" + r + ")");
                        }
                    }
                }
                if (armedFault != null) {
                    // the fault may be taken by a background refill after the round's runs (a lookup that
                    // follows a lost refill create comes later still): the round ends once it fired, bounded,
                    // not at the next reset, which would disarm it unfired (1 run in 13 saw HANG_LOOKUP so)
                    long until = System.nanoTime() + ROUND_FIRE_WAIT.toNanos();
                    while (faults.fired(armedFault) == firedBefore && System.nanoTime() - until < 0) {
                        LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
                    }
                }
                if (round % EXPIRE_EVERY == EXPIRE_EVERY - 1) {
                    faults.reset();
                    int idle = waitFull(pool, problems);
                    Set<String> killed = expireIdle(target, killer, idle, problems);
                    expired.addAll(killed);
                    // the next runs are served the pool's destroyed sandboxes (the other ids killed were
                    // late creates the lifecycle was still resolving): each must fail
                    long served = pool.handedOut();
                    for (int k = 0; k < idle; k++) {
                        String run = TAG + Long.toHexString(seed) + "r" + runs++ + "x";
                        Object outcome = oneRun(pool, spec, run);
                        outcomes.merge("after expiry: " + Campaign.Report.describe(outcome), 1, Integer::sum);
                        if (outcome instanceof RunResult r) {
                            problems.add(run + ", served after the pool's sandboxes were destroyed, returned a result from "
                                    + r.sandboxId() + " (expired: " + killed + ")");
                        } else {
                            servedExpired++;
                        }
                    }
                    if (pool.handedOut() - served != idle) {
                        problems.add("after the expiry the pool handed out " + (pool.handedOut() - served) + " of its "
                                + idle + " destroyed sandboxes");
                    }
                }
            }
            faults.reset();
            handedOut = pool.handedOut();
            refillFailures = pool.refillFailures();
        } finally {
            faults.reset();
            pool.close(); // destroys the idle ones, waits for refills in flight, closes the runner
        }
        phases.add("rounds " + (System.nanoTime() - t0) / 1_000_000 + " ms");

        // closed while creates are in flight: slow creates (answered after close began), then hung ones
        closeWithCreatesInFlight(target, spec, faults, Duration.ofMillis(400), "slow", outcomes);
        closeWithCreatesInFlight(target, spec, faults, hold, "hung", outcomes);
        phases.add("closes " + (System.nanoTime() - t0) / 1_000_000 + " ms");

        List<String> notRun = new ArrayList<>();
        List<String> attach = attachUnderFaults(adapter, target, killer, problems, notRun);
        killer.close();
        phases.add("attach " + (System.nanoTime() - t0) / 1_000_000 + " ms");

        for (String kind : kinds) {
            if (!kind.equals(HUNG_CREATE) && faults.fired(Fault.valueOf(kind)) == 0) {
                problems.add(kind + " was armed " + armed.get(kind) + " times and never fired");
            }
        }
        // late and hung creates land, and the lifecycle destroys them, before the ledger is read
        Set<String> live = settle(target);
        phases.add("settled " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        if (!live.isEmpty()) {
            problems.add(live.size() + " sandboxes live after every runner's close: " + live);
        }
        Map<String, List<String>> codeIn = new HashMap<>();
        for (Ledger.SandboxRecord s : target.ledger().sandboxes()) {
            Set<String> nonces = new HashSet<>();
            for (Ledger.Exec x : s.execs()) {
                Matcher m = java.util.regex.Pattern.compile(TAG + "[0-9a-f]+r[0-9]+x").matcher(x.code());
                while (m.find()) {
                    nonces.add(m.group());
                    codeIn.computeIfAbsent(m.group(), n -> new ArrayList<>()).add(s.id());
                }
            }
            if (nonces.size() > 1) {
                problems.add("sandbox " + s.id() + " ran the code of " + nonces.size() + " runs: " + nonces);
            }
            if (!nonces.isEmpty() && s.execs().size() > 1) {
                problems.add("pooled sandbox " + s.id() + " got " + s.execs().size() + " execs (used after its code ran)");
            }
            if (expired.contains(s.id()) && !s.execs().isEmpty()) {
                problems.add("sandbox " + s.id() + " got code after it was destroyed behind the pool's back: " + s.execs());
            }
        }
        codeIn.forEach((nonce, in) -> {
            if (in.size() > 1) {
                problems.add(nonce + "'s code reached " + in.size() + " sandboxes: " + in);
            }
        });
        if (handedOut == 0) {
            problems.add("the pool never served a run");
        }
        if (expired.isEmpty() || servedExpired == 0) {
            problems.add("no run was served a sandbox destroyed behind the pool's back (expired " + expired.size() + ")");
        }
        report = "pool campaign " + adapter + " (seed " + seed + "): " + runs + " runs, " + plan.size() + " rounds armed "
                + armed + "; fired " + faults.firedCounts() + "; outcomes " + outcomes + "; pool handed out " + handedOut
                + ", refill failures " + refillFailures + ", expired behind its back " + expired.size() + " (runs served one "
                + servedExpired + "); at " + phases + "; attach " + attach + "; ledger " + target.ledger()
                + (notRun.isEmpty() ? "" : "; NOT RUN " + notRun);
        System.out.println(report);
        Campaign.keep("pool-" + adapter, report);
        for (String n : notRun) {
            System.out.println("pool campaign " + adapter + ": NOT RUN (not counted as passed): " + n);
        }
        if (!problems.isEmpty()) {
            fail(adapter + " pool campaign, seed " + seed + " (replay with " + Seeds.replay(adapter) + "): "
                    + String.join("; ", problems) + "\n" + report);
        }
        return List.copyOf(notRun);
    }

    static WarmPoolRunner pool(SandboxRunner runner, SandboxSpec spec, Duration closeTimeout) {
        return WarmPoolRunner.builder(runner, spec).size(2).refillThreads(2).maxIdle(MAX_IDLE)
                .budget(Campaign.BUDGET).closeTimeout(closeTimeout)
                .backoff(Backoff.builder().base(Duration.ofMillis(20)).max(Duration.ofMillis(200)).build()).build();
    }

    private static Object oneRun(SandboxRunner pool, SandboxSpec spec, String nonce) {
        try {
            return pool.run(RunRequest.of(spec, Execution.builder("print('" + nonce + "')").budget(Campaign.BUDGET).build()));
        } catch (RuntimeException e) {
            return e;
        } finally {
            Thread.interrupted();
        }
    }

    /** Waits (bounded) until the pool is full; returns how many it holds. */
    private static int waitFull(WarmPoolRunner pool, List<String> problems) {
        long until = System.nanoTime() + BOUND.toNanos();
        while (pool.idle() < 2 && System.nanoTime() - until < 0) {
            LockSupport.parkNanos(Duration.ofMillis(10).toNanos()); // a bounded poll on a condition
        }
        if (pool.idle() < 2) {
            problems.add("the pool did not refill to 2 within " + BOUND.toSeconds() + " s once the faults were off");
        }
        return pool.idle();
    }

    /**
     * Destroys every live sandbox it can through another runner: with no run in flight, faults off and the
     * pool full, the live ones are the pool's idle ones, plus any late create the lifecycle is still
     * resolving (which may not be attachable yet: left to the lifecycle, and to the final live count).
     * At least the {@code idle} pooled ones must be destroyed. Returns the ids destroyed.
     */
    private static Set<String> expireIdle(Target target, SandboxRunner killer, int idle, List<String> problems) {
        Set<String> killed = new LinkedHashSet<>();
        SandboxSpec spec = SandboxSpec.defaults();
        // what the pool opens its sandboxes with: its spec with the pool's lifetime (attach reads both back);
        // a late create still being resolved may be a run's fresh one-shot sandbox, with the run's lifetime
        List<SandboxSpec> specs = List.of(
                spec.toBuilder().limits(spec.limits().toBuilder()
                        .lifetime(MAX_IDLE.plus(Campaign.BUDGET).plus(SandboxSpec.LIFETIME_MARGIN)).build()).build(),
                spec.toBuilder().limits(spec.limits().toBuilder()
                        .lifetime(Campaign.BUDGET.plus(SandboxSpec.LIFETIME_MARGIN)).build()).build());
        List<String> refused = new ArrayList<>();
        for (String id : target.ledger().liveIds()) {
            for (SandboxSpec s : specs) {
                try {
                    killer.attach(id, s).close();
                    killed.add(id);
                    break;
                } catch (RuntimeException e) {
                    refused.add(id + ": " + e);
                }
            }
        }
        if (killed.size() < idle) {
            problems.add("destroyed " + killed.size() + " of the pool's " + idle + " idle sandboxes behind its back: " + refused);
        }
        return killed;
    }

    /** A pool whose refills are in flight (held by {@code hold}) when it is closed. */
    private static void closeWithCreatesInFlight(Target target, SandboxSpec spec, Faults faults, Duration hold,
            String what, Map<String, Integer> outcomes) {
        SandboxRunner runner = target.runner();
        WarmPoolRunner pool = pool(runner, spec, Duration.ofMillis(100)); // shorter than the hold: close returns first
        faults.reset().createDelay(hold); // the pool's first refills are in flight from build()
        Object outcome = oneRun(pool, spec, TAG + "c" + what + "x");
        outcomes.merge("closed with " + what + " creates in flight, its run: " + Campaign.Report.describe(outcome), 1,
                Integer::sum);
        pool.close();
        faults.createDelay(Duration.ZERO);
    }

    /** Attach after the sandbox is gone, after its policy label changed, and with its lookup lost. */
    private static List<String> attachUnderFaults(String adapter, Target target, SandboxRunner killer,
            List<String> problems, List<String> notRun) {
        List<String> seen = new ArrayList<>();
        SandboxSpec deny = SandboxSpec.builder().egress(EgressPolicy.denyAll())
                .limits(Limits.builder().lifetime(Duration.ofMinutes(2)).build()).build();
        SandboxSpec allow = deny.toBuilder().egress(EgressPolicy.allowAll()).build();
        Faults faults = target.faults();
        SandboxRunner runner = target.runner();
        try {
            // gone: destroyed by another client after the detach
            String gone = detached(runner, deny, "gone");
            killer.attach(gone, deny).close();
            Object g = refusal(() -> runner.attach(gone, deny), problems, "attach to a destroyed sandbox");
            seen.add("gone: " + g);
            if (!(g instanceof dev.sandbox4j.api.exception.SandboxNotFoundException) && !(g instanceof AttachRefusedException)) {
                problems.add("attach to a destroyed sandbox: " + g + ", neither not found nor refused");
            }

            // policy changed on the provider's side: refused, and the sandbox left alone
            String changed = detached(runner, deny, "changed");
            String label = CreateRequest.of("x", deny).labels().get(CreateRequest.POLICY_LABEL);
            boolean relabelled = target.alterLabel(changed, CreateRequest.POLICY_LABEL,
                    CreateRequest.of("x", allow).labels().get(CreateRequest.POLICY_LABEL));
            String impossible = target.relabelImpossible();
            if (relabelled && impossible != null) {
                problems.add("alterLabel relabelled " + changed + " on a target that says it cannot: " + impossible);
            }
            if (!relabelled && impossible != null && target.ledger().liveIds().contains(changed)) {
                // the provider cannot stage the case: reported as not run, never as passed; the session is
                // still read back (its own file there) and closed
                notRun.add("attach after the policy label changed: " + impossible);
                seen.add("policy changed: NOT RUN (" + impossible + ")");
                seen.add("unchanged: " + readBack(runner, changed, deny, "changed", problems));
            } else {
                if (!relabelled) {
                    problems.add("no sandbox " + changed + " to relabel");
                }
                Object r = refusal(() -> runner.attach(changed, deny), problems, "attach to a relabelled sandbox");
                seen.add("policy changed: " + r);
                if (!(r instanceof AttachRefusedException)) {
                    problems.add("attach to a relabelled sandbox: " + r + ", not AttachRefusedException");
                }
                if (!target.ledger().liveIds().contains(changed)) {
                    problems.add("a refused attach destroyed " + changed);
                }
                target.alterLabel(changed, CreateRequest.POLICY_LABEL, label);
                seen.add("restored: " + readBack(runner, changed, deny, "changed", problems));
            }

            // the lookup lost: every answer held past the client's deadline, then (REST) a garbled answer
            String lost = detached(runner, deny, "lost");
            faults.slow(target.requestTimeout().plusMillis(400));
            Object slow = refusal(() -> runner.attach(lost, deny), problems, "attach with its lookup held past the deadline");
            faults.slow(Duration.ZERO);
            seen.add("lookup lost: " + slow);
            if (slow instanceof SandboxException e && !e.isRetriable()) {
                problems.add("a lost attach lookup is not retriable: " + e);
            }
            if (target.knobs().contains(Fault.GARBLE_ANSWER)) {
                // a lookup is idempotent: the adapter may ask again and attach, or fail retriably; either way
                // the sandbox stays, and a detached attach leaves it for the read-back below
                faults.reset().arm(Fault.GARBLE_ANSWER, 1);
                Object garbled;
                try {
                    Sandbox s = runner.attach(lost, deny);
                    s.detach();
                    s.close();
                    garbled = "attached";
                } catch (SandboxException e) {
                    garbled = e;
                    if (!e.isRetriable()) {
                        problems.add("a garbled attach lookup is not retriable: " + e);
                    }
                }
                seen.add("lookup garbled: " + garbled + " (fired " + faults.fired(Fault.GARBLE_ANSWER) + ")");
                if (faults.fired(Fault.GARBLE_ANSWER) != 1) {
                    problems.add("the garbled answer armed for attach fired " + faults.fired(Fault.GARBLE_ANSWER) + " times");
                }
                faults.reset();
            }
            if (!target.ledger().liveIds().contains(lost)) {
                problems.add("a failed attach destroyed " + lost);
            }
            seen.add("then: " + readBack(runner, lost, deny, "lost", problems));
        } catch (RuntimeException e) {
            problems.add(adapter + " attach under faults: " + e);
        } finally {
            faults.reset();
            runner.close();
        }
        return seen;
    }

    /** A session that wrote {@code tag} to a file, detached: it stays for attach. */
    private static String detached(SandboxRunner runner, SandboxSpec spec, String tag) {
        try (Sandbox s = runner.open(spec)) {
            s.exec(Execution.python("open('t', 'w').write('" + tag + "')"));
            s.detach();
            return s.id();
        }
    }

    /** Attaches, reads the session's file and closes the sandbox (destroying it). */
    private static String readBack(SandboxRunner runner, String id, SandboxSpec spec, String tag, List<String> problems) {
        try (Sandbox s = runner.attach(id, spec)) {
            String read = s.exec(Execution.python("print(open('t').read())")).stdout();
            if (!read.equals(tag + "\n")) {
                problems.add("attached " + id + " read back " + read + ", not " + tag);
            }
            return "attached, read back " + read.strip();
        }
    }

    /** The exception an attach must end with; a problem when it attached instead (the sandbox is closed). */
    private static Object refusal(Supplier<Sandbox> attach, List<String> problems, String what) {
        try {
            Sandbox s = attach.get();
            s.detach();
            s.close();
            problems.add(what + " attached " + s.id());
            return "attached";
        } catch (RuntimeException e) {
            return e;
        }
    }

    /** Waits (bounded) until the emulator answered everything and holds no live sandbox; returns what is left. */
    private static Set<String> settle(Target target) {
        long until = System.nanoTime() + BOUND.toNanos();
        while ((target.inFlight() > 0 || !target.ledger().liveIds().isEmpty()) && System.nanoTime() - until < 0) {
            LockSupport.parkNanos(Duration.ofMillis(20).toNanos()); // a bounded poll on a condition
        }
        return target.ledger().liveIds();
    }
}
