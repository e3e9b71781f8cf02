package dev.sandbox4j.mcp.internal;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code tools/call} requests being handled, by request id, so that {@code notifications/cancelled}
 * (or the end of the client's stream) can interrupt the handling thread: the tool then stops the run
 * and tears the sandbox down at once. A cancellation that arrives before its call started is kept (a
 * bounded number of them), so the call does not start.
 */
public final class Calls {
    private static final int EARLY_CANCELS = 1024;

    private final Map<String, Thread> running = new HashMap<>();
    private final Map<String, Boolean> cancelledEarly = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > EARLY_CANCELS;
        }
    };
    private final Map<Thread, Boolean> interrupted = new HashMap<>();
    private boolean closed;

    /** Registers the current thread as handling {@code id}; false when the call is already cancelled. */
    public synchronized boolean start(String id) {
        if (closed) {
            return false;
        }
        if (id == null) {
            return true;
        }
        if (cancelledEarly.remove(id) != null) {
            return false;
        }
        running.put(id, Thread.currentThread());
        return true;
    }

    /**
     * Ends the handling of {@code id} on this thread; clears an interrupt this registry sent.
     *
     * @return whether the call was cancelled
     */
    public synchronized boolean finish(String id) {
        if (id != null) {
            running.remove(id, Thread.currentThread());
        }
        boolean cancelled = interrupted.remove(Thread.currentThread()) != null;
        if (cancelled) {
            Thread.interrupted(); // our interrupt, not the SDK's: its worker thread goes on serving
        }
        return cancelled;
    }

    /** Cancels the call {@code id} (its JSON text): interrupts its thread, or stops it from starting. */
    public synchronized void cancel(String id) {
        Thread t = running.remove(id);
        if (t != null) {
            interrupted.put(t, Boolean.TRUE);
            t.interrupt();
        } else {
            cancelledEarly.put(id, Boolean.TRUE);
        }
    }

    /** Cancels every running call and refuses new ones: the client is gone. */
    public synchronized void cancelAll() {
        closed = true;
        for (Thread t : running.values()) {
            interrupted.put(t, Boolean.TRUE);
            t.interrupt();
        }
        running.clear();
    }

    /** Whether the client's stream has ended. */
    public synchronized boolean closed() {
        return closed;
    }
}
