package dev.sandbox4j.redis;

import dev.sandbox4j.compose.PermitLoss;
import dev.sandbox4j.compose.PermitStoreException;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.compose.PermitStore;
import dev.sandbox4j.redis.internal.RedisUri;
import dev.sandbox4j.redis.internal.Scripts;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocketFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisPubSub;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.RedisSentinelClient;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * A {@link PermitStore} on Redis, so that one {@link dev.sandbox4j.compose.ConcurrencyLimiter} cap holds
 * across every replica that points at the same Redis and namespace.
 *
 * <pre>{@code
 * RedisPermitStore store = RedisPermitStore.builder()
 *         .uri("rediss://redis.internal:6380").namespace("agent-backend").build();
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
 * <p><b>A lost lease is never put back over a cap.</b> A renewal that finds its lease gone (this JVM
 * was paused or cut off past the lease time and another replica took the permit, or Redis lost its
 * data) adds it back only if both caps allow; otherwise the lease is lost: the limiter closes the
 * sandbox, its {@code exec} throws {@link dev.sandbox4j.compose.PermitLostException}, and the {@link
 * PermitLoss} (which caps were exceeded meanwhile, global included) goes to the limiter's listener. A
 * lease that no renewal reached for a whole lease time (Redis unreachable from here) is treated as lost
 * too, since other replicas may have taken it. A JVM that is stopped (SIGSTOP, a long GC pause) cannot
 * act while stopped: its sandbox runs over the cap from its lease's expiry until it resumes and closes
 * it, and that overlap is reported as above.
 *
 * <p><b>Redis emptied or replaced</b> (FLUSHALL, a restart without persistence, a fail-over to an empty
 * replica) is recognised by the namespace's epoch, a random id stored with its configuration: when it
 * is missing, for half a lease time only renewals of sandboxes still open get permits (within the
 * caps) and every new {@code open()} waits. The same wait applies to the first use of a namespace, which
 * Redis cannot tell from an emptied one.
 *
 * <p><b>One configuration per namespace.</b> The caps and the lease time are stored in Redis with the
 * namespace; a limiter whose caps or lease time differ fails when it is built (or, if Redis was not
 * reachable then, at its first {@code open()}) with a {@link SandboxConfigurationException} naming both.
 * To change them, use a new namespace (or delete {@code sandbox4j:{namespace}:meta} while no replica runs).
 *
 * <p><b>Bounds.</b> Each Redis call gives up after {@link Builder#timeout} (connect, and socket read);
 * borrowing a pooled connection waits at most as long. So when Redis stalls, {@code open()} fails
 * closed within about twice the timeout (plus {@code maxWait} when it waits for capacity) and {@code
 * close()} returns within the timeout (the release goes on in the background: it is serialised with
 * the renewals, so a lease given back is never renewed again). A waiter wakes on a release published
 * by any replica (Redis pub/sub) and otherwise tries again every {@link Builder#pollInterval} (a lease
 * that expired publishes nothing).
 *
 * <p>Fails closed: when Redis cannot be reached or answers with an error, {@code open()} throws
 * {@link PermitStoreException} (retriable) and no sandbox is created. A detached sandbox's permit is
 * kept in Redis with its lifetime (see {@link dev.sandbox4j.compose.ConcurrencyLimiter}); it does not
 * survive Redis losing its data. Close the store after the sandboxes: closing it stops the renewals
 * (open leases then expire). Thread-safe.
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
    private final String metaKey;
    private final String recoveringKey;
    private final String channel;
    private final long leaseMillis;
    private final long timeoutMillis;
    private final long pollNanos;
    private final String endpoint;

    // the caps this store's limiters use: set by the first configure() or tryAcquire()
    private final AtomicReference<int[]> caps = new AtomicReference<>();
    // leases taken here and not given back, lost or detached: what the worker renews
    private final Map<String, RedisLease> held = new ConcurrentHashMap<>();
    // one thread for renewals and releases: a release queued behind a renewal is never renewed again
    private final ScheduledExecutorService worker;
    private final AtomicBoolean renewFailing = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicLong calls = new AtomicLong();

    // waiters of this store, woken one per release (not all: the others would only be refused again)
    private final ReentrantLock localLock = new ReentrantLock();
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    private long localReleases;
    // per caller thread: the release it was woken for, and the last release it passed on
    private final ThreadLocal<long[]> wakes = ThreadLocal.withInitial(() -> new long[] {-1, -1});
    private final AtomicBoolean subscribed = new AtomicBoolean();
    private final Wakeups wakeups = new Wakeups();

    private RedisPermitStore(Builder b) {
        this.namespace = b.namespace;
        // one hash tag per namespace: the scripts touch several keys, which must share a cluster slot
        String prefix = "sandbox4j:{" + b.namespace + "}:";
        this.keyPrefix = prefix + "key:";
        this.globalKey = prefix + "global";
        this.metaKey = prefix + "meta";
        this.recoveringKey = prefix + "reestablishing";
        this.channel = prefix + "released";
        this.leaseMillis = b.leaseTime.toMillis();
        this.timeoutMillis = b.timeout.toMillis();
        this.pollNanos = b.pollInterval.toNanos();
        if (b.client != null) {
            this.redis = b.client;
            this.ownsClient = false;
            this.endpoint = "the given client";
        } else {
            this.redis = b.makeClient();
            this.ownsClient = true;
            this.endpoint = b.endpoint();
        }
        this.worker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sandbox4j-redis-" + namespace);
            t.setDaemon(true);
            return t;
        });
        long every = Math.max(1, leaseMillis / 3);
        worker.scheduleWithFixedDelay(this::renewSafely, every, every, TimeUnit.MILLISECONDS);
    }

    /** {@return a new builder; {@link Builder#namespace} is required} */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Checks the caps against those stored for the namespace (writing them when there are none).
     * Redis unreachable now is logged: the same check runs with every acquisition.
     *
     * @throws SandboxConfigurationException when the namespace has other caps or another lease time, or
     *         this store was configured with other caps before
     */
    @Override
    public void configure(int perKey, int global) {
        ensureOpen();
        setCaps(perKey, global);
        List<?> answer;
        try {
            answer = (List<?>) call(Scripts.CONFIGURE, List.of(metaKey, recoveringKey, globalKey), head(perKey, global));
        } catch (RuntimeException e) {
            log.warn("Redis permit store '{}' could not check its configuration at {} ({}); every open() checks it",
                    namespace, endpoint, e.getClass().getSimpleName());
            return;
        }
        checkAgreement(answer, perKey, global);
    }

    @Override
    public Acquisition tryAcquire(String key, int perKey, int global) {
        ensureOpen();
        setCaps(perKey, global);
        long epoch = localEpoch(); // before asking: a release after this point wakes the waiter
        String id = UUID.randomUUID().toString();
        String set = keyPrefix + key;
        List<String> args = new ArrayList<>(head(perKey, global));
        args.add(id);
        long sent = System.nanoTime();
        List<?> answer;
        try {
            answer = (List<?>) call(Scripts.ACQUIRE, List.of(metaKey, recoveringKey, globalKey, set), args);
        } catch (RuntimeException e) {
            // JedisException mostly; anything else (a closed pool, an odd answer) fails closed too. The
            // script may have run before the answer was lost: take back whatever this id holds, on the
            // worker so that open() keeps its bound (failing that, the lease expires within the lease time)
            submitQuietly(() -> takeBack(set, id, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(leaseMillis)));
            throw unavailable("no sandbox permit for key '" + key + "': the Redis permit store at " + endpoint
                    + " did not answer (" + e.getClass().getSimpleName() + ")", e);
        }
        checkAgreement(answer, perKey, global);
        int status = ((Number) answer.get(0)).intValue();
        int k = ((Number) answer.get(1)).intValue();
        int g = ((Number) answer.get(2)).intValue();
        if (status == -1) {
            return Acquisition.refused(k, g, epoch, "Redis lost its data or the namespace is new: for up to "
                    + leaseMillis / 2 + " ms only sandboxes still open re-establish their permits");
        }
        if (status != 1) {
            long[] wake = wakes.get();
            if (g < global && wake[0] >= 0 && wake[1] != wake[0]) {
                // woken for a release that this key cannot use but another key may: pass it on, once
                wake[1] = wake[0];
                passOn(wake[0]);
            }
            return Acquisition.refused(k, g, epoch);
        }
        RedisLease lease = new RedisLease(id, key, set, sent);
        held.put(id, lease);
        wakes.get()[0] = -1; // served: nothing to pass on
        return Acquisition.granted(lease);
    }

    @Override
    public Lease adopt(String key, String sandboxId) {
        ensureOpen();
        int[] c = caps.get();
        if (c == null) {
            throw new IllegalStateException("adopt before the store was configured with caps");
        }
        String id = UUID.randomUUID().toString();
        String set = keyPrefix + key;
        List<String> args = new ArrayList<>(head(c[0], c[1]));
        args.add(detachedMember(sandboxId));
        args.add(id);
        long sent = System.nanoTime();
        List<?> answer;
        try {
            answer = (List<?>) call(Scripts.ADOPT, List.of(metaKey, recoveringKey, globalKey, set), args);
        } catch (RuntimeException e) {
            throw unavailable("could not take over the permit of sandbox " + sandboxId + ": the Redis permit store at "
                    + endpoint + " did not answer (" + e.getClass().getSimpleName() + ")", e);
        }
        checkAgreement(answer, c[0], c[1]);
        if (((Number) answer.get(0)).intValue() != 1) {
            return null;
        }
        RedisLease lease = new RedisLease(id, key, set, sent);
        long left = ((Number) answer.get(1)).longValue();
        if (left >= 0) {
            lease.lifetimeEnd = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(left);
        }
        held.put(id, lease);
        return lease;
    }

    @Override
    public long awaitRelease(Acquisition refused, long nanos) throws InterruptedException {
        long start = System.nanoTime();
        subscribe();
        // the fallback for what publishes nothing (an expired lease, a missed message); jitter spreads replicas
        long poll = pollNanos / 2 + ThreadLocalRandom.current().nextLong(pollNanos / 2 + 1);
        long wait = Math.min(nanos, poll);
        long[] wake = wakes.get();
        wake[0] = -1;
        localLock.lock();
        try {
            if (localReleases != refused.epoch()) {
                return nanos - (System.nanoTime() - start); // a release since the refusal: try again now
            }
            Waiter w = new Waiter(localLock.newCondition());
            waiters.addLast(w);
            try {
                while (w.wokenFor < 0 && wait > 0) {
                    wait = w.woken.awaitNanos(wait);
                }
            } finally {
                if (w.wokenFor < 0) {
                    waiters.remove(w);
                }
            }
            wake[0] = w.wokenFor;
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
                calls.incrementAndGet();
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

    /** {@return the namespace all keys of this store are under} */
    public String namespace() {
        return namespace;
    }

    /**
     * {@return the lease time, in whole milliseconds: how long a permit outlives its holder's last renewal}
     * It is stored with the namespace, and this store renews its leases every third of it.
     */
    public Duration leaseTime() {
        return Duration.ofMillis(leaseMillis);
    }

    /** {@return the number of leases taken through this store and not given back, lost or detached yet} */
    public int heldHere() {
        return held.size();
    }

    /**
     * How long new permits still wait while the namespace re-establishes (after Redis lost its data, or
     * on a namespace's first use); zero when they do not.
     *
     * @return the time left, rounded up to at least a millisecond while re-establishing; {@link
     *         Duration#ZERO} when new permits do not wait
     * @throws PermitStoreException when Redis cannot be asked
     * @throws IllegalStateException when this store is closed
     */
    public Duration reestablishing() {
        ensureOpen();
        try {
            calls.incrementAndGet();
            long left = redis.pttl(recoveringKey); // -2: no such key; 0: less than a millisecond left
            return Duration.ofMillis(left == -2 ? 0 : Math.max(1, left));
        } catch (RuntimeException e) {
            throw unavailable("the Redis permit store at " + endpoint + " did not answer", e);
        }
    }

    /**
     * {@return the number of Redis commands this store has sent (scripts, scans, subscriptions)} For
     * measuring, not for logic.
     */
    public long redisCalls() {
        return calls.get();
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
        wakeups.stop();
        worker.shutdown();
        try {
            // queued releases get one timeout to finish
            worker.awaitTermination(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        worker.shutdownNow();
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

    private List<String> head(int perKey, int global) {
        return List.of(UUID.randomUUID().toString(), Integer.toString(perKey), Integer.toString(global),
                Long.toString(leaseMillis));
    }

    private void setCaps(int perKey, int global) {
        int[] mine = {perKey, global};
        int[] before = caps.compareAndExchange(null, mine);
        if (before != null && (before[0] != perKey || before[1] != global)) {
            throw new SandboxConfigurationException("Redis permit store '" + namespace + "' serves a limiter with "
                    + describe(before[0], before[1], leaseMillis) + "; another limiter on it has "
                    + describe(perKey, global, leaseMillis) + ": limiters sharing a namespace must use the same caps");
        }
    }

    private void checkAgreement(List<?> answer, int perKey, int global) {
        if (((Number) answer.get(0)).intValue() != -2) {
            return;
        }
        int theirPerKey = Integer.parseInt(String.valueOf(answer.get(1)));
        int theirGlobal = Integer.parseInt(String.valueOf(answer.get(2)));
        long theirLease = Long.parseLong(String.valueOf(answer.get(3)));
        throw new SandboxConfigurationException("namespace '" + namespace + "' at " + endpoint + " is configured with "
                + describe(theirPerKey, theirGlobal, theirLease) + "; this replica has " + describe(perKey, global, leaseMillis)
                + ": every replica of a namespace must use the same caps and lease time (use a new namespace to change them)");
    }

    private static String describe(int perKey, int global, long lease) {
        return "perKey=" + perKey + ", global=" + (global == Integer.MAX_VALUE ? "none" : Integer.toString(global))
                + ", leaseTime=" + lease + " ms";
    }

    private static String detachedMember(String sandboxId) {
        return "detached:" + sandboxId;
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

    /** A permit may have come back: wake the longest waiter (callers between a refusal and their wait see the count). */
    private void signalLocalRelease() {
        localLock.lock();
        try {
            localReleases++;
            wakeNext(localReleases);
        } finally {
            localLock.unlock();
        }
    }

    private void passOn(long release) {
        localLock.lock();
        try {
            wakeNext(release);
        } finally {
            localLock.unlock();
        }
    }

    /** Under the lock. */
    private void wakeNext(long release) {
        Waiter w = waiters.pollFirst();
        if (w != null) {
            w.wokenFor = release;
            w.woken.signal();
        }
    }

    /** Wakes every waiter: the subscription (re)started, so releases may have been missed. */
    private void wakeAll() {
        localLock.lock();
        try {
            localReleases++;
            while (!waiters.isEmpty()) {
                wakeNext(localReleases);
            }
        } finally {
            localLock.unlock();
        }
    }

    private static final class Waiter {
        final Condition woken;
        long wokenFor = -1;

        Waiter(Condition woken) {
            this.woken = woken;
        }
    }

    /**
     * EVALSHA, loading the script once more when the server lost it (a restart, SCRIPT FLUSH). A pooled
     * connection that a restart broke fails at once: that is tried once more on a new one (every script
     * may run twice with the same arguments: lease ids make them idempotent); a timeout is not.
     */
    private Object call(Scripts.Script script, List<String> keys, List<String> args) {
        long start = System.nanoTime();
        try {
            return callOnce(script, keys, args);
        } catch (JedisConnectionException e) {
            if (System.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(timeoutMillis) / 2) {
                throw e;
            }
            return callOnce(script, keys, args);
        }
    }

    private Object callOnce(Scripts.Script script, List<String> keys, List<String> args) {
        calls.incrementAndGet();
        try {
            return redis.evalsha(script.sha(), keys, args);
        } catch (JedisNoScriptException e) {
            calls.incrementAndGet();
            return redis.eval(script.text(), keys, args);
        }
    }

    /**
     * On the worker: removes what a failed acquire may have added (a stalled Redis runs the script after
     * the client gave up). Tried again every poll interval until it works or the lease would have
     * expired anyway, so that a lease nobody holds does not block capacity for a lease time.
     */
    private void takeBack(String set, String id, long giveUp) {
        try {
            call(Scripts.RELEASE, List.of(set, globalKey), List.of(id, channel));
        } catch (RuntimeException e) {
            if (System.nanoTime() - giveUp < 0 && !closed.get()) {
                try {
                    worker.schedule(() -> takeBack(set, id, giveUp), Math.min(pollNanos, TimeUnit.MILLISECONDS.toNanos(timeoutMillis)),
                            TimeUnit.NANOSECONDS);
                } catch (RejectedExecutionException closing) {
                    // closed: the lease expires on its own
                }
            }
        }
    }

    private Future<?> submitQuietly(Runnable task) {
        try {
            return worker.submit(task);
        } catch (RejectedExecutionException e) {
            return null; // closed: the lease expires on its own
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
            if (renewFailing.compareAndSet(false, true)) {
                log.warn("Redis permit store '{}' could not renew {} lease(s) at {}: {}", namespace, held.size(),
                        endpoint, e.getClass().getSimpleName());
            }
            // a lease no renewal reached for a whole lease time may have been taken by another replica
            long now = System.nanoTime();
            for (RedisLease lease : List.copyOf(held.values())) {
                if (now - lease.validUntil > 0) {
                    lose(lease, PermitLoss.builder(lease.key, PermitLoss.Reason.NOT_RENEWED).caps(capsOrMax()[0], capsOrMax()[1]).build());
                }
            }
        }
    }

    private int[] capsOrMax() {
        int[] c = caps.get();
        return c == null ? new int[] {Integer.MAX_VALUE, Integer.MAX_VALUE} : c;
    }

    /** On the worker. */
    private void renew() {
        List<RedisLease> leases = List.copyOf(held.values());
        int[] c = caps.get();
        if (leases.isEmpty() || c == null) {
            return;
        }
        List<String> keys = new ArrayList<>(leases.size() + 3);
        keys.add(metaKey);
        keys.add(recoveringKey);
        keys.add(globalKey);
        List<String> args = new ArrayList<>(head(c[0], c[1]));
        for (RedisLease l : leases) {
            keys.add(l.set);
            args.add(l.id);
        }
        long sent = System.nanoTime();
        List<?> answer = (List<?>) call(Scripts.RENEW, keys, args);
        int first = ((Number) answer.get(0)).intValue();
        if (first == -2) {
            // someone re-wrote the namespace's configuration: fail like any renewal (lost after a lease time)
            checkAgreement(answer, c[0], c[1]);
        }
        if (first == 1) {
            log.warn("Redis permit store '{}': the namespace's epoch was gone at {} (FLUSHALL, a restart or an empty"
                    + " fail-over); new permits wait {} ms while the {} lease(s) here re-establish", namespace, endpoint,
                    leaseMillis / 2, leases.size());
        }
        int restored = 0;
        for (int i = 0; i < leases.size(); i++) {
            RedisLease l = leases.get(i);
            int status = ((Number) answer.get(1 + 3 * i)).intValue();
            int k = ((Number) answer.get(2 + 3 * i)).intValue();
            int g = ((Number) answer.get(3 + 3 * i)).intValue();
            if (status > 0) {
                l.validUntil = Math.max(l.validUntil, sent + TimeUnit.MILLISECONDS.toNanos(leaseMillis));
                restored += status == 2 ? 1 : 0;
            } else {
                lose(l, PermitLoss.builder(l.key, PermitLoss.Reason.TAKEN).held(k, g).caps(c[0], c[1]).build());
            }
        }
        if (restored > 0) {
            log.info("Redis permit store '{}' re-established {} lease(s) that Redis had lost, within the caps", namespace, restored);
        }
    }

    private void lose(RedisLease lease, PermitLoss loss) {
        if (held.remove(lease.id) == null) {
            return; // given back meanwhile
        }
        log.warn("Redis permit store '{}': a lease of key '{}' is lost ({}){}", namespace, lease.key, loss,
                loss.perKeyExceeded() || loss.globalExceeded() ? "; the cap was exceeded until now" : "");
        lease.lost(loss);
    }

    /** Starts the subscriber that turns releases on any replica into local wake-ups, once. */
    private void subscribe() {
        if (subscribed.compareAndSet(false, true)) {
            Thread t = new Thread(wakeups, "sandbox4j-redis-wakeups-" + namespace);
            t.setDaemon(true);
            t.start();
        }
    }

    /** Listens on the namespace's channel; reconnects after a failure (waiters poll meanwhile). */
    private final class Wakeups extends JedisPubSub implements Runnable {
        private volatile boolean stopped;

        @Override
        public void run() {
            long backoff = Math.max(1, TimeUnit.NANOSECONDS.toMillis(pollNanos));
            while (!stopped && !closed.get()) {
                try {
                    calls.incrementAndGet();
                    redis.subscribe(this, channel);
                } catch (RuntimeException e) {
                    log.debug("Redis permit store '{}': wake-up subscription lost ({}); waiters poll meanwhile",
                            namespace, e.getClass().getSimpleName());
                }
                if (stopped || closed.get()) {
                    return;
                }
                try {
                    Thread.sleep(backoff); // a back-off before reconnecting, not a wait for a result
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        @Override
        public void onSubscribe(String channel, int subscribedChannels) {
            wakeAll(); // whatever was published while not subscribed: let every waiter try again
        }

        @Override
        public void onMessage(String channel, String message) {
            signalLocalRelease();
        }

        void stop() {
            stopped = true;
            try {
                if (isSubscribed()) {
                    unsubscribe();
                }
            } catch (RuntimeException e) {
                log.debug("could not unsubscribe cleanly: {}", e.getClass().getSimpleName());
            }
        }
    }

    private final class RedisLease implements PermitStore.Lease {
        private final String id;
        private final String key;
        private final String set;
        // System.nanoTime() until which the lease is surely valid: the last successful call's send time + lease
        private volatile long validUntil;
        // when adopted: when the detached sandbox's lifetime ends, which a new detach does not extend
        private volatile long lifetimeEnd = Long.MAX_VALUE;
        private Consumer<PermitLoss> handler;
        private volatile PermitLoss loss;

        RedisLease(String id, String key, String set, long sent) {
            this.id = id;
            this.key = key;
            this.set = set;
            this.validUntil = sent + TimeUnit.MILLISECONDS.toNanos(leaseMillis);
        }

        @Override
        public void release() {
            held.remove(id);
            Future<?> done = submitQuietly(() -> {
                try {
                    call(Scripts.RELEASE, List.of(set, globalKey), List.of(id, channel));
                } catch (RuntimeException e) {
                    log.warn("Redis permit store '{}' could not give lease {} back ({}); it expires within {} ms",
                            namespace, id, e.getClass().getSimpleName(), leaseMillis);
                } finally {
                    signalLocalRelease();
                }
            });
            awaitBounded(done, "giving lease " + id + " back");
        }

        @Override
        public boolean detach(String sandboxId, Duration lifetime) {
            long leftNanos = Math.min(lifetimeEnd == Long.MAX_VALUE ? Long.MAX_VALUE : lifetimeEnd - System.nanoTime(),
                    lifetime.compareTo(Duration.ofDays(365)) > 0 ? TimeUnit.DAYS.toNanos(365) : lifetime.toNanos());
            long leftMillis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(leftNanos));
            held.remove(id);
            Future<?> done = submitQuietly(() -> {
                try {
                    Object kept = call(Scripts.DETACH, List.of(set, globalKey),
                            List.of(id, detachedMember(sandboxId), Long.toString(leftMillis)));
                    if (((Number) kept).intValue() != 1) {
                        log.warn("Redis permit store '{}': the lease of detached sandbox {} was already gone; it keeps no permit",
                                namespace, sandboxId);
                    }
                } catch (RuntimeException e) {
                    log.warn("Redis permit store '{}' could not keep the permit of detached sandbox {} ({}); its lease"
                            + " expires within {} ms", namespace, sandboxId, e.getClass().getSimpleName(), leaseMillis);
                }
            });
            awaitBounded(done, "detaching " + sandboxId);
            return true;
        }

        @Override
        public boolean isLost() {
            return loss != null || System.nanoTime() - validUntil > 0;
        }

        @Override
        public void onLost(Consumer<PermitLoss> h) {
            PermitLoss now;
            synchronized (this) {
                handler = h;
                now = loss;
            }
            if (now != null) {
                h.accept(now);
            }
        }

        void lost(PermitLoss l) {
            Consumer<PermitLoss> h;
            synchronized (this) {
                loss = l;
                h = handler;
            }
            if (h != null) {
                h.accept(l);
            }
        }

        private void awaitBounded(Future<?> done, String what) {
            if (done == null) {
                return;
            }
            try {
                done.get(timeoutMillis, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                log.debug("Redis permit store '{}': {} goes on in the background", namespace, what);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException e) {
                log.debug("Redis permit store '{}': {} failed: {}", namespace, what, e.getCause().toString());
            }
        }
    }

    /**
     * Settings for {@link RedisPermitStore}: where Redis is (default {@code redis://127.0.0.1:6379}, a Sentinel or a cluster), TLS, the namespace, the lease time and the timeouts.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private RedisUri uri = RedisUri.parse("redis://127.0.0.1:6379");
        private UnifiedJedis client;
        private String namespace;
        private Duration leaseTime = Duration.ofSeconds(30);
        private Duration timeout = Duration.ofSeconds(2);
        private Duration pollInterval = Duration.ofSeconds(1);
        private SSLSocketFactory sslSocketFactory;
        private SSLParameters sslParameters;
        private boolean verifyHostname = true;
        private String sentinelMaster;
        private Set<HostAndPort> sentinels;
        private Set<HostAndPort> clusterNodes;

        private Builder() {
        }

        /**
         * {@code redis://[[user]:password@]host[:port][/db]} or {@code rediss://...} (TLS). Default {@code
         * redis://127.0.0.1:6379}. The password may hold any character ({@code @ # : /} included); it is
         * percent-decoded, so write a literal {@code %} as {@code %25}. No error message shows the user info.
         * With {@link #sentinel} or {@link #cluster}, the URI gives the credentials, database and TLS only.
         *
         * @param uri not null
         * @return this builder
         * @throws IllegalArgumentException when it is not a {@code redis://} or {@code rediss://} URI, or its
         *         host, port, database number or percent-encoding is not valid
         */
        public Builder uri(String uri) {
            this.uri = RedisUri.parse(Objects.requireNonNull(uri, "uri"));
            return this;
        }

        /**
         * A client to use instead of one made from {@link #uri} (its own pool, TLS, auth). The store does
         * not close it. Its timeouts are the store's bounds then. When set, {@link #uri}, {@link #sentinel},
         * {@link #cluster}, the TLS settings and {@link #timeout}'s client part are not used.
         *
         * @param client not null; the caller closes it after the store
         * @return this builder
         */
        public Builder client(UnifiedJedis client) {
            this.client = Objects.requireNonNull(client, "client");
            return this;
        }

        /**
         * Redis behind Sentinel: the master's name and the sentinels' {@code host:port}s. The URI's
         * credentials and database are the master's; the sentinels are asked without credentials.
         * Excludes {@link #cluster}.
         *
         * @param masterName the master's name as the sentinels know it; not null
         * @param sentinels {@code host:port} of one or more sentinels (a missing port is taken as 6379, not
         *        Sentinel's 26379)
         * @return this builder
         * @throws IllegalArgumentException when {@code sentinels} is null or empty, or one of them is not a
         *         valid {@code host:port}
         */
        public Builder sentinel(String masterName, Set<String> sentinels) {
            this.sentinelMaster = Objects.requireNonNull(masterName, "masterName");
            this.sentinels = hostsAndPorts(sentinels);
            return this;
        }

        /**
         * Redis Cluster: some of its nodes' {@code host:port}s. A namespace's keys share one hash tag,
         * so the scripts run in one slot. Excludes {@link #sentinel}; the URI's database must be 0.
         *
         * @param nodes {@code host:port} of one or more nodes (a missing port is taken as 6379)
         * @return this builder
         * @throws IllegalArgumentException when {@code nodes} is null or empty, or one of them is not a valid
         *         {@code host:port}
         */
        public Builder cluster(Set<String> nodes) {
            this.clusterNodes = hostsAndPorts(nodes);
            return this;
        }

        /**
         * The socket factory for {@code rediss://}: a trust store and a client certificate of this store's
         * own (from an {@code SSLContext}). Default: the JVM's.
         *
         * @param factory not null
         * @return this builder
         */
        public Builder sslSocketFactory(SSLSocketFactory factory) {
            this.sslSocketFactory = Objects.requireNonNull(factory, "factory");
            return this;
        }

        /**
         * TLS parameters (protocols, cipher suites, SNI). The host name is verified against the server's
         * certificate unless {@link #verifyHostname(boolean)} turns that off, whatever these say.
         *
         * @param parameters not null; copied when {@link #build()} makes the client
         * @return this builder
         */
        public Builder sslParameters(SSLParameters parameters) {
            this.sslParameters = Objects.requireNonNull(parameters, "parameters");
            return this;
        }

        /**
         * Whether {@code rediss://} checks that the certificate names the host. Default true; turn off only for tests.
         *
         * @param verify false to skip the check
         * @return this builder
         */
        public Builder verifyHostname(boolean verify) {
            this.verifyHostname = verify;
            return this;
        }

        /**
         * The application's name in Redis; required. Replicas of one application use the same namespace,
         * and different applications different ones. Letters, digits, '.', '_' and '-', at most 64.
         *
         * @param namespace 1 to 64 of {@code [A-Za-z0-9._-]}
         * @return this builder
         * @throws IllegalArgumentException when null or not of that form
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
         * this time. Renewed every third of it. Stored with the namespace: every replica must use the
         * same. Default 30 s; at least 300 ms.
         *
         * @param leaseTime at least 300 ms
         * @return this builder
         * @throws IllegalArgumentException when null or shorter than 300 ms
         */
        public Builder leaseTime(Duration leaseTime) {
            if (leaseTime == null || leaseTime.toMillis() < 300) {
                throw new IllegalArgumentException("leaseTime must be at least 300 ms, was " + leaseTime);
            }
            this.leaseTime = leaseTime;
            return this;
        }

        /**
         * Connect and read timeout of each Redis call made by the client this store makes, and the longest
         * wait for a pooled connection. Default 2 s.
         *
         * @param timeout at least 1 ms (Jedis takes whole milliseconds, and 0 means no timeout at all), at
         *                most {@link Integer#MAX_VALUE} milliseconds
         * @return this builder
         * @throws IllegalArgumentException when null, shorter than 1 ms or longer than {@link Integer#MAX_VALUE}
         *         milliseconds
         */
        public Builder timeout(Duration timeout) {
            if (timeout == null || timeout.toMillis() < 1 || timeout.toMillis() > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("timeout must be at least 1 ms (0 would mean none), was " + timeout);
            }
            this.timeout = timeout;
            return this;
        }

        /**
         * How often a waiter tries again when no release was published (a lease that expired publishes
         * nothing). Default 1 s.
         *
         * @param pollInterval at least 1 ms
         * @return this builder
         * @throws IllegalArgumentException when null or shorter than 1 ms
         */
        public Builder pollInterval(Duration pollInterval) {
            if (pollInterval == null || pollInterval.toMillis() < 1) {
                throw new IllegalArgumentException("pollInterval must be at least 1 ms, was " + pollInterval);
            }
            this.pollInterval = pollInterval;
            return this;
        }

        /**
         * Builds the store and starts its renewal thread. With a plain {@link #uri} (or a {@link #client})
         * it does not connect: the limiter built on it checks the configuration, and fails closed at
         * {@code open()} if Redis is not there. With {@link #sentinel} or {@link #cluster}, Jedis asks the
         * sentinels for the master, or the nodes for the slot map, here already.
         *
         * @return the store
         * @throws IllegalStateException when no namespace was set, when both Sentinel and Cluster were, or
         *         when a cluster's URI names a database other than 0
         * @throws redis.clients.jedis.exceptions.JedisException with {@link #sentinel} when no sentinel
         *         answers, with {@link #cluster} when no node does
         */
        public RedisPermitStore build() {
            if (namespace == null) {
                throw new IllegalStateException("namespace is required");
            }
            if (sentinels != null && clusterNodes != null) {
                throw new IllegalStateException("sentinel and cluster exclude each other");
            }
            return new RedisPermitStore(this);
        }

        private static Set<HostAndPort> hostsAndPorts(Set<String> list) {
            if (list == null || list.isEmpty()) {
                throw new IllegalArgumentException("at least one host:port is required");
            }
            Set<HostAndPort> out = new LinkedHashSet<>();
            for (String s : new HashSet<>(list)) {
                RedisUri u = RedisUri.parse("redis://" + Objects.requireNonNull(s, "host:port"));
                out.add(new HostAndPort(u.host(), u.port()));
            }
            return out;
        }

        String endpoint() {
            if (sentinels != null) {
                return "sentinel master '" + sentinelMaster + "' via " + sentinels;
            }
            if (clusterNodes != null) {
                return "cluster " + clusterNodes;
            }
            return uri.safe();
        }

        /** For the data nodes: the URI's credentials and database; for sentinels: neither (TLS and timeouts alike). */
        private JedisClientConfig config(boolean dataNode) {
            int millis = (int) timeout.toMillis();
            DefaultJedisClientConfig.Builder config = DefaultJedisClientConfig.builder()
                    .connectionTimeoutMillis(millis).socketTimeoutMillis(millis);
            if (dataNode) {
                config.user(uri.user()).password(uri.password()).database(uri.database());
            }
            if (uri.tls()) {
                SSLParameters params = new SSLParameters();
                if (sslParameters != null) {
                    params = copy(sslParameters);
                }
                if (verifyHostname) {
                    params.setEndpointIdentificationAlgorithm("HTTPS");
                } else {
                    params.setEndpointIdentificationAlgorithm(null);
                }
                config.ssl(true).sslParameters(params);
                if (sslSocketFactory != null) {
                    config.sslSocketFactory(sslSocketFactory);
                }
            }
            return config.build();
        }

        /** A cluster has no databases but database 0. */
        private JedisClientConfig clusterConfig() {
            if (uri.database() != 0) {
                throw new IllegalStateException("a Redis Cluster has only database 0; the URI names " + uri.database());
            }
            return config(true);
        }

        private static SSLParameters copy(SSLParameters p) {
            SSLParameters c = new SSLParameters(p.getCipherSuites(), p.getProtocols());
            c.setServerNames(p.getServerNames());
            c.setSNIMatchers(p.getSNIMatchers());
            c.setApplicationProtocols(p.getApplicationProtocols());
            c.setUseCipherSuitesOrder(p.getUseCipherSuitesOrder());
            c.setAlgorithmConstraints(p.getAlgorithmConstraints());
            c.setNeedClientAuth(p.getNeedClientAuth());
            if (!p.getNeedClientAuth()) {
                c.setWantClientAuth(p.getWantClientAuth());
            }
            return c;
        }

        private ConnectionPoolConfig pool() {
            ConnectionPoolConfig pool = new ConnectionPoolConfig();
            pool.setMaxTotal(16);
            pool.setMaxIdle(16); // no churn: a new connection costs a handshake (and commands) of its own
            pool.setBlockWhenExhausted(true);
            pool.setMaxWait(timeout); // never wait for a connection longer than for an answer
            return pool;
        }

        UnifiedJedis makeClient() {
            if (sentinels != null) {
                return RedisSentinelClient.builder().masterName(sentinelMaster).sentinels(sentinels)
                        .clientConfig(config(true)).sentinelClientConfig(config(false)).poolConfig(pool()).build();
            }
            if (clusterNodes != null) {
                return RedisClusterClient.builder().nodes(clusterNodes).clientConfig(clusterConfig()).poolConfig(pool()).build();
            }
            return RedisClient.builder().hostAndPort(uri.host(), uri.port()).clientConfig(config(true)).poolConfig(pool()).build();
        }
    }
}
