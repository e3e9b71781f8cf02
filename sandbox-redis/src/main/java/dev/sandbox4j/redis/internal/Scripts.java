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
 *
 * <p>The namespace's meta hash holds its epoch (a random id written when the hash is created) and its
 * configuration (caps, lease time). A missing hash means a new namespace or a Redis that lost its data
 * (FLUSHALL, a restart without persistence, a fail-over to an empty replica): holders of the old epoch
 * may still be running, so for half a lease time (the renewal interval plus a margin) only renewals
 * get permits, and new acquisitions are refused. A renewal whose lease is gone re-adds it only within
 * the caps, never over them.
 */
public final class Scripts {
    private Scripts() {
    }

    /**
     * The head of every script that takes permits. KEYS[1] meta hash, KEYS[2] the re-establishing
     * marker, KEYS[3] the global set. ARGV[1] a fresh epoch id, ARGV[2] per-key cap, ARGV[3] global cap,
     * ARGV[4] lease time in ms. Returns {-2, perKey, global, lease} as stored when they disagree.
     */
    private static final String HEAD = """
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            local ttl = tonumber(ARGV[4])
            local pk = tonumber(ARGV[2])
            local gl = tonumber(ARGV[3])
            local conf = redis.call('HMGET', KEYS[1], 'epoch', 'perKey', 'global', 'lease')
            local fresh = 0
            if not conf[1] then
              redis.call('HSET', KEYS[1], 'epoch', ARGV[1], 'perKey', ARGV[2], 'global', ARGV[3], 'lease', ARGV[4])
              redis.call('SET', KEYS[2], ARGV[1], 'PX', math.max(1, math.floor(ttl / 2)))
              conf = {ARGV[1], ARGV[2], ARGV[3], ARGV[4]}
              fresh = 1
            elseif conf[2] ~= ARGV[2] or conf[3] ~= ARGV[3] or conf[4] ~= ARGV[4] then
              return {-2, conf[2], conf[3], conf[4]}
            end
            -- a set lives as long as its longest lease (a detached sandbox's may be longer than ttl)
            local function keep(set)
              local top = redis.call('ZRANGE', set, -1, -1, 'WITHSCORES')
              if top[2] then
                redis.call('PEXPIREAT', set, math.ceil(tonumber(top[2])))
              end
            end
            redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
            """;

    /** Checks or writes the configuration. Returns {1, epoch, fresh} or the disagreement of {@link #HEAD}. */
    public static final Script CONFIGURE = new Script(HEAD + """
            return {1, conf[1], fresh}
            """);

    /**
     * KEYS as {@link #HEAD}, KEYS[4] the key's set. ARGV as HEAD, ARGV[5] the lease id. Adds the lease
     * to both sets or to neither. Returns {1 granted / 0 refused / -1 re-establishing, held by the key,
     * held in all}, the counts as they are after the call.
     */
    public static final Script ACQUIRE = new Script(HEAD + """
            redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
            local k = redis.call('ZCARD', KEYS[4])
            local g = redis.call('ZCARD', KEYS[3])
            if redis.call('EXISTS', KEYS[2]) == 1 then
              return {-1, k, g}
            end
            if k >= pk or g >= gl then
              return {0, k, g}
            end
            redis.call('ZADD', KEYS[4], now + ttl, ARGV[5])
            redis.call('ZADD', KEYS[3], now + ttl, ARGV[5])
            keep(KEYS[4])
            keep(KEYS[3])
            return {1, k + 1, g + 1}
            """);

