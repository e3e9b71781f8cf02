package dev.sandbox4j.emulators;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts sandboxes created and torn down by an emulator, so tests can assert that nothing leaked; and,
 * per sandbox, what a fault campaign checks: its labels, whether the client tore it down (as opposed to
 * an expiry or the emulator's close), the code it received for execution and the network it was given.
 *
 * @since 0.1.0
 */
public final class Ledger {
    /** Code bodies are kept up to this many characters: enough for a nonce, bounded for long runs. */
    static final int CODE_CHARS = 4096;

    private final AtomicInteger created = new AtomicInteger();
    private final AtomicInteger destroyed = new AtomicInteger();
    private final Set<String> live = ConcurrentHashMap.newKeySet();
    private final Map<String, Entry> entries = new ConcurrentHashMap<>();

    /**
     * Records a sandbox the emulator created, with no labels. Public so emulators in sub-packages can record.
     *
     * @param id the sandbox's id, as the emulator hands it out
     */
    public void created(String id) {
        created(id, Map.of());
    }

    /**
     * Records a sandbox the emulator created, with the labels (metadata, tags) it was created with.
     *
     * @param id the sandbox's id, as the emulator hands it out
     * @param labels its labels; copied
     */
    public void created(String id, Map<String, String> labels) {
        entries.put(id, new Entry(id, labels));
        created.incrementAndGet();
        live.add(id);
    }

    /**
     * Records a teardown (an explicit kill, an expiry, or the emulator's close). Counted once per id.
     *
     * @param id the sandbox's id; an id not live (never created, or already torn down) is ignored
     */
    public void destroyed(String id) {
        if (live.remove(id)) {
            destroyed.incrementAndGet();
        }
    }

    /**
     * Records that the client asked for this sandbox's teardown (its kill, stop or delete call took effect).
     *
     * @param id the sandbox's id; an id never created is ignored
     */
    public void killedByClient(String id) {
        Entry e = entries.get(id);
        if (e != null) {
            e.killedByClient = true;
        }
    }

    /**
     * Records code received for execution in a sandbox, with the network the emulator gives it.
     *
     * @param id the sandbox's id; an id never created is ignored
     * @param code the code or command line received; only its first 4096 characters are kept
     * @param hostNetwork whether the command reaches the host's network (the only egress an emulator
     *                    applies: it grants it when the policy it received lets loopback through)
     */
    public void executed(String id, String code, boolean hostNetwork) {
        Entry e = entries.get(id);
        if (e != null) {
            String kept = code.length() <= CODE_CHARS ? code : code.substring(0, CODE_CHARS);
            synchronized (e) {
                e.execs.add(new Exec(kept, hostNetwork));
            }
        }
    }

    /** {@return how many sandboxes were created since the emulator started} */
    public int created() {
        return created.get();
    }

    /** {@return how many of them were torn down, each counted once} */
    public int destroyed() {
        return destroyed.get();
    }

    /** {@return how many sandboxes are created and not yet torn down} */
    public int live() {
        return live.size();
    }

    /** {@return the ids of the sandboxes created and not yet torn down, as a copy} */
    public Set<String> liveIds() {
        return Set.copyOf(live);
    }

    /** {@return every sandbox created so far, as it stands now, in no particular order (a snapshot)} */
    public List<SandboxRecord> sandboxes() {
        Collection<Entry> all = entries.values();
        List<SandboxRecord> out = new ArrayList<>(all.size());
        for (Entry e : all) {
            List<Exec> execs;
            synchronized (e) {
                execs = List.copyOf(e.execs);
            }
            out.add(new SandboxRecord(e.id, e.labels, live.contains(e.id), e.killedByClient, execs));
        }
        return out;
    }

    @Override
    public String toString() {
        return "Ledger[created=" + created + ", destroyed=" + destroyed + ", live=" + live.size() + "]";
    }

    /**
     * One piece of code received for execution, and whether it ran with the host's network.
     *
     * @since 0.1.0
     */
    public record Exec(String code, boolean hostNetwork) {
    }

    /**
     * What the ledger knows of one sandbox.
     *
     * @since 0.1.0
     */
    public static final class SandboxRecord {
        private final String id;
        private final Map<String, String> labels;
        private final boolean live;
        private final boolean killedByClient;
        private final List<Exec> execs;

        SandboxRecord(String id, Map<String, String> labels, boolean live, boolean killedByClient, List<Exec> execs) {
            this.id = id;
            this.labels = labels;
            this.live = live;
            this.killedByClient = killedByClient;
            this.execs = execs;
        }

        /** {@return the sandbox's id} */
        public String id() {
            return id;
        }

        /** {@return the labels (E2B metadata, Vercel tags, Daytona labels) it was created with} */
        public Map<String, String> labels() {
            return labels;
        }

        /** {@return whether it was not yet torn down by anyone when this record was taken} */
        public boolean live() {
            return live;
        }

        /**
         * {@return whether the client's own teardown call reached it (an expiry or the emulator's close does
         * not count)}
         */
        public boolean killedByClient() {
            return killedByClient;
        }

        /** {@return the code it received for execution, oldest first} */
        public List<Exec> execs() {
            return execs;
        }

        @Override
        public String toString() {
            return "SandboxRecord[" + id + " " + labels + (live ? ", live" : "")
                    + (killedByClient ? ", killed by client" : "") + ", " + execs.size() + " execs]";
        }
    }

    private static final class Entry {
        final String id;
        final Map<String, String> labels;
        volatile boolean killedByClient;
        final List<Exec> execs = new ArrayList<>();

        Entry(String id, Map<String, String> labels) {
            this.id = id;
            this.labels = Map.copyOf(labels);
        }
    }
}
