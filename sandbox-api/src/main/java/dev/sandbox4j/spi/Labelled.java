package dev.sandbox4j.spi;

import java.util.Map;
import java.util.Objects;

/**
 * A sandbox found by {@link SandboxDriver#listLabelled}, with the labels the provider reported for it.
 *
 * @since 0.1.0
 */
public final class Labelled<H extends SandboxHandle> {
    private final H handle;
    private final Map<String, String> labels;

    /**
     * A sandbox found with its labels.
     *
     * @param handle the sandbox; not null
     * @param labels the labels as the provider reported them; copied
     */
    public Labelled(H handle, Map<String, String> labels) {
        this.handle = Objects.requireNonNull(handle, "handle");
        this.labels = Map.copyOf(labels);
    }

    /** {@return the sandbox found} */
    public H handle() {
        return handle;
    }

    /**
     * {@return the labels as the provider reported them (run id, owner, expiry among them); unmodifiable}
     */
    public Map<String, String> labels() {
        return labels;
    }

    @Override
    public String toString() {
        return "Labelled[" + handle.id() + " " + labels + "]";
    }
}
