package dev.sandbox4j.redis.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The Lua scripts behind {@code RedisPermitStore}. Each key's permits are a sorted set of lease ids
 * scored by their expiry in milliseconds of the Redis server's clock (TIME), so replicas need no
 * synchronised clocks and a lease whose holder died simply falls out of the count. Every script runs
 * atomically on the server; all keys of one namespace share a hash tag, so they also work on one
 * Redis Cluster slot.
 */
public final class Scripts {
    private Scripts() {
    }

    private static final String NOW = """
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            """;

    /**
     * KEYS: the key's set, the global set. ARGV: lease id, per-key cap, global cap, lease time in ms.
     * Prunes expired leases, then adds the lease to both sets or to neither. Returns {granted (1 or 0),
     * held by the key, held in all}, the counts as they are after the call.
     */
    public static final Script ACQUIRE = new Script(NOW + """
            local ttl = tonumber(ARGV[4])
            redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
            redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
            local k = redis.call('ZCARD', KEYS[1])
            local g = redis.call('ZCARD', KEYS[2])
            if k >= tonumber(ARGV[2]) or g >= tonumber(ARGV[3]) then
              return {0, k, g}
            end
            redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
            redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
            -- a set outlives its newest lease by nothing: an abandoned key goes away on its own
            redis.call('PEXPIRE', KEYS[1], ttl)
            redis.call('PEXPIRE', KEYS[2], ttl)
            return {1, k + 1, g + 1}
            """);

    /** KEYS: the key's set, the global set. ARGV: lease id. Returns how many entries were removed. */
    public static final Script RELEASE = new Script("""
            return redis.call('ZREM', KEYS[1], ARGV[1]) + redis.call('ZREM', KEYS[2], ARGV[1])
            """);

    /**
     * KEYS: one key set per lease, then the global set last. ARGV: lease time in ms, then the lease ids
     * in the order of KEYS. Pushes every lease's expiry to now + lease time. A lease that is missing (the
     * server restarted empty, or the renewal came too late) is added back: the sandbox is still open, so
     * it must be counted. Returns how many leases were added back.
     */
    public static final Script RENEW = new Script(NOW + """
            local ttl = tonumber(ARGV[1])
            local g = KEYS[#KEYS]
            local restored = 0
            for i = 1, #KEYS - 1 do
              restored = restored + redis.call('ZADD', KEYS[i], now + ttl, ARGV[i + 1])
              redis.call('ZADD', g, now + ttl, ARGV[i + 1])
              redis.call('PEXPIRE', KEYS[i], ttl)
            end
            redis.call('PEXPIRE', g, ttl)
            return restored
            """);

    /** KEYS: one set. Returns how many of its leases have not expired. Writes nothing. */
    public static final Script COUNT = new Script(NOW + """
            return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
            """);

    /** A script's text and its SHA-1, the name EVALSHA knows it by. */
    public static final class Script {
        private final String text;
        private final String sha;

        Script(String text) {
            this.text = text;
            try {
                byte[] d = MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8));
                this.sha = HexFormat.of().formatHex(d);
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("SHA-1 is required of every Java platform", e);
            }
        }

        public String text() {
            return text;
        }

        public String sha() {
            return sha;
        }
    }
}
