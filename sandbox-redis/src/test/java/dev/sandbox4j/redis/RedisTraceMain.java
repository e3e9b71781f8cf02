package dev.sandbox4j.redis;

import dev.sandbox4j.compose.ConcurrencyLimiter;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import dev.sandbox4j.testlogging.TraceJvm;
import java.time.Duration;

/**
 * The child JVM of {@link RedisTraceSecretsTest}: the Redis permit store (Jedis) with every logger at
 * TRACE, against a redis-server that wants a password: the default user's (TRACE_REDIS_URI), an ACL
 * user's (TRACE_ACL_URI) and a wrong one (TRACE_WRONG_URI). Prints every message it gets.
 */
public final class RedisTraceMain {
    private RedisTraceMain() {
    }

    public static void main(String[] args) throws Exception {
        TraceJvm.plantCanaries();
        for (String variable : new String[] {"TRACE_REDIS_URI", "TRACE_ACL_URI"}) {
            try (RedisPermitStore store = RedisPermitStore.builder().uri(System.getenv(variable)).namespace("trace")
                    .leaseTime(Duration.ofSeconds(1)).build()) {
                System.out.println(store);
                ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).global(2)
                        .maxWait(Duration.ofSeconds(2)).store(store).build(); // a new namespace grants after half a lease
                System.out.println(limiter);
                SandboxRunner runner = limiter.forKey(ManagedSandboxRunner.of(new CountingDriver()), "user-a");
                try (Sandbox held = runner.open(RedisTests.spec("user-a"))) {
                    System.out.println("held " + held);
                    try {
                        runner.open(RedisTests.spec("user-a")).close();
                    } catch (SandboxException e) {
                        System.out.println("refused: " + e); // over the per-key cap, after waiting
                    }
                    // past the lease, so that the holder renews (what is exercised, not a timing checked)
                    Thread.sleep(1_500);
                }
                try (Sandbox again = runner.open(RedisTests.spec("user-a"))) {
                    System.out.println("held again " + again + ", in use " + store.inUse());
                }
            }
        }
        try (RedisPermitStore wrong = RedisPermitStore.builder().uri(System.getenv("TRACE_WRONG_URI")).namespace("trace").build()) {
            System.out.println(wrong);
            wrong.tryAcquire("user-a", 1, 2);
            System.out.println("a wrong password was accepted");
        } catch (RuntimeException e) {
            System.out.println("refused: " + e);
        }
        System.out.println("trace main done");
    }
}
