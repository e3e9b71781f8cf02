package dev.sandbox4j.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import java.net.InetAddress;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The contract every {@link SandboxRunner} passes. A runner's test extends this class and supplies the
 * runner; cases skip only when the runner's {@link Capabilities} say it cannot do what they need, with
 * an assumption naming the capability.
 *
 * <pre>{@code
 * class LocalSandboxRunnerContractTest extends SandboxRunnerContract {
 *     protected SandboxRunner createRunner() { return LocalSandboxRunner.create(); }
 * }
 * }</pre>
 *
 * <p>Hooks a subclass may override: {@link #liveResources()} (a leak count, checked to return to its
 * value after every test), {@link #canaryReachingPolicy()} (the egress under which the sandbox reaches
 * the host's canary listener, for the control run that shows the canary can fail), {@link #canaryHost()}
 * and {@link #canaryBindAddress()} (where the listener is and how the sandbox addresses it; an emulator
 * in another process reaches the same loopback), and {@link #timeoutGrace()}.
 *
 * <p>The test JVM's environment must hold {@value #HOST_SECRET_VARIABLE} (set it in Surefire's
 * {@code environmentVariables}): the suite checks that its value is nowhere in the sandbox.
 *
 * <p>All code runs as Python unless a case is about another language; output is checked through
 * markers and hashes, so it does not depend on the sandbox's locale or its other files.
 *
 * @since 0.1.0
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class SandboxRunnerContract implements ContractContext, BasicsCases, TimeCases, EgressCases,
        OutputCases, IntegrityCases, ContainmentCases, SessionCases, InterruptCases, FilesCases, StreamingCases,
        AttachCases, PoolCases, NetworkLimitCases {
    /** A host environment variable whose value must never be visible in a sandbox. */
    public static final String HOST_SECRET_VARIABLE = "SANDBOX4J_TCK_HOST_SECRET";

    private SandboxRunner runner;
    private OptionalLong baseline = OptionalLong.empty();

    /**
     * Creates the runner under test, once for the class; it is closed after the last test.
     *
     * @return the runner; null fails every case
     */
    protected abstract SandboxRunner createRunner();

    /**
     * How many sandboxes (or processes, or remote resources) the runner holds right now, or empty
     * when it cannot tell. After every test the count must be back to its value before the test.
     */
    @Override
    public OptionalLong liveResources() {
        return OptionalLong.empty();
    }

    /**
     * An egress under which code in the sandbox reaches the canary listener, for the control run. The
     * default is allow-all when the runner declares {@link Capabilities.Egress#ALLOW_ALL}.
     */
    @Override
    public Optional<EgressPolicy> canaryReachingPolicy() {
        return runner.capabilities().supports(Capabilities.Egress.ALLOW_ALL)
                ? Optional.of(EgressPolicy.allowAll()) : Optional.empty();
    }

    /**
     * The setup egress of the lock-down cases ({@link EgressCases}): one under which a setup command reaches
     * the canary and that the runner can lock down from. The cases reach the canary straight, or through a
     * {@code CONNECT} tunnel of the runner's proxy when the sandbox's {@code HTTPS_PROXY} is set, so a runner
     * whose lock-down works through its proxy (the Docker runner, whose allow-all test network is the host's,
     * which no engine can take from a live container) supplies a list that admits {@link #canaryHost()}.
     * Default {@link #canaryReachingPolicy()}.
     */
    @Override
    public Optional<EgressPolicy> lockDownCanaryPolicy() {
        return canaryReachingPolicy();
    }

    /**
     * The canary of the domain-list case, when the runner under test was built for it ({@link ListCanary}:
     * its resolver answers {@link ListCanary#resolution()}, {@link ListCanary#ALLOWED} is routed to the
     * canary, the canary's port is a domain port). Default empty: a runner that declares domain lists but
     * was not set up so skips that case, saying so.
     */
    @Override
    public Optional<ListCanary> listCanary() {
        return Optional.empty();
    }

    /** The address code in the sandbox connects to, to reach the canary listener. Default {@code 127.0.0.1}. */
    @Override
    public String canaryHost() {
        return "127.0.0.1";
    }

    /** The address the canary listener binds to (on an ephemeral port). Default the loopback address. */
    @Override
    public InetAddress canaryBindAddress() {
        return InetAddress.getLoopbackAddress();
    }

    /**
     * A name the machine running the tests can resolve (the DNS case checks that it cannot be resolved
     * under deny-all). Default {@code repo.maven.apache.org}, which the build itself resolved.
     */
    @Override
    public String dnsProbeName() {
        return "repo.maven.apache.org";
    }

    /** How long after the budget a timed-out run may take to come back. Default 2 s. */
    @Override
    public Duration timeoutGrace() {
        return Duration.ofSeconds(2);
    }

    /** The runner under test. */
    @Override
    public final SandboxRunner runner() {
        return runner;
    }

    @BeforeAll
    final void createTheRunner() {
        runner = createRunner();
        assertNotNull(runner, "createRunner() returned null");
    }

    @AfterAll
    final void closeTheRunner() {
        if (runner != null) {
            runner.close();
        }
    }

    @BeforeEach
    final void recordLiveResources() {
        baseline = liveResources();
    }

    @AfterEach
    final void nothingLeaked() throws InterruptedException {
        if (baseline.isEmpty()) {
            return;
        }
        long expected = baseline.getAsLong();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        OptionalLong now = liveResources();
        // teardown is synchronous for most runners; allow a remote one a moment to report it
        while (now.isPresent() && now.getAsLong() != expected && System.nanoTime() < until) {
            Thread.sleep(20);
            now = liveResources();
        }
        assertEquals(expected, now.orElse(expected), "live resources after the test (leak)");
    }

    @Override
    public final void assertLeakCountBackToBaseline() {
        if (baseline.isPresent()) {
            assertEquals(baseline.getAsLong(), liveResources().orElse(baseline.getAsLong()),
                    "live resources right after the run (leak)");
        }
    }
}
