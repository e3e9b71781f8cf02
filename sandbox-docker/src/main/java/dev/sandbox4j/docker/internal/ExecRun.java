package dev.sandbox4j.docker.internal;

import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.spi.ExecOutcome;
import dev.sandbox4j.spi.OutputSink;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One command in a container: the exec is created and started attached, its stream is read into the sink
 * on an IO thread, and this thread keeps the budget. What ends the exec's processes, on each path:
 * <ul>
 *   <li>end of stream (the command returned, or the code killed its wrapper: the engine then closes the
 *       stream): the wrapper's own {@code kill -KILL -1} when it still lives, and in every case
 *       {@link DockerDriver#killTree} (the root kill helper, which the code cannot reach) before the exit
 *       code is read;
 *   <li>budget expiry, output cap, a broken stream, an interrupt: {@link DockerDriver#killTree} at once;
 *       if the stream still does not end within the kill grace, the container is killed;
 *   <li>whenever the kill helper cannot show that no process of the code's uid is left (it fails, cannot
 *       start, finds survivors after its rounds): the container is killed and the sandbox is gone.
 * </ul>
 */
final class ExecRun {
    private final DockerDriver driver;
    private final DockerHandle h;
    private final OutputSink sink;

    ExecRun(DockerDriver driver, DockerHandle h, OutputSink sink) {
        this.driver = driver;
        this.h = h;
        this.sink = sink;
    }

    ExecOutcome run(List<String> argv, long budgetLeftNanos) throws InterruptedException {
        DockerApi api = driver.api();
        String execId = api.execCreate(h.containerId(), ContainerSpec.exec(driver.settings(), argv));
        // The budget is kept here, not by the transport: at its end the kill helper ends the stream. The
        // stream's own deadline (budget, kill grace and one control deadline) only bounds a stream that
        // outlives all of that; no read timeout, since code may print nothing for its whole budget.
        Duration streamDeadline = Duration.ofNanos(Math.max(0, budgetLeftNanos)).plus(driver.settings().killGrace())
                .plus(driver.settings().requestTimeout());
        Future<ExecStream.End> reader = DockerDriver.io().submit(() -> api.execStart(execId, streamDeadline,
                in -> ExecStream.pump(in, (s, b, off, len) -> s == 1 ? sink.stdout(b, off, len) : sink.stderr(b, off, len))));
        try {
            ExecStream.End end;
            try {
                end = reader.get(Math.max(0, budgetLeftNanos), TimeUnit.NANOSECONDS);
            } catch (TimeoutException t) {
                driver.killTree(h);
                awaitEnd(reader);
                return ExecOutcome.timedOut();
            } catch (ExecutionException x) {
                Throwable cause = x.getCause();
                if (cause instanceof SandboxException se && se.httpStatus().orElse(500) < 500) {
                    throw se; // the engine refused the start (4xx, already typed): nothing ran
                }
                if (h.state() != DockerHandle.State.OPEN) {
                    return ExecOutcome.killed(null);
                }
                // the start may have reached the engine (a 5xx, a lost answer, a stream cut): code may run
                driver.killTree(h);
                if (cause instanceof SandboxException se) {
                    throw se;
                }
                throw SandboxException.builder("docker sandbox " + h.id() + ": the output stream broke off: " + cause)
                        .provider(DockerApi.PROVIDER).codeMayHaveRun(true).cause(cause).build();
            }
            if (end == ExecStream.End.CAPPED) {
                // the transport cancelled the call as the reader stopped: the rest of a flood is not read
                driver.killTree(h);
                return ExecOutcome.outputLimit();
            }
            // the wrapper's own kill-all is the code's to prevent (it runs as the code's uid): this one is not
            driver.killTree(h);
            Integer exit = driver.exitCode(execId);
            if (h.state() != DockerHandle.State.OPEN || exit == null) {
                return ExecOutcome.killed(exit);
            }
            return ExecOutcome.exited(exit);
        } catch (InterruptedException ie) {
            // the flag is clear here: the stream is cancelled, the kill runs, then the interrupt goes on to the caller
            reader.cancel(true);
            driver.killTree(h);
            throw ie;
        } finally {
            reader.cancel(true);
        }
    }

    /** After a kill the stream ends as the processes die; if it does not, the container goes. */
    private void awaitEnd(Future<ExecStream.End> reader) throws InterruptedException {
        try {
            reader.get(driver.settings().killGrace().toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            // the stream broke while the processes died: nothing more to read
        } catch (TimeoutException e) {
            reader.cancel(true);
            driver.killContainer(h, "the output of a killed exec did not end within " + driver.settings().killGrace());
        }
    }
}
