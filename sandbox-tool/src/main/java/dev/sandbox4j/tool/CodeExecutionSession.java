package dev.sandbox4j.tool;

import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link CodeExecutionTool} bound to one sandbox for one agent task: files written by one call are
 * there for the next. Get one from {@link CodeExecutionTool#session()} and close it when the task ends.
 *
 * <pre>{@code
 * try (CodeExecutionSession session = tool.session()) {
 *     session.execute("open('data.txt', 'w').write('42')", "python", null);
 *     session.execute("print(open('data.txt').read())", "python", null);   // 42
 * }
 * }</pre>
 *
 * <p>The sandbox is opened at the first call, with the tool's fixed spec. Calls run one at a time.
 * If a call fails in the infrastructure (or is interrupted), the sandbox is torn down and the next call
 * starts a new one, saying so to the model. {@link #close()} tears the sandbox down, also while a call
 * is running; later calls get an error text. Like the tool, a session never throws into the model loop.
 *
 * @since 0.1.0
 */
public final class CodeExecutionSession implements CodeTool, AutoCloseable {
    private final CodeExecutionTool tool;
    private final ReentrantLock calls = new ReentrantLock();
    private final Object state = new Object();
    private Sandbox sandbox;
    private boolean closed;
    private boolean lost;

    CodeExecutionSession(CodeExecutionTool tool) {
        this.tool = tool;
    }

    @Override
    public String execute(String code, String language, Integer timeoutSeconds) {
        ToolCall call = tool.prepare(code, language, timeoutSeconds);
        if (call.error() != null) {
            return call.error();
        }
        try {
            calls.lockInterruptibly();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "error: interrupted while waiting for the previous call to finish. The code did not run.";
        }
        try {
            return executeLocked(call);
        } finally {
            calls.unlock();
        }
    }

    private String executeLocked(ToolCall call) {
        Sandbox current;
        String note = null;
        synchronized (state) {
            if (closed) {
                return ended();
            }
            current = sandbox;
            if (current != null && current.isClosed()) {
                // it tore itself down (its lifetime ran out, say): start over, and say so
                sandbox = null;
                current = null;
                lost = true;
            }
            if (lost) {
                note = "the earlier sandbox of this task was torn down; this call runs in a new one, so files "
                        + "and state from earlier calls are gone";
            }
        }
        if (current == null) {
            try {
                current = tool.runner().open(tool.sessionSpec());
            } catch (RuntimeException e) {
                return ToolErrors.describe(e, false);
            }
            boolean closedMeanwhile;
            synchronized (state) {
                closedMeanwhile = closed;
                if (!closedMeanwhile) {
                    sandbox = current;
                    lost = false;
                }
            }
            if (closedMeanwhile) {
                // torn down outside the monitor: a virtual thread doing I/O in synchronized pins (Java 21)
                CodeExecutionTool.closeQuietly(current);
                return ended();
            }
        }
        RunResult result;
        try {
            result = current.exec(call.execution());
        } catch (RuntimeException e) {
            boolean closedMeanwhile;
            synchronized (state) {
                closedMeanwhile = closed;
                if (sandbox == current) {
                    sandbox = null;
                    lost = true;
                }
            }
            // the sandbox's state is unknown after a failed exec: never reuse it
            CodeExecutionTool.closeQuietly(current);
            if (closedMeanwhile) {
                return "error: the task's session was closed while the code ran; the sandbox is torn down.";
            }
            return ToolErrors.describe(e, true) + " The next call starts in a new sandbox.";
        }
        if (current.isClosed()) {
            synchronized (state) {
                if (sandbox == current) {
                    sandbox = null;
                    lost = true;
                }
            }
        }
        tool.report(result);
        return tool.output().render(call, result, note);
    }

    @Override
    public String description() {
        return tool.description(true);
    }

    /** {@return whether {@link #close()} was called} */
    public boolean isClosed() {
        synchronized (state) {
            return closed;
        }
    }

    /** Tears the task's sandbox down (also while a call runs). Idempotent; never throws. */
    @Override
    public void close() {
        Sandbox current;
        synchronized (state) {
            if (closed) {
                return;
            }
            closed = true;
            current = sandbox;
            sandbox = null;
        }
        if (current != null) {
            CodeExecutionTool.closeQuietly(current);
        }
    }

    @Override
    public String toString() {
        synchronized (state) {
            return "CodeExecutionSession[" + tool.runner().name() + ", "
                    + (closed ? "closed" : sandbox == null ? "no sandbox yet" : "sandbox " + sandbox.id()) + "]";
        }
    }

    private static String ended() {
        return "error: this task's code-execution session has ended. The code did not run.";
    }
}
