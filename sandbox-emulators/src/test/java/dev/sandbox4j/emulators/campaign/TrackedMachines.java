package dev.sandbox4j.emulators.campaign;

import dev.sandbox4j.emulators.LocalMachines;
import dev.sandbox4j.emulators.Machine;
import dev.sandbox4j.local.LocalSandboxRunner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * The local machines one emulator opened, each kept with the thread and the call path that opened it,
 * so that a machine left open after the emulator's close is named where it came from (the local
 * runner's own count says only how many). The machines are the factory's own, not wrapped.
 */
final class TrackedMachines implements Machine.Factory {
    private final LocalMachines delegate;
    private final List<Opened> opened = new ArrayList<>();

    private TrackedMachines(LocalSandboxRunner local) {
        this.delegate = LocalMachines.using(local);
    }

    static TrackedMachines on(LocalSandboxRunner local) {
        return new TrackedMachines(local);
    }

    @Override
    public Machine open(boolean hostNetwork, Map<String, String> env, Duration lifetime) {
        Throwable where = new Throwable("opened on " + Thread.currentThread().getName() + " at "
                + System.currentTimeMillis());
        Machine m = delegate.open(hostNetwork, env, lifetime);
        synchronized (opened) {
            opened.add(new Opened(m, where));
        }
        return m;
    }

    int count() {
        synchronized (opened) {
            return opened.size();
        }
    }

    /**
     * The machines still open once {@code bound} has passed (polled: a machine being torn down on
     * another thread gets the time to end), each with the stack that opened it.
     */
    List<String> stillOpen(Duration bound) {
        long deadline = System.nanoTime() + bound.toNanos();
        List<String> open;
        do {
            open = new ArrayList<>();
            synchronized (opened) {
                for (Opened o : opened) {
                    if (!o.machine.isClosed()) {
                        open.add(o.describe());
                    }
                }
            }
            if (open.isEmpty()) {
                break;
            }
            LockSupport.parkNanos(Duration.ofMillis(50).toNanos()); // polling a condition, with a bound
        } while (System.nanoTime() - deadline < 0);
        return open;
    }

    private record Opened(Machine machine, Throwable where) {
        String describe() {
            StringBuilder b = new StringBuilder(machine.toString()).append(' ').append(where.getMessage());
            for (StackTraceElement e : where.getStackTrace()) {
                if (e.getClassName().startsWith("dev.sandbox4j.emulators")) {
                    b.append("\n    at ").append(e);
                }
            }
            return b.toString();
        }
    }
}
