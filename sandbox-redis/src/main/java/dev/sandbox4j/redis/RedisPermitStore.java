package dev.sandbox4j.redis;

import dev.sandbox4j.api.PermitStoreException;
import dev.sandbox4j.api.SandboxException;
import dev.sandbox4j.api.spi.PermitStore;
import dev.sandbox4j.redis.internal.Scripts;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * A {@link PermitStore} on Redis, so that one {@link dev.sandbox4j.api.ConcurrencyLimiter} cap holds
 * across every replica that points at the same Redis and namespace.
 *
 * <pre>{@code
 * RedisPermitStore store = RedisPermitStore.builder()
 *         .uri("redis://redis.internal:6379").namespace("agent-backend").build();
 * ConcurrencyLimiter limiter = ConcurrencyLimiter.builder()
 *         .perKey(2).global(20).maxWait(Duration.ofSeconds(30)).store(store).build();
 * }</pre>
 *
 * <p>How it works: each key's permits, and the global ones, are a sorted set of lease ids scored by
 * their expiry on the Redis server's clock. A Lua script prunes expired leases and adds the new lease
 * to the key's set and the global set together, or to neither; another removes it on close. While a
 * sandbox is open this store renews its lease every third of {@link Builder#leaseTime}, so a JVM that
 * dies (SIGKILL, a lost machine) stops renewing and its permits come back within one lease time.
 *
 * <p>Fails closed: when Redis cannot be reached or answers with an error, {@code open()} throws
 * {@link PermitStoreException} (retriable) and no sandbox is created. A release that cannot reach Redis
 * is logged and the lease expires there on its own within the lease time (an unreachable Redis makes
 * {@code close()} wait up to {@link Builder#timeout} for that). If Redis restarts empty, the next
 * renewal puts back the leases of the sandboxes still open here; until then other replicas may take
 * those permits again.
 *
 * <p>A waiter learns of a release in this JVM at once, and of one in another replica by trying again
 * every {@link Builder#pollInterval} (with jitter). Limiters sharing a namespace must use the same caps.
 * Close the store after the sandboxes: closing it stops the renewals (open leases then expire).
 * Thread-safe.
 *
 * @since 0.1.0
 */
public final class RedisPermitStore implements PermitStore {
    private static final Logger log = LoggerFactory.getLogger(RedisPermitStore.class);
    private static final Pattern NAMESPACE = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    private final UnifiedJedis redis;
    private final boolean ownsClient;
    private final String namespace;
    private final String keyPrefix;
    private final String globalKey;
    private final long leaseMillis;
    private final long pollNanos;
    private final String endpoint;

    // leases taken here and not yet given back: what the renewer keeps alive (lease id -> key's set)
    private final Map<String, String> held = new ConcurrentHashMap<>();
    // a release must not interleave with a renewal, or the renewal would add the released lease back
    private final ReadWriteLock renewing = new ReentrantReadWriteLock();
    private final ScheduledExecutorService renewer;
    private final AtomicBoolean renewFailing = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();

    private final ReentrantLock localLock = new ReentrantLock();
    private final Condition localRelease = localLock.newCondition();
    private long localReleases;

    private RedisPermitStore(Builder b) {
        this.namespace = b.namespace;
        // one hash tag per namespace: the scripts touch several keys, which must share a cluster slot
        String prefix = "sandbox4j:{" + b.namespace + "}:";
        this.keyPrefix = prefix + "key:";
        this.globalKey = prefix + "global";
        this.leaseMillis = b.leaseTime.toMillis();
        this.pollNanos = b.pollInterval.toNanos();
        if (b.client != null) {
            this.redis = b.client;
            this.ownsClient = false;
            this.endpoint = "the given client";
        } else {
            int timeout = (int) Math.min(Integer.MAX_VALUE, b.timeout.toMillis());
            DefaultJedisClientConfig.Builder config = DefaultJedisClientConfig.builder()
                    .connectionTimeoutMillis(timeout).socketTimeoutMillis(timeout);
            String userInfo = b.uri.getUserInfo();
            if (userInfo != null) {
                int colon = userInfo.indexOf(':');
                String user = colon < 0 ? null : userInfo.substring(0, colon);
                config.user(user == null || user.isEmpty() ? null : user)
                        .password(colon < 0 ? userInfo : userInfo.substring(colon + 1));
            }
            String path = b.uri.getPath();
            if (path != null && path.length() > 1) {
                config.database(Integer.parseInt(path.substring(1)));
            }
            config.ssl("rediss".equals(b.uri.getScheme()));
            this.redis = RedisClient.builder().hostAndPort(b.uri.getHost(), b.uri.getPort() < 0 ? 6379 : b.uri.getPort())
                    .clientConfig(config.build()).build();
            this.ownsClient = true;
            // never the password: only scheme, host and port
            this.endpoint = b.uri.getScheme() + "://" + b.uri.getHost() + ":" + (b.uri.getPort() < 0 ? 6379 : b.uri.getPort());
        }
        this.renewer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sandbox4j-redis-renew-" + namespace);
            t.setDaemon(true);
            return t;
        });
        long every = Math.max(1, leaseMillis / 3);
        renewer.scheduleWithFixedDelay(this::renewSafely, every, every, TimeUnit.MILLISECONDS);
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public Acquisition tryAcquire(String key, int perKey, int global) {
        ensureOpen();
        long epoch = localEpoch(); // before asking: a local release after this point wakes the waiter
        String id = UUID.randomUUID().toString();
        String set = keyPrefix + key;
        List<?> answer;
        try {
            answer = (List<?>) call(Scripts.ACQUIRE, List.of(set, globalKey),
                    List.of(id, Integer.toString(perKey), Integer.toString(global), Long.toString(leaseMillis)));
        } catch (RuntimeException e) {
            // JedisException mostly; anything else (a closed pool, an odd answer) fails closed too.
            // The script may have run before the answer was lost: take back whatever this id holds
            // (best effort; failing that, the lease expires within the lease time)
            removeQuietly(set, id);
            throw unavailable("no sandbox permit for key '" + key + "': the Redis permit store at " + endpoint
                    + " did not answer (" + e.getClass().getSimpleName() + ": " + e.getMessage() + ")", e);
        }
        int k = ((Number) answer.get(1)).intValue();
        int g = ((Number) answer.get(2)).intValue();
        if (((Number) answer.get(0)).intValue() != 1) {
            return Acquisition.refused(k, g, epoch);
        }
        held.put(id, set);
        return Acquisition.granted(new Lease(id, set));
    }

    @Override
    public long awaitRelease(Acquisition refused, long nanos) throws InterruptedException {
        long start = System.nanoTime();
        // a release on another replica is seen only by trying again; jitter spreads the replicas' tries
        long poll = pollNanos / 2 + ThreadLocalRandom.current().nextLong(pollNanos / 2 + 1);
        long wait = Math.min(nanos, poll);
        localLock.lock();
        try {
            while (localReleases == refused.epoch() && wait > 0) {
                wait = localRelease.awaitNanos(wait);
            }
        } finally {
            localLock.unlock();
        }
        return nanos - (System.nanoTime() - start);
    }

    @Override
    public int inUse() {
        return count(globalKey);
    }

    @Override
    public int inUse(String key) {
        return count(keyPrefix + key);
    }

    /** Keys with a lease that has not expired. Scans the namespace: a diagnostic, not for a hot path. */
    @Override
    public int activeKeys() {
        ensureOpen();
        try {
            int n = 0;
            ScanParams match = new ScanParams().match(keyPrefix + "*").count(500);
            String cursor = ScanParams.SCAN_POINTER_START;
            do {
                ScanResult<String> page = redis.scan(cursor, match);
                for (String set : page.getResult()) {
                    if (count(set) > 0) {
                        n++;
                    }
                }
                cursor = page.getCursor();
            } while (!ScanParams.SCAN_POINTER_START.equals(cursor));
            return n;
        } catch (PermitStoreException e) {
            throw e;
        } catch (RuntimeException e) {
            throw unavailable("the Redis permit store at " + endpoint + " did not answer", e);
        }
    }

    /** The namespace all keys of this store are under. */
    public String namespace() {
        return namespace;
    }

    public Duration leaseTime() {
        return Duration.ofMillis(leaseMillis);
    }

    /** Leases taken through this store and not given back yet. */
    public int heldHere() {
        return held.size();
    }

    /**
     * Stops renewing and closes the client if this store made it. Leases still held expire in Redis
     * within the lease time; close sandboxes first.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        renewer.shutdownNow();
        if (!held.isEmpty()) {
            log.warn("Redis permit store '{}' closed with {} lease(s) held; they expire within {} ms",
                    namespace, held.size(), leaseMillis);
        }
        if (ownsClient) {
            redis.close();
        }
    }

    @Override
    public String toString() {
        return "RedisPermitStore[" + endpoint + ", namespace " + namespace + ", lease " + leaseMillis + " ms]";
    }

    private int count(String set) {
        ensureOpen();
        try {
            return ((Number) call(Scripts.COUNT, List.of(set), List.of())).intValue();
        } catch (RuntimeException e) {
            throw unavailable("the Redis permit store at " + endpoint + " did not answer", e);
        }
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException("the Redis permit store '" + namespace + "' is closed");
        }
    }

    private long localEpoch() {
        localLock.lock();
        try {
            return localReleases;
        } finally {
            localLock.unlock();
        }
    }

    private void signalLocalRelease() {
        localLock.lock();
        try {
            localReleases++;
            localRelease.signalAll();
        } finally {
            localLock.unlock();
        }
    }

    /** EVALSHA, loading the script once more when the server lost it (a restart, SCRIPT FLUSH). */
    private Object call(Scripts.Script script, List<String> keys, List<String> args) {
        try {
            return redis.evalsha(script.sha(), keys, args);
        } catch (JedisNoScriptException e) {
            return redis.eval(script.text(), keys, args);
        }
    }

    private void removeQuietly(String set, String id) {
        try {
            call(Scripts.RELEASE, List.of(set, globalKey), List.of(id));
        } catch (RuntimeException e) {
            log.debug("could not take back lease {} after a failed acquire; it expires within {} ms", id, leaseMillis);
        }
    }

    private static SandboxException unavailable(String message, Throwable cause) {
        return new PermitStoreException(SandboxException.builder(message).provider("redis").cause(cause));
    }

    private void renewSafely() {
        try {
            renew();
            if (renewFailing.compareAndSet(true, false)) {
                log.info("Redis permit store '{}' renews its leases again", namespace);
            }
        } catch (RuntimeException e) {
            // logged once per outage; the next tick tries again, and an expired lease is added back then
            if (renewFailing.compareAndSet(false, true)) {
                log.warn("Redis permit store '{}' could not renew {} lease(s) at {}: {}", namespace, held.size(),
                        endpoint, e.toString());
            }
        }
    }

    private void renew() {
        renewing.writeLock().lock();
        try {
            if (held.isEmpty()) {
                return;
            }
            List<String> keys = new ArrayList<>(held.size() + 1);
            List<String> args = new ArrayList<>(held.size() + 1);
            args.add(Long.toString(leaseMillis));
            held.forEach((id, set) -> {
                keys.add(set);
                args.add(id);
            });
            keys.add(globalKey);
            long restored = ((Number) call(Scripts.RENEW, keys, args)).longValue();
            if (restored > 0) {
                log.warn("Redis permit store '{}' added back {} lease(s) that Redis had lost (a restart or a late renewal);"
                        + " the caps may have been exceeded meanwhile", namespace, restored);
            }
        } finally {
            renewing.writeLock().unlock();
        }
    }

    private final class Lease implements PermitStore.Lease {
        private final String id;
        private final String set;

        Lease(String id, String set) {
            this.id = id;
            this.set = set;
        }

        @Override
        public void release() {
            renewing.readLock().lock();
            try {
                held.remove(id);
                if (!closed.get()) {
                    call(Scripts.RELEASE, List.of(set, globalKey), List.of(id));
                }
            } catch (RuntimeException e) {
                log.warn("Redis permit store '{}' could not give lease {} back ({}); it expires within {} ms",
                        namespace, id, e.toString(), leaseMillis);
            } finally {
                renewing.readLock().unlock();
                signalLocalRelease();
            }
        }
    }

    public static final class Builder {
        private URI uri = URI.create("redis://127.0.0.1:6379");
        private UnifiedJedis client;
        private String namespace;
        private Duration leaseTime = Duration.ofSeconds(30);
        private Duration timeout = Duration.ofSeconds(2);
        private Duration pollInterval = Duration.ofMillis(100);

        private Builder() {
        }

        /** {@code redis://[[user]:password@]host[:port][/db]} or {@code rediss://...}. Default {@code redis://127.0.0.1:6379}. */
        public Builder uri(String uri) {
            URI parsed = URI.create(Objects.requireNonNull(uri, "uri"));
            if (!"redis".equals(parsed.getScheme()) && !"rediss".equals(parsed.getScheme()) || parsed.getHost() == null) {
                throw new IllegalArgumentException("not a redis:// or rediss:// URI with a host");
            }
            this.uri = parsed;
            return this;
        }

        /**
         * A client to use instead of one made from {@link #uri} (its own pool, TLS, auth, Sentinel).
         * The store does not close it.
         */
        public Builder client(UnifiedJedis client) {
            this.client = Objects.requireNonNull(client, "client");
            return this;
        }

        /**
         * The application's name in Redis; required. Replicas of one application use the same namespace,
         * and different applications different ones. Letters, digits, '.', '_' and '-', at most 64.
         */
        public Builder namespace(String namespace) {
            if (namespace == null || !NAMESPACE.matcher(namespace).matches()) {
                throw new IllegalArgumentException("namespace must be 1 to 64 of [A-Za-z0-9._-], was " + namespace);
            }
            this.namespace = namespace;
            return this;
        }

        /**
         * How long a permit outlives its holder's last renewal: a dead JVM's permits come back within
         * this time. Renewed every third of it. Default 30 s; at least 300 ms.
         */
        public Builder leaseTime(Duration leaseTime) {
            if (leaseTime == null || leaseTime.toMillis() < 300) {
                throw new IllegalArgumentException("leaseTime must be at least 300 ms, was " + leaseTime);
            }
            this.leaseTime = leaseTime;
            return this;
        }

        /** Connect and read timeout of each Redis call made by the client this store makes. Default 2 s. */
        public Builder timeout(Duration timeout) {
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout must be positive, was " + timeout);
            }
            this.timeout = timeout;
            return this;
        }

        /** How often a waiter tries again for a permit another replica may have freed. Default 100 ms. */
        public Builder pollInterval(Duration pollInterval) {
            if (pollInterval == null || pollInterval.toMillis() < 1) {
                throw new IllegalArgumentException("pollInterval must be at least 1 ms, was " + pollInterval);
            }
            this.pollInterval = pollInterval;
            return this;
        }

        /**
         * Does not connect: the first {@code open()} does, and fails closed if Redis is not there.
         *
         * @throws IllegalStateException when no namespace was set
         */
        public RedisPermitStore build() {
            if (namespace == null) {
                throw new IllegalStateException("namespace is required");
            }
            return new RedisPermitStore(this);
        }
    }
}
