package dev.sandbox4j.spi.lifecycle;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import dev.sandbox4j.api.LeakSuspected;
import dev.sandbox4j.api.LifecycleEvent;
import dev.sandbox4j.api.LifecycleListener;

/** Records what a lifecycle tells it, with the thread each call came on; for tests of the hook. */
public final class RecordingListener implements LifecycleListener {
    /** "start CREATE", "end CREATE success", ... in order. */
    private final List<String> log = new CopyOnWriteArrayList<>();
    private final List<LifecycleEvent> events = new CopyOnWriteArrayList<>();
    private final List<LeakSuspected> leaks = new CopyOnWriteArrayList<>();
    private final List<Boolean> sameThread = new CopyOnWriteArrayList<>();

    @Override
    public Operation started(LifecycleEvent.Phase phase, String provider) {
        Thread t = Thread.currentThread();
        log.add("start " + phase);
        return event -> {
            sameThread.add(Thread.currentThread() == t);
            events.add(event);
            log.add("end " + phase + " " + event.outcome());
        };
    }

    @Override
    public void leakSuspected(LeakSuspected leak) {
        leaks.add(leak);
        log.add("leak " + leak.reason());
    }

    public List<String> log() {
        return List.copyOf(log);
    }

    public List<LifecycleEvent> events() {
        return List.copyOf(events);
    }

    public List<LifecycleEvent> events(LifecycleEvent.Phase phase) {
        List<LifecycleEvent> out = new ArrayList<>();
        for (LifecycleEvent e : events) {
            if (e.phase() == phase) {
                out.add(e);
            }
        }
        return out;
    }

    public List<LeakSuspected> leaks() {
        return List.copyOf(leaks);
    }

    /** Whether every operation ended on the thread it started on. */
    public boolean endedOnStartingThreads() {
        return !sameThread.contains(false);
    }
}
