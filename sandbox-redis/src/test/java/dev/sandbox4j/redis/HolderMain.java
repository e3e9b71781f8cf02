package dev.sandbox4j.redis;

import dev.sandbox4j.compose.ConcurrencyLimiter;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The replica that dies: run in a child JVM by {@link DeadHolderTest}. Takes {@code count} permits of
 * {@code key}, says so on stdout, and holds them (renewing) until it is killed.
 *
 * <p>Arguments: redis URI, namespace, lease time in ms, key, count.
 */
public final class HolderMain {
    private HolderMain() {
    }

    public static void main(String[] args) throws Exception {
        RedisPermitStore store = RedisPermitStore.builder().uri(args[0]).namespace(args[1])
                .leaseTime(Duration.ofMillis(Long.parseLong(args[2]))).build();
        String key = args[3];
        int count = Integer.parseInt(args[4]);
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(count).global(count)
                .maxWait(store.leaseTime()).store(store).build(); // a new namespace waits half a lease time
        SandboxRunner runner = limiter.forKey(ManagedSandboxRunner.of(new CountingDriver()), key);
        List<Sandbox> held = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            held.add(runner.open(RedisTests.spec(key)));
        }
        System.out.println("held " + held.size());
        System.out.flush();
        // until SIGKILL; a closed stdin (the parent gone) ends it too
        while (System.in.read() >= 0) {
            // nothing to read
        }
        held.forEach(Sandbox::close);
        store.close();
    }
}
