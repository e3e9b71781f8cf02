package dev.sandbox4j.spi.lifecycle;

import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
import dev.sandbox4j.api.SweepRequest;
import dev.sandbox4j.api.SweepResult;
import dev.sandbox4j.api.Teardown;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.spi.Labelled;
import dev.sandbox4j.spi.SandboxDriver;
import dev.sandbox4j.spi.SandboxHandle;

/**
 * The orphan sweep of {@link ManagedSandboxRunner#sweep}: lists this library's sandboxes (scoped to
 * the runner's owner), destroys the expired ones or those named by run id. Interrupts are deferred
 * to the end, as in teardown.
 */
final class Sweeper<H extends SandboxHandle> {
    private static final Logger log = LoggerFactory.getLogger(ManagedSandboxRunner.class);

    private final SandboxDriver<H> driver;
    private final String name;
    private final String owner;
    private final Teardowns<H> teardowns;

    Sweeper(SandboxDriver<H> driver, String owner, Teardowns<H> teardowns) {
        this.driver = driver;
        this.name = driver.provider();
        this.owner = owner;
        this.teardowns = teardowns;
    }

    SweepResult sweep(SweepRequest request) {
        Objects.requireNonNull(request, "request");
        if (request.needsOwner() && owner == null) {
            throw new IllegalStateException(name + ": a sweep of expired or all sandboxes needs the runner's owner"
                    + " label (set owner(...) on the runner's builder); without it only run ids can be swept");
        }
        AtomicBoolean interrupted = new AtomicBoolean(Thread.interrupted());
        try {
            Map<String, H> matched = new LinkedHashMap<>();
            int listed = 0;
            if (request.needsOwner()) {
                long now = Instant.now().getEpochSecond();
                List<Labelled<H>> all = deferInterrupts(() -> driver.listLabelled(owner), interrupted);
                for (Labelled<H> l : all) {
                    String runId = l.labels().get(CreateRequest.RUN_ID_LABEL);
                    if (runId == null || !owner.equals(l.labels().get(CreateRequest.OWNER_LABEL))) {
                        continue; // never trust the server's filter: not ours, not this owner's
                    }
                    listed++;
                    if (request.includesAllOfOwner() || request.runIdsToDestroy().contains(runId)
                            || (request.includesExpired() && expired(l.labels(), now))) {
                        matched.putIfAbsent(l.handle().id(), l.handle());
                    }
                }
            }
            for (String runId : request.runIdsToDestroy()) {
                for (H h : deferInterrupts(() -> driver.findByRunId(runId), interrupted)) {
                    listed++;
                    matched.putIfAbsent(h.id(), h);
                }
            }
            List<String> destroyed = new ArrayList<>();
            List<String> gone = new ArrayList<>();
            List<String> failed = new ArrayList<>();
            for (H h : matched.values()) {
                Teardown t = teardowns.teardownAndRelease(h);
                (t == Teardown.DESTROYED ? destroyed : t == Teardown.ALREADY_GONE ? gone : failed).add(h.id());
            }
            SweepResult result = SweepResult.builder().listed(listed).destroyed(destroyed).alreadyGone(gone)
                    .failed(failed).build();
            log.info("{} sweep {}: {}", name, request, result);
            return result;
        } finally {
            if (interrupted.get() || Thread.interrupted()) {
                Thread.currentThread().interrupt();
            }
        }
    }

    static boolean expired(Map<String, String> labels, long nowEpochSeconds) {
        try {
            String v = labels.get(CreateRequest.EXPIRES_LABEL);
            return v != null && Long.parseLong(v) < nowEpochSeconds;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private interface Lookup<T> {
        T get() throws InterruptedException;
    }

    /** Runs a lookup to its end whatever interrupts arrive; {@code seen} records them for the caller to restore. */
    private <T> T deferInterrupts(Lookup<T> lookup, AtomicBoolean seen) {
        for (int i = 0; ; i++) {
            try {
                return lookup.get();
            } catch (InterruptedException e) {
                seen.set(true);
                if (i >= 3) {
                    throw new SandboxInterruptedException(SandboxException.builder("interrupted repeatedly during a sweep")
                            .provider(name).codeMayHaveRun(false));
                }
            }
        }
    }
}
