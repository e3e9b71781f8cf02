package dev.sandbox4j.redis;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.spi.Attachable;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.spi.ExecOutcome;
import dev.sandbox4j.spi.OutputSink;
import dev.sandbox4j.spi.SandboxDriver;
import dev.sandbox4j.spi.SandboxHandle;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Language;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A provider in memory that counts the sandboxes open on it, per key and in all, and remembers the
 * most that were ever open at once: the counter the caps are checked against, independent of the
 * permit store. The key is the label {@code user} of the spec. No network, no processes.
 */
final class CountingDriver implements SandboxDriver<CountingDriver.Handle> {
    static final String KEY_LABEL = "user";

    record Handle(String id, String key, Map<String, String> labels) implements SandboxHandle {
    }

    private final Map<String, Handle> live = new ConcurrentHashMap<>();

    private final AtomicInteger ids = new AtomicInteger();
    private final AtomicInteger creates = new AtomicInteger();
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicInteger maxOpen = new AtomicInteger();
    private final Map<String, AtomicInteger> openByKey = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> maxByKey = new ConcurrentHashMap<>();

    @Override
    public String provider() {
        return "counting";
    }

    @Override
    public Capabilities capabilities() {
        return Capabilities.builder("counting")
                .egress(Capabilities.Egress.values())
                .limits(Capabilities.Limit.values())
                .features(Capabilities.Feature.values())
                .languages(Language.values())
                .build();
    }

    @Override
    public Handle create(CreateRequest request) {
        creates.incrementAndGet();
        String key = request.spec().labels().getOrDefault(KEY_LABEL, "-");
        maxOpen.accumulateAndGet(open.incrementAndGet(), Math::max);
        int mine = openByKey.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
        maxByKey.computeIfAbsent(key, k -> new AtomicInteger()).accumulateAndGet(mine, Math::max);
        Handle h = new Handle("c-" + ids.incrementAndGet(), key, Map.copyOf(request.labels()));
        live.put(h.id(), h);
        return h;
    }

    /** Finds a sandbox still open here, for an attach from any replica sharing this provider. */
    @Override
    public Attachable<Handle> attach(String sandboxId, dev.sandbox4j.api.SandboxSpec expected) {
        Handle h = live.get(sandboxId);
        if (h == null) {
            throw new SandboxNotFoundException(SandboxException.builder("no sandbox " + sandboxId).provider("counting"));
        }
        return Attachable.builder(h).labels(h.labels()).state("running", true).build();
    }

    @Override
    public ExecOutcome exec(Handle sandbox, Execution execution, OutputSink sink) {
        sink.stdout(execution.code());
        return ExecOutcome.exited(0);
    }

    @Override
    public boolean destroy(Handle sandbox) {
        live.remove(sandbox.id());
        openByKey.get(sandbox.key()).decrementAndGet();
        open.decrementAndGet();
        return true;
    }

    int creates() {
        return creates.get();
    }

    int open() {
        return open.get();
    }

    int maxOpen() {
        return maxOpen.get();
    }

    int open(String key) {
        AtomicInteger m = openByKey.get(key);
        return m == null ? 0 : m.get();
    }

    int maxOpen(String key) {
        AtomicInteger m = maxByKey.get(key);
        return m == null ? 0 : m.get();
    }

    Map<String, AtomicInteger> maxByKey() {
        return maxByKey;
    }
}
