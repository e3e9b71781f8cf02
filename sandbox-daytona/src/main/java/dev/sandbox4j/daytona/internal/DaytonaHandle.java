package dev.sandbox4j.daytona.internal;

import dev.sandbox4j.spi.SandboxHandle;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.HttpUrl;

/** One Daytona sandbox: its id, run id and toolbox base URL ({@code toolboxProxyUrl/<id>}). Holds no secrets. */
public final class DaytonaHandle implements SandboxHandle {
    private final String id;
    private final String runId;
    private final HttpUrl toolbox;
    private final AtomicInteger uploads = new AtomicInteger();

    DaytonaHandle(String id, String runId, HttpUrl toolbox) {
        this.id = Objects.requireNonNull(id, "id");
        this.runId = runId;
        this.toolbox = toolbox;
    }

    @Override
    public String id() {
        return id;
    }

    /** The run id this sandbox was labelled with; null when only the id is known. */
    public String runId() {
        return runId;
    }

    /** {@code toolboxProxyUrl + "/" + id}; null for a sandbox found only to be destroyed. */
    HttpUrl toolbox() {
        return toolbox;
    }

    /** A fresh number for an uploaded program file, so execs in one sandbox never overwrite each other. */
    int nextUpload() {
        return uploads.incrementAndGet();
    }

    @Override
    public String toString() {
        return "DaytonaHandle[" + id + (runId == null ? "" : ", run id " + runId) + "]";
    }
}
