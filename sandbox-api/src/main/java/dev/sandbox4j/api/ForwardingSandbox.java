package dev.sandbox4j.api;

import java.util.List;
import java.util.Objects;

/**
 * A {@link Sandbox} that forwards every call to another one; decorators override what they change.
 *
 * @since 0.1.0
 */
public abstract class ForwardingSandbox implements Sandbox {
    private final Sandbox delegate;

    /**
     * Wraps {@code delegate}.
     *
     * @param delegate the sandbox every call is forwarded to; not null
     */
    protected ForwardingSandbox(Sandbox delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** {@return the sandbox calls are forwarded to} */
    protected final Sandbox delegate() {
        return delegate;
    }

    @Override
    public String id() {
        return delegate.id();
    }

    @Override
    public String provider() {
        return delegate.provider();
    }

    @Override
    public String runId() {
        return delegate.runId();
    }

    @Override
    public List<Attempt> attempts() {
        return delegate.attempts();
    }

    @Override
    public RunResult exec(Execution execution) {
        return delegate.exec(execution);
    }

    @Override
    public SandboxFile readFile(String path, long maxBytes) {
        return delegate.readFile(path, maxBytes);
    }

    @Override
    public List<FileEntry> listFiles(String directory) {
        return delegate.listFiles(directory);
    }

    @Override
    public boolean isClosed() {
        return delegate.isClosed();
    }

    @Override
    public Teardown teardown() {
        return delegate.teardown();
    }

    @Override
    public void detach() {
        delegate.detach();
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public String toString() {
        return delegate.toString();
    }
}
