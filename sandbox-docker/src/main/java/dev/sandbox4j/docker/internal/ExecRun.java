package dev.sandbox4j.docker.internal;

import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.spi.ExecOutcome;
import dev.sandbox4j.spi.OutputSink;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import okhttp3.Response;

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
        Response response = api.execStart(execId);
        Future<ExecStream.End> reader = DockerDriver.io().submit(() -> ExecStream.pump(response.body().byteStream(),
                (s, b, off, len) -> s == 1 ? sink.stdout(b, off, len) : sink.stderr(b, off, len)));
        try {
            ExecStream.End end;
            try {
                end = reader.get(Math.max(0, budgetLeftNanos), TimeUnit.NANOSECONDS);
            } catch (TimeoutException t) {
                driver.killTree(h);
                awaitEnd(reader, response);
                return ExecOutcome.timedOut();
            } catch (ExecutionException x) {
                if (h.state() != DockerHandle.State.OPEN) {
                    return ExecOutcome.killed(null);
                }
                driver.killTree(h);
                throw SandboxException.builder("docker sandbox " + h.id() + ": the output stream broke off: " + x.getCause())
                        .provider(DockerApi.PROVIDER).codeMayHaveRun(true).cause(x.getCause()).build();
            }
            if (end == ExecStream.End.CAPPED) {
                response.close();
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
            // the flag is clear here: the kill runs, then the interrupt goes on to the caller
            response.close();
            driver.killTree(h);
            throw ie;
        } finally {
            response.close();
            reader.cancel(true);
        }
    }

    /** After a kill the stream ends as the processes die; if it does not, the container goes. */
    private void awaitEnd(Future<ExecStream.End> reader, Response response) throws InterruptedException {
        try {
            reader.get(driver.settings().killGrace().toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            // the stream broke while the processes died: nothing more to read
        } catch (TimeoutException e) {
            response.close();
            driver.killContainer(h, "the output of a killed exec did not end within " + driver.settings().killGrace());
        }
    }
}
