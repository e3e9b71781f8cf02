package dev.sandbox4j.examples.failover;

import dev.sandbox4j.compose.ConcurrencyLimiter;
import dev.sandbox4j.compose.FailoverRunner;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunners;
import dev.sandbox4j.tool.CodeExecutionSession;
import dev.sandbox4j.tool.CodeExecutionTool;
import dev.sandbox4j.examples.Runners;
import java.io.PrintStream;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * Failover and caps in practice: sandboxes open on this host while it has a free slot and on a
 * second runner when it has none, and no user holds more than two sandboxes at once. Run it with
 * {@code SANDBOX4J_PROVIDER} naming a provider whose module is on the classpath to overflow there;
 * unset, the overflow is a second local runner.
 */
public final class FailoverExample {
    private FailoverExample() {
    }

    // tag::failover[]
    /** This host runs two sandboxes at once; more go to the overflow runner (failover wraps open() only). */
    public static SandboxRunner pool(SandboxRunner local, SandboxRunner overflow) {
        ConcurrencyLimiter hostSlots = ConcurrencyLimiter.builder()
                .perKey(2)
                .maxWait(Duration.ZERO) // no free slot: fail over at once
                .build();
        return FailoverRunner.of(hostSlots.forKey(local, "this-host"), overflow);
    }

    /** At most two open sandboxes per user; a third is refused at once, and the model is told so. */
    public static ConcurrencyLimiter perUserCap() {
        return ConcurrencyLimiter.builder().perKey(2).maxWait(Duration.ZERO).build();
    }

    /** Each user's tool runs on the shared pool under that user's cap. */
    public static CodeExecutionTool toolFor(String user, SandboxRunner pool, ConcurrencyLimiter perUser,
            Consumer<RunResult> audit) {
        return CodeExecutionTool.builder(perUser.forKey(pool, user))
                .maxBudget(Duration.ofSeconds(30))
                .onResult(audit) // the model sees only the text; the application sees attempts and teardown
                .build();
    }
    // end::failover[]

    /** Two users, one with two tasks open: the third sandbox fails over, a user's third is refused. */
    public static void demo(SandboxRunner local, SandboxRunner overflow, PrintStream out) {
        SandboxRunner pool = pool(local, overflow);
        ConcurrencyLimiter perUser = perUserCap();
        CodeExecutionTool alice = toolFor("alice", pool, perUser,
                r -> out.println("  alice's run, attempts: " + r.attempts()));
        CodeExecutionTool bob = toolFor("bob", pool, perUser,
                r -> out.println("  bob's run, attempts: " + r.attempts()));

        try (CodeExecutionSession task1 = alice.session(); CodeExecutionSession task2 = alice.session()) {
            out.println("alice starts two tasks; each keeps a sandbox open:");
            out.println("  " + firstLine(task1.execute("print('task 1')", "python", null)));
            out.println("  " + firstLine(task2.execute("print('task 2')", "python", null)));
            out.println("alice asks for a third sandbox at once:");
            out.println("  " + alice.execute("print('task 3')", "python", null));
            out.println("bob runs code while both host slots are taken:");
            out.println("  " + firstLine(bob.execute("print('bob')", "python", null)));
        }
        out.println("alice's tasks ended; bob runs code again:");
        out.println("  " + firstLine(bob.execute("print('bob again')", "python", null)));
    }

    public static void main(String[] args) {
        try (SandboxRunner local = SandboxRunners.local(); SandboxRunner overflow = Runners.fromEnvOrLocal()) {
            demo(local, overflow, System.out);
        }
    }

    private static String firstLine(String text) {
        int nl = text.indexOf('\n');
        return nl < 0 ? text : text.substring(0, nl);
    }
}
