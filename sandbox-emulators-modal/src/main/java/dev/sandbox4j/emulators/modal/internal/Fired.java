package dev.sandbox4j.emulators.modal.internal;

import java.util.concurrent.atomic.AtomicInteger;

/** How often each fault knob actually fired, so a check can tell a fault that was met from one never hit. */
public final class Fired {
    public final AtomicInteger failedCreates = new AtomicInteger();
    public final AtomicInteger throttledCreates = new AtomicInteger();
    public final AtomicInteger lostCreates = new AtomicInteger();
    public final AtomicInteger droppedStreams = new AtomicInteger();
    public final AtomicInteger failedTerminates = new AtomicInteger();
    public final AtomicInteger hostileStreams = new AtomicInteger();
}
