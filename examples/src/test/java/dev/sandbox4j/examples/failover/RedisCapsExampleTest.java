package dev.sandbox4j.examples.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.compose.ConcurrencyLimiter;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxCapacityException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.examples.LocalRunnerFixture;
import dev.sandbox4j.redis.RedisPermitStore;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** The Redis caps example as two replicas on one real redis-server (127.0.0.1, a free port) and local runners. */
class RedisCapsExampleTest {
    @Test
    @SuppressWarnings("try") // two is closed early on purpose: its permit comes back before the try ends
    void aUsersCapHoldsAcrossTwoReplicas() throws Exception {
        File binary = new File("/usr/bin/redis-server");
        Assumptions.assumeTrue(binary.canExecute(), "no /usr/bin/redis-server: install it (apt-get install -y redis-server; .ci/run does)");
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        Process redis = new ProcessBuilder(binary.getPath(), "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no").redirectErrorStream(true).start();
        try (BufferedReader log = new BufferedReader(new InputStreamReader(redis.getInputStream(), StandardCharsets.UTF_8));
             LocalRunnerFixture local = new LocalRunnerFixture()) {
            String line;
            while ((line = log.readLine()) != null && !line.contains("Ready to accept connections")) {
                // start-up log
            }
            assertTrue(line != null, "redis-server did not start");
            String uri = "redis://127.0.0.1:" + port;
            ConcurrencyLimiter replicaA = RedisCapsExample.sharedCaps(uri);
            ConcurrencyLimiter replicaB = RedisCapsExample.sharedCaps(uri);
            // a new namespace waits half a lease time (Redis cannot tell it from an emptied one): wait it out
            RedisPermitStore store = (RedisPermitStore) replicaA.store();
            for (Duration left = store.reestablishing(); !left.isZero(); left = store.reestablishing()) {
                new java.util.concurrent.CountDownLatch(1).await(left.toMillis(), TimeUnit.MILLISECONDS);
            }
            try (Sandbox one = replicaA.forKey(local.runner(), "alice").open(SandboxSpec.defaults());
                 Sandbox two = replicaA.forKey(local.runner(), "alice").open(SandboxSpec.defaults())) {
                SandboxCapacityException e = assertThrows(SandboxCapacityException.class,
                        () -> replicaB.forKey(local.runner(), "alice").open(SandboxSpec.defaults()));
                assertEquals("no sandbox permit for key 'alice' within 0 ms (2 of 2 per key in use, 2 of 20 in all)",
                        e.getMessage());
                try (Sandbox bob = replicaB.forKey(local.runner(), "bob").open(SandboxSpec.defaults())) {
                    assertEquals("hi\n", bob.exec(Execution.python("print('hi')")).stdout());
                    assertEquals(3, replicaA.inUse());
                }
                assertEquals("1\n", one.exec(Execution.python("print(1)")).stdout());
                assertEquals(2, replicaB.inUse("alice"));
                two.close();
                replicaB.forKey(local.runner(), "alice").open(SandboxSpec.defaults()).close();
            }
            assertEquals(0, replicaB.inUse());
            replicaA.store().close();
            replicaB.store().close();
            assertEquals(0, local.leftovers());
        } finally {
            redis.destroy();
            redis.waitFor(30, TimeUnit.SECONDS);
        }
    }
}
