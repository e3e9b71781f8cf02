package dev.sandbox4j.emulators.e2b;

import dev.sandbox4j.emulators.Machine;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One running command of an emulated sandbox, on a worker thread: killing it interrupts that thread,
 * and {@link #awaitEnd} waits until the workspace call has really returned (a cancelled future
 * reports done at once, while the local sandbox may still be tearing the process down).
 */
final class Command {
    private static final int NEW = 0;
    private static final int RUNNING = 1;
    private static final int ENDED = 2;
    final int pid;
    private final AtomicInteger state = new AtomicInteger(NEW);
    private final CountDownLatch ended = new CountDownLatch(1);
    private final FutureTask<RunResult> task;
    private final List<Runnable> endActions = new ArrayList<>();

    Command(int pid, Machine workspace, Execution execution, Runnable onEnd) {
        this.pid = pid;
        this.task = new FutureTask<>(() -> {
            if (!state.compareAndSet(NEW, RUNNING)) {
                return null; // killed before it started
            }
            try {
                return workspace.exec(execution);
            } finally {
                state.set(ENDED);
                onEnd.run();
                end();
            }
        }) {
            @Override
            protected void done() {
                if (state.compareAndSet(NEW, ENDED)) {
                    onEnd.run();
                    end();
                }
            }
        };
    }

    void start(Executor executor) {
        executor.execute(task);
    }

    /** The result; throws CancellationException when killed, ExecutionException when the workspace failed. */
    RunResult get(Duration wait) throws InterruptedException, ExecutionException, TimeoutException {
        return task.get(wait.toMillis(), TimeUnit.MILLISECONDS);
    }

    void kill() {
        task.cancel(true);
    }

    /** Runs {@code action} once the workspace call has returned (at once if it has). */
    void whenEnded(Runnable action) {
        synchronized (endActions) {
            if (ended.getCount() > 0) {
                endActions.add(action);
                return;
            }
        }
        action.run();
    }

    private void end() {
        List<Runnable> actions;
        synchronized (endActions) {
            ended.countDown();
            actions = List.copyOf(endActions);
            endActions.clear();
        }
        actions.forEach(Runnable::run);
    }

    boolean awaitEnd(Duration wait) throws InterruptedException {
        return ended.await(wait.toMillis(), TimeUnit.MILLISECONDS);
    }
}
