package dev.sandbox4j.docker.internal;

import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.spi.ExecOutcome;
import dev.sandbox4j.spi.OutputSink;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A one-shot's code as its container's own first process ({@link DockerDriver#runsAsFirstProcess}), the
 * way {@code docker run} runs it: the container was created (not started) with the code as its command;
 * here its stdout and stderr are attached (the engine's answer shows the attach is in place, so no output
 * is lost), the container is started (once: from then on the code may have run, and a start whose answer
 * is lost is never sent again), its multiplexed stream is read into the sink on an IO thread while this
 * thread keeps the budget, and the exit code is the container's ({@code wait}). What ends the code's
 * processes: the container's process ending (Docker's init is its PID 1, so every process of the
 * container dies with it); on budget expiry, output cap, a broken stream or an interrupt, a kill of the
 * whole container. No exec runs in a one-shot's container, so it has no kill helper.
 */
final class OneShotRun {
    private static final Logger log = LoggerFactory.getLogger(OneShotRun.class);
    /** Tries of the wait for the exit code (it starts nothing, so it may be asked again). */
    static final int WAIT_TRIES = 3;

    private final DockerDriver driver;
    private final DockerHandle h;
    private final OutputSink sink;

    OneShotRun(DockerDriver driver, DockerHandle h, OutputSink sink) {
        this.driver = driver;
        this.h = h;
        this.sink = sink;
    }

    ExecOutcome run(long budgetNanos, long startNanos) throws InterruptedException {
        if (!h.claimStart()) {
            throw new IllegalStateException("docker sandbox " + h.id() + ": a one-shot's container runs its code once");
        }
        DockerApi api = driver.api();
        DockerSettings s = driver.settings();
        long deadline = startNanos + budgetNanos;
        // bounds a stream that outlives the budget, the kill and the control calls around them
        Duration streamDeadline = Duration.ofNanos(Math.max(0, budgetNanos)).plus(s.killGrace())
                .plus(s.requestTimeout().multipliedBy(2));
        CountDownLatch attached = new CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean answered = new java.util.concurrent.atomic.AtomicBoolean();
        Future<ExecStream.End> reader = DockerDriver.io().submit(() -> {
            try {
                return api.attach(h.containerId(), streamDeadline, () -> {
                    answered.set(true);
                    attached.countDown();
                },
                        in -> ExecStream.pump(in, (st, b, off, len) -> st == 1 ? sink.stdout(b, off, len) : sink.stderr(b, off, len)));
            } finally {
                attached.countDown(); // a failed attach wakes the caller at once
            }
        });
        try {
            awaitAttached(reader, attached, answered);
            try {
                api.start(h.containerId());
            } catch (SandboxException e) {
                int status = e.httpStatus().orElse(0);
                if (status >= 400 && status < 500) {
                    throw e; // the engine refused the start: nothing ran
                }
                // a 5xx, a lost or garbled answer, a timeout: the engine may have started the code
                kill("its start failed with an unknown outcome");
                throw e.toBuilder().codeMayHaveRun(true).retriable(false).build();
            }
            ExecStream.End end;
            try {
                end = reader.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException t) {
                kill("its budget ended");
                awaitEnd(reader);
                return ExecOutcome.timedOut();
            } catch (ExecutionException x) {
                kill("its output stream broke off");
                Throwable cause = x.getCause();
                if (cause instanceof SandboxException se) {
                    throw se.toBuilder().codeMayHaveRun(true).build();
                }
                throw SandboxException.builder("docker sandbox " + h.id() + ": the output stream broke off: " + cause)
                        .provider(DockerApi.PROVIDER).codeMayHaveRun(true).cause(cause).build();
            }
            if (end == ExecStream.End.CAPPED) {
                kill("its output reached the cap");
                return ExecOutcome.outputLimit();
            }
            // the streams closed: the process ends with them, or (code that closed its own) within the budget;
            // a wait starts nothing, so a failed one is asked again (as a lookup is retried)
            for (int attempt = 1; ; attempt++) {
                Future<Integer> exit = DockerDriver.io().submit(() -> api.waitExit(h.containerId(),
                        Duration.ofNanos(Math.max(0, deadline - System.nanoTime())).plus(s.requestTimeout())));
                try {
                    // the wait's own deadline (the budget left and a control deadline) ends it first
                    Integer code = exit.get(Math.max(0, deadline - System.nanoTime()) + s.requestTimeout().toNanos()
                            + TimeUnit.SECONDS.toNanos(1), TimeUnit.NANOSECONDS);
                    return code == null ? ExecOutcome.killed(null) : ExecOutcome.exited(code);
                } catch (TimeoutException t) {
                    kill("its budget ended after it closed its output");
                    return ExecOutcome.timedOut();
                } catch (ExecutionException x) {
                    Throwable cause = x.getCause();
                    if (cause instanceof dev.sandbox4j.http.ClientDeadlineException && System.nanoTime() - deadline >= 0) {
                        // it still ran when its budget ended (code that closed its own output): as any budget
                        kill("its budget ended after it closed its output");
                        return ExecOutcome.timedOut();
                    }
                    if (attempt < WAIT_TRIES && !(cause instanceof SandboxException se && se.httpStatus().orElse(500) < 500)) {
                        log.debug("docker sandbox {}: its wait failed ({}), asking again", h.id(), cause.toString());
                        Thread.sleep(50L * attempt);
                        continue;
                    }
                    kill("its exit code could not be read");
                    if (cause instanceof SandboxException se) {
                        throw se.toBuilder().codeMayHaveRun(true).build();
                    }
                    throw SandboxException.builder("docker sandbox " + h.id() + ": its exit code could not be read: " + cause)
                            .provider(DockerApi.PROVIDER).codeMayHaveRun(true).cause(cause).build();
                } finally {
                    exit.cancel(true);
                }
            }
        } catch (InterruptedException ie) {
            // the flag is clear here: the stream is cancelled, the container killed, then the interrupt goes on
            reader.cancel(true);
            kill("the caller was interrupted");
            throw ie;
        } finally {
            reader.cancel(true);
        }
    }

    /**
     * Waits for the engine's answer to the attach (then it relays all output); an attach that failed or did
     * not answer in a control deadline throws, and nothing was started.
     */
    private void awaitAttached(Future<ExecStream.End> reader, CountDownLatch attached, java.util.concurrent.atomic.AtomicBoolean answered)
            throws InterruptedException {
        Duration wait = driver.settings().requestTimeout();
        if (!attached.await(wait.toNanos(), TimeUnit.NANOSECONDS)) {
            reader.cancel(true);
            throw SandboxException.builder("docker sandbox " + h.id() + ": the engine did not answer the attach within "
                    + wait + "; the container was not started").provider(DockerApi.PROVIDER).retriable(true).build();
        }
        if (answered.get()) {
            return; // the engine answered: from now on it relays all the container writes
        }
        Throwable cause;
        try {
            reader.get(wait.toNanos(), TimeUnit.NANOSECONDS); // it is ending: the latch counted down as it failed
            cause = null;
        } catch (ExecutionException x) {
            cause = x.getCause();
        } catch (TimeoutException x) {
            reader.cancel(true);
            cause = x;
        }
        if (cause instanceof SandboxException se) {
            throw se.toBuilder().codeMayHaveRun(false).build();
        }
        throw SandboxException.builder("docker sandbox " + h.id() + ": the attach failed (" + cause + "); the container was"
                + " not started").provider(DockerApi.PROVIDER).retriable(true).cause(cause).build();
    }

    /** After a kill the stream ends as the container stops; if it does not within the kill grace, it is cancelled. */
    private void awaitEnd(Future<ExecStream.End> reader) throws InterruptedException {
        try {
            reader.get(driver.settings().killGrace().toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            // the stream broke while the container stopped: nothing more to read
        } catch (TimeoutException e) {
            reader.cancel(true);
            log.warn("docker sandbox {}: the output of its killed container did not end within {}; teardown removes it",
                    h.id(), driver.settings().killGrace());
        }
    }

    /** Kills the whole container (its init, so every process in it); never throws; the interrupt flag is kept. */
    private void kill(String why) {
        boolean interrupted = Thread.interrupted();
        try {
            log.debug("docker sandbox {}: killing its one-shot container: {}", h.id(), why);
            driver.api().kill(h.containerId());
        } catch (SandboxException | InterruptedException e) {
            interrupted |= e instanceof InterruptedException;
            log.warn("docker sandbox {}: the container could not be killed ({}); teardown removes it with force", h.id(),
                    e.getMessage());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
