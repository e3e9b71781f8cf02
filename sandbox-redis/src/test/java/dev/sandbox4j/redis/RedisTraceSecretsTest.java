package dev.sandbox4j.redis;

import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.sandbox4j.testlogging.TraceJvm;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * Issue 28 item 8 for the Redis permit store: Jedis and sandbox4j with every logger at TRACE, against
 * a real redis-server with {@code requirepass} and an ACL user. Neither password, nor a wrong one,
 * appears in any line (the store's toString, its errors and Jedis's own logging included).
 */
class RedisTraceSecretsTest {
    private static final String PASSWORD = "redis-pw-" + "6c0e9a3f1d7b2854";
    private static final String ACL_PASSWORD = "acl-pw-" + "b41f8d2e07c9a365";
    private static final String WRONG = "wrong-pw-" + "e29c7a0b5d3f1486";

    @Test
    void noPasswordInAnyLineAtTrace() {
        try (RedisServer server = RedisTests.startServer()) {
            try (Jedis admin = new Jedis("127.0.0.1", server.port())) {
                admin.aclSetUser("tracer", "on", ">" + ACL_PASSWORD, "~*", "&*", "+@all");
                admin.configSet("requirepass", PASSWORD);
            }
            String at = "@127.0.0.1:" + server.port();
            TraceJvm.Result r = TraceJvm.run("redis", RedisTraceMain.class, Map.of(
                    "TRACE_REDIS_URI", "redis://:" + PASSWORD + at,
                    "TRACE_ACL_URI", "redis://tracer:" + ACL_PASSWORD + at,
                    "TRACE_WRONG_URI", "redis://:" + WRONG + at), List.of(), Duration.ofMinutes(2));
            System.err.println("redis at TRACE: " + r);
            r.assertClean(List.of(PASSWORD, ACL_PASSWORD, WRONG))
                    .assertContains("trace main done")
                    .assertContains("held again");
            assertFalse(r.output().contains("a wrong password was accepted"), r.output());
        }
    }
}
