package dev.sandbox4j.examples.failover;

import dev.sandbox4j.compose.ConcurrencyLimiter;
import dev.sandbox4j.redis.RedisPermitStore;
import java.time.Duration;

/**
 * Caps across replicas: the per-user and global caps of {@link FailoverExample} kept in Redis, so they
 * hold whichever replica behind the load balancer serves a user.
 */
public final class RedisCapsExample {
    private RedisCapsExample() {
    }

    // tag::redis-caps[]
    /**
     * Every replica builds this with the same Redis and namespace: a user holds at most two sandboxes
     * and the application at most twenty, over all replicas. With Redis down, open() throws
     * PermitStoreException (a retriable SandboxCapacityException) and creates nothing: never uncapped.
     */
    public static ConcurrencyLimiter sharedCaps(String redisUri) {
        RedisPermitStore store = RedisPermitStore.builder()
                .uri(redisUri)                     // redis://[:password@]host:6379[/db], rediss:// for TLS
                .namespace("agent-backend")        // one per application, the same on all its replicas
                .leaseTime(Duration.ofSeconds(30)) // a dead replica's permits come back within this
                .build();
        return ConcurrencyLimiter.builder()
                .perKey(2)                         // per user
                .global(20)                        // under the provider's account quota
                .maxWait(Duration.ZERO)
                .store(store)                      // close it at shutdown: limiter.store().close()
                .build();
    }
    // end::redis-caps[]
}
