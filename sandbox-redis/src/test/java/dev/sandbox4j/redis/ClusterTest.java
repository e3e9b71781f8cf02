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
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Protocol;

/** Redis Cluster as a builder setting: a one-node cluster holding every slot, on loopback. */
class ClusterTest {
    @TempDir
    Path dir;

    @Test
    void aStoreOnAClusterKeepsTheCapsAndItsNamespaceInOneSlot() {
        try (RedisServer node = RedisTests.startServer("--cluster-enabled", "yes", "--cluster-config-file",
                dir.resolve("nodes.conf").toString())) {
            try (Jedis admin = new Jedis("127.0.0.1", node.port())) {
                admin.sendCommand(Protocol.Command.CLUSTER, "ADDSLOTSRANGE", "0", "16383");
                RedisTests.eventually("the cluster is up", () -> admin.clusterInfo().contains("cluster_state:ok"));
            }
            String ns = RedisTests.namespace("cluster");
            RedisPermitStore store = RedisPermitStore.builder().cluster(Set.of("127.0.0.1:" + node.port())).namespace(ns)
                    .leaseTime(Duration.ofMillis(900)).build();
            try {
                SandboxRunner runner = ManagedSandboxRunner.builder(new CountingDriver()).maxCreateAttempts(1).build();
                ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(2).global(3).maxWait(Duration.ZERO).store(store).build();
                RedisTests.settled(store);
                try (Sandbox a = limiter.forKey(runner, "alice").open(spec("alice"));
                     Sandbox b = limiter.forKey(runner, "alice").open(spec("alice"));
                     Sandbox c = limiter.forKey(runner, "bob").open(spec("bob"))) {
                    assertThrows(SandboxCapacityException.class, () -> limiter.forKey(runner, "carol").open(spec("carol")));
                    assertEquals(3, store.inUse());
                    assertEquals(2, limiter.activeKeys(), "the scan works on a cluster (the pattern has the hash tag)");
                    try (Jedis admin = new Jedis("127.0.0.1", node.port())) {
                        Set<Long> slots = new HashSet<>();
                        for (String key : admin.keys("sandbox4j:{" + ns + "}:*")) {
                            slots.add(admin.clusterKeySlot(key));
                        }
                        assertTrue(slots.size() == 1, "every key of the namespace in one slot: " + slots);
                    }
                }
                assertEquals(0, store.inUse());
            } finally {
                store.close();
            }
        }
    }
}