    /**
     * KEYS as {@link #HEAD}, then one key set per lease. ARGV as HEAD, then the lease ids in the order of
     * the key sets. A lease still there is pushed to now + lease time. A lease that is gone (it expired,
     * or Redis lost it) is added back only if both caps allow; otherwise it is lost. Returns {fresh, then
     * per lease: status (1 renewed, 2 added back, 0 lost), held by its key, held in all}; the counts are
     * those without the lease, as found.
     */
    public static final Script RENEW = new Script(HEAD + """
            local out = {fresh}
            for i = 4, #KEYS do
              local id = ARGV[i + 1]
              redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
              local mine = redis.call('ZSCORE', KEYS[i], id)
              local all = redis.call('ZSCORE', KEYS[3], id)
              local status = 0
              if mine and all then
                status = 1
              else
                redis.call('ZREM', KEYS[i], id)
                redis.call('ZREM', KEYS[3], id)
              end
              local k = redis.call('ZCARD', KEYS[i]) - status
              local g = redis.call('ZCARD', KEYS[3]) - status
              if status == 0 and k < pk and g < gl then
                status = 2
              end
              if status > 0 then
                redis.call('ZADD', KEYS[i], now + ttl, id)
                redis.call('ZADD', KEYS[3], now + ttl, id)
                keep(KEYS[i])
              end
              out[#out + 1] = status
              out[#out + 1] = k
              out[#out + 1] = g
            end
            keep(KEYS[3])
            return out
            """);

    /**
     * KEYS as {@link #HEAD}, KEYS[4] the key's set. ARGV as HEAD, ARGV[5] the detached sandbox's member,
     * ARGV[6] the new lease id. Swaps the detached sandbox's permit for an ordinary lease. Returns {1,
     * ms left of the detached sandbox's lifetime (-1 when run again for the same new id)} or {0} when it
     * keeps no permit.
     */
    public static final Script ADOPT = new Script(HEAD + """
            redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
            local mine = redis.call('ZSCORE', KEYS[4], ARGV[6])
            if mine then
              return {1, -1} -- run twice (a retried call): taken over already, the lifetime left is not known here
            end
            local till = redis.call('ZSCORE', KEYS[4], ARGV[5])
            if not till or not redis.call('ZSCORE', KEYS[3], ARGV[5]) then
              return {0}
            end
            redis.call('ZREM', KEYS[4], ARGV[5])
            redis.call('ZREM', KEYS[3], ARGV[5])
            redis.call('ZADD', KEYS[4], now + ttl, ARGV[6])
            redis.call('ZADD', KEYS[3], now + ttl, ARGV[6])
            keep(KEYS[4])
            keep(KEYS[3])
            return {1, math.floor(tonumber(till) - now)}
            """);

    /**
     * KEYS: the key's set, the global set. ARGV: lease id, member for the detached sandbox, its lifetime
     * left in ms. Swaps a held lease for the detached sandbox's permit; a lease that is gone is not put
     * back. Returns 1, or 0 when the lease was gone.
     */
    public static final Script DETACH = new Script("""
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            local mine = redis.call('ZSCORE', KEYS[1], ARGV[1])
            if not mine or tonumber(mine) <= now or not redis.call('ZSCORE', KEYS[2], ARGV[1]) then
              return 0
            end
            redis.call('ZREM', KEYS[1], ARGV[1])
            redis.call('ZREM', KEYS[2], ARGV[1])
            local till = now + tonumber(ARGV[3])
            redis.call('ZADD', KEYS[1], till, ARGV[2])
            redis.call('ZADD', KEYS[2], till, ARGV[2])
            for _, set in ipairs(KEYS) do
              local top = redis.call('ZRANGE', set, -1, -1, 'WITHSCORES')
              redis.call('PEXPIREAT', set, math.ceil(tonumber(top[2])))
            end
            return 1
            """);

    /**
     * KEYS: the key's set, the global set. ARGV: lease id, the wake-up channel. Removes the lease and,
     * if it was there, tells waiters on every replica. Returns how many entries were removed.
     */
    public static final Script RELEASE = new Script("""
            local n = redis.call('ZREM', KEYS[1], ARGV[1]) + redis.call('ZREM', KEYS[2], ARGV[1])
            if n > 0 then
              redis.call('PUBLISH', ARGV[2], '1')
            end
            return n
            """);

    /** KEYS: one set. Returns how many of its leases have not expired. Writes nothing. */
    public static final Script COUNT = new Script("""
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
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
