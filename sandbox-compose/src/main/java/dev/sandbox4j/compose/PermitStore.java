package dev.sandbox4j.compose;

import dev.sandbox4j.compose.PermitLoss;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * Where a {@link dev.sandbox4j.compose.ConcurrencyLimiter} keeps its permits. The default store lives in
 * the JVM; a shared one (such as {@code sandbox-redis}'s) makes one cap hold across replicas.
 *
 * <p>The limiter owns the semantics that must be the same everywhere (waiting up to {@code maxWait},
 * the typed errors, interrupts, giving a permit back exactly once); a store only answers two
 * questions: "take one permit of this key and one of the global pool, both or neither" and "wait
 * until a permit may have come back".
 *
 * <p>A store fails closed: when it cannot tell whether a permit is free (its backend is down), it
 * throws {@link dev.sandbox4j.compose.PermitStoreException}, never grants. A store whose permits can be
 * lost while held (a lease that expired while its holder was paused, a backend that lost its data)
 * never puts a lost permit back over a cap: it tells the holder through {@link Lease#onLost}, and the
 * limiter closes the sandbox. Implementations are thread-safe.
 *
 * @since 0.1.0
 */
public interface PermitStore extends AutoCloseable {

    /**
     * One try, without waiting for capacity: takes a permit of {@code key} (at most {@code perKey}
     * held) and a global one (at most {@code global} held, {@link Integer#MAX_VALUE} for no global
     * cap) together, or neither.
     *
     * @param key the caller's key (a tenant, a user)
     * @param perKey the most permits one key may hold, at least 1
     * @param global the most permits held over all keys; {@link Integer#MAX_VALUE} for no global cap
     * @return a lease when both permits were taken, else the counts that refused it
     * @throws dev.sandbox4j.compose.PermitStoreException when the store cannot answer; no permit is held then
     */
    Acquisition tryAcquire(String key, int perKey, int global);

    /**
     * Blocks until a permit may have been given back since {@code refused} was answered, or until
     * {@code nanos} elapse. May return early without a release (the caller tries again); must not miss
     * a release seen by this store after {@code refused}.
     *
     * @param refused the refusal the caller waits after
     * @param nanos the most time to wait, in nanoseconds
     * @throws InterruptedException when the waiting thread is interrupted
     * @return the nanoseconds left of {@code nanos}, as {@link java.util.concurrent.locks.Condition#awaitNanos}
     */
    long awaitRelease(Acquisition refused, long nanos) throws InterruptedException;

    /**
     * Called once by every limiter built on this store, with its caps, before its first acquisition. A
     * shared store checks that every limiter on it uses the same caps (and, say, the same lease time)
     * and throws {@link dev.sandbox4j.api.exception.SandboxConfigurationException} naming both values when one
     * disagrees. The default accepts anything.
     *
     * @param perKey the limiter's cap per key
     * @param global the limiter's global cap; {@link Integer#MAX_VALUE} for none
     */
    default void configure(int perKey, int global) {
    }

    /**
     * Takes over the permit that a detached sandbox keeps ({@link Lease#detach}), for the holder that
     * attached to it: the permit becomes an ordinary held lease again. Atomic: of two holders attaching
     * the same sandbox at once, one gets it.
     *
     * @param key the key the permit was held under
     * @param sandboxId the provider's id of the detached sandbox
     * @return the lease, or null when {@code key} keeps no permit for {@code sandboxId} (never detached
     *         here, already taken over, or expired with the sandbox's lifetime)
     * @throws dev.sandbox4j.compose.PermitStoreException when the store cannot answer
     */
    default Lease adopt(String key, String sandboxId) {
        return null;
    }

    /**
     * {@return the permits held now, over all keys, as far as the store knows (a shared store counts every
     * replica)}
     */
    int inUse();

    /**
     * {@return the permits held now by {@code key}}
     *
     * @param key the caller's key
     */
    int inUse(String key);

    /** {@return the number of keys holding at least one permit now} */
    int activeKeys();

    /** Releases the store's own resources (connections, threads). Does not release held permits. */
    @Override
    default void close() {
    }

    /**
     * One held permit pair (per key and global).
     *
     * @since 0.1.0
     */
    interface Lease {
        /**
         * Gives the permits back. Called at most once per lease by the limiter. Never throws: a store that
         * cannot reach its backend logs it, and the lease expires there on its own.
         */
        void release();

        /**
         * Registers what to do when the store finds this lease lost; called at most once, at once if it
         * is lost already, on a thread of the store's. The default store never loses a lease.
         *
         * @param handler called with what was lost; not null
         */
        default void onLost(Consumer<PermitLoss> handler) {
        }

        /**
         * Whether the lease is lost or may be (no renewal succeeded within the lease time): the holder
         * must not start more work under it. Cheap, no call to the backend.
         *
         * @return true when lost or possibly lost
         */
        default boolean isLost() {
            return false;
        }

        /**
         * Keeps the permit for a sandbox that was detached, without a holder, until a holder {@link
         * PermitStore#adopt adopts} it or {@code lifetime} passes (the sandbox's provider kills it by
         * then), whichever comes first; nothing renews it meanwhile. Replaces {@link #release()}: the
         * limiter calls one or the other, once.
         *
         * @param sandboxId the provider's id of the detached sandbox
         * @param lifetime how long the sandbox may live; the permit is kept no longer
         * @return false when the store cannot keep permits for detached sandboxes (the limiter then gives
         *         the permit back, and says so in its javadoc); the lease is unchanged then
         */
        default boolean detach(String sandboxId, Duration lifetime) {
            return false;
        }
    }

    /**
     * What one {@link #tryAcquire} found: a lease, or the counts that refused it.
     *
     * @since 0.1.0
     */
    final class Acquisition {
        private final Lease lease;
        private final int heldByKey;
        private final int heldInAll;
        private final long epoch;
        private final String note;

        private Acquisition(Lease lease, int heldByKey, int heldInAll, long epoch, String note) {
            this.lease = lease;
            this.heldByKey = heldByKey;
            this.heldInAll = heldInAll;
            this.epoch = epoch;
            this.note = note;
        }

        /**
         * A granted acquisition.
         *
         * @param lease the held permits; not null
         * @return the acquisition
         */
        public static Acquisition granted(Lease lease) {
            if (lease == null) {
                throw new NullPointerException("lease");
            }
            return new Acquisition(lease, 0, 0, 0, null);
        }

        /**
         * A refusal. {@code epoch} is the store's own marker of the releases it had seen (for example a
         * counter), handed back to {@link #awaitRelease} so that a release in between is not missed.
         *
         * @param heldByKey the permits the key held
         * @param heldInAll the permits held over all keys
         * @param epoch the store's marker of the releases it had seen
         * @return the acquisition
         */
        public static Acquisition refused(int heldByKey, int heldInAll, long epoch) {
            return new Acquisition(null, heldByKey, heldInAll, epoch, null);
        }

        /**
         * A refusal for a reason other than full caps, which {@code note} says (it ends up in the error).
         *
         * @param heldByKey the permits the key held
         * @param heldInAll the permits held over all keys
         * @param epoch the store's marker of the releases it had seen
         * @param note why it was refused; not null
         * @return the acquisition
         */
        public static Acquisition refused(int heldByKey, int heldInAll, long epoch, String note) {
            return new Acquisition(null, heldByKey, heldInAll, epoch, java.util.Objects.requireNonNull(note, "note"));
        }

        /** {@return why a refusal was not (only) full caps; null when it was, and for a grant} */
        public String note() {
            return note;
        }

        /** {@return true when the permits were taken ({@link #lease()} holds them)} */
        public boolean isGranted() {
            return lease != null;
        }

        /** {@return the lease; null when refused} */
        public Lease lease() {
            return lease;
        }

        /** {@return when refused, the permits the key held; 0 for a grant} */
        public int heldByKey() {
            return heldByKey;
        }

        /** {@return when refused, the permits held over all keys; 0 for a grant} */
        public int heldInAll() {
            return heldInAll;
        }

        /**
         * {@return when refused, the store's marker of the releases it had seen, for {@link
         * PermitStore#awaitRelease}; 0 for a grant}
         */
        public long epoch() {
            return epoch;
        }

        @Override
        public String toString() {
            return isGranted() ? "Acquisition[granted]"
                    : "Acquisition[refused, byKey=" + heldByKey + ", inAll=" + heldInAll + "]";
        }
    }
}
