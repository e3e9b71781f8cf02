package dev.sandbox4j.examples.sessions;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.compose.WarmPoolRunner;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Limits;
import java.time.Duration;

/**
 * A session that spans requests (one request opens and detaches, the next attaches by id with the same
 * spec), and a warm pool that hides the create. Every runner attaches: the hosted providers and Docker
 * from any process, the local runner within the JVM that detached the sandbox.
 */
public final class SessionsExample {
    private SessionsExample() {
    }

    // tag::sessions[]
    /** The spec both requests agree on: attach refuses a sandbox whose egress or lifetime differs. */
    static final SandboxSpec SESSION = SandboxSpec.builder()
            .egress(EgressPolicy.allowOnly("pypi.org", "files.pythonhosted.org"))
            .limits(Limits.builder().lifetime(Duration.ofMinutes(30)).build())
            .build();

    /** Request 1: open, run, and hand the sandbox on; the id goes into the user's session store. */
    public static String firstRequest(SandboxRunner runner, String code) {
        Sandbox sandbox = runner.open(SESSION);
        try {
            sandbox.exec(Execution.python(code));
            sandbox.detach(); // released, not destroyed
            return sandbox.id();
        } finally {
            sandbox.close(); // destroys it unless detach() came first
        }
    }

    /** Request 2, on any replica: attach after the label, owner, state and policy checks, run, destroy. */
    public static RunResult lastRequest(SandboxRunner runner, String sandboxId, String code) {
        try (Sandbox sandbox = runner.attach(sandboxId, SESSION)) { // AttachRefusedException on a mismatch
            return sandbox.exec(Execution.python(code));
        }
    }
    // end::sessions[]

    // tag::warm-pool[]
    /**
     * Two sandboxes kept created ahead; each serves one run and is destroyed, and the pool refills in
     * the background. A pool that cannot refill creates fresh; close() destroys what it holds.
     */
    public static WarmPoolRunner warmPool(SandboxRunner runner) {
        return WarmPoolRunner.builder(runner, SandboxSpec.defaults())
                .size(2)
                .maxIdle(Duration.ofMinutes(5))     // retired and replaced after idling this long
                .budget(Duration.ofSeconds(60))     // lifetime = max idle + budget + margin
                .build();
    }

    public static RunResult pooledRun(WarmPoolRunner pool) {
        RunResult r = pool.run(RunRequest.python("print(6 * 7)"));
        // r.attempts() ends with an attempt whose source() is Attempt.Source.POOL when the pool served it
        return r;
    }
    // end::warm-pool[]
}
