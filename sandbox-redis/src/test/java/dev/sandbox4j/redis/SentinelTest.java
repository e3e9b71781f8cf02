package dev.sandbox4j.redis;

import static dev.sandbox4j.redis.RedisTests.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.compose.ConcurrencyLimiter;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxCapacityException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Sentinel as a builder setting: a master and one sentinel on loopback; the store finds the master through it. */
class SentinelTest {
    @TempDir
    Path dir;

    @Test
    void aStoreFindsTheMasterThroughSentinel() throws Exception {
        try (RedisServer master = RedisTests.startServer()) {
            int sentinelPort = freePort();
            Path conf = dir.resolve("sentinel.conf");
            Files.writeString(conf, "port " + sentinelPort + "\nbind 127.0.0.1\n"
                    + "sentinel monitor primary 127.0.0.1 " + master.port() + " 1\n");
            String binary = RedisServer.binary().orElseThrow();
            Process sentinel = new ProcessBuilder(binary, conf.toString(), "--sentinel").redirectErrorStream(true).start();
            try {
                BufferedReader log = new BufferedReader(new InputStreamReader(sentinel.getInputStream(), StandardCharsets.UTF_8));
                String ready = CompletableFuture.supplyAsync(() -> {
                    try {
                        String line;
                        while ((line = log.readLine()) != null) {
                            if (line.contains("+monitor master primary")) {
                                return line;
                            }
                        }
                        return null;
                    } catch (Exception e) {
                        return null;
                    }
                }).get(RedisTests.GIVE_UP.toSeconds(), TimeUnit.SECONDS);
                assertTrue(ready != null, "the sentinel did not start");
                RedisPermitStore store = RedisPermitStore.builder().sentinel("primary", Set.of("127.0.0.1:" + sentinelPort))
                        .namespace(RedisTests.namespace("sentinel")).leaseTime(Duration.ofMillis(900)).build();
                try {
                    assertTrue(store.toString().contains("sentinel master 'primary'"), store.toString());
                    SandboxRunner runner = ManagedSandboxRunner.builder(new CountingDriver()).maxCreateAttempts(1).build();
                    ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).maxWait(Duration.ZERO).store(store).build();
                    RedisTests.settled(store);
                    try (Sandbox sb = limiter.forKey(runner, "alice").open(spec("alice"))) {
                        assertThrows(SandboxCapacityException.class, () -> limiter.forKey(runner, "alice").open(spec("alice")));
                        assertEquals(1, store.inUse());
                    }
                    assertEquals(0, store.inUse());
                } finally {
                    store.close();
                }
            } finally {
                sentinel.destroy();
                sentinel.waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
