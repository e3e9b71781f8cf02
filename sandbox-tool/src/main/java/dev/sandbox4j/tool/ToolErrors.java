package dev.sandbox4j.tool;

import dev.sandbox4j.api.exception.SandboxAuthenticationException;
import dev.sandbox4j.api.exception.SandboxCapacityException;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.api.exception.SandboxRateLimitException;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns an infrastructure failure into a short text for the model. The text is built from the
 * exception's type and flags only, never from its message: the model learns what happened and
 * whether to try again, and nothing an adapter or an HTTP client wrote can reach it.
 */
final class ToolErrors {
    private static final Logger log = LoggerFactory.getLogger(CodeExecutionTool.class);

    private ToolErrors() {
    }

    /**
     * @param execStarted the failure came from {@code exec}, so the code may have started
     */
    static String describe(RuntimeException e, boolean execStarted) {
        log(e);
        if (e instanceof SandboxInterruptedException) {
            // the application asked this thread to stop: keep the request visible to it
            Thread.currentThread().interrupt();
            return "error: interrupted; the run was stopped and the sandbox torn down." + ran(e, execStarted);
        }
        StringBuilder sb = new StringBuilder("error: ").append(what(e)).append('.').append(ran(e, execStarted));
        if (e instanceof SandboxException se) {
            if (se.isRetriable()) {
                sb.append(" Trying again may work");
                se.retryAfter().ifPresent(d -> sb.append(" after ").append(ToolOutput.seconds(d)).append(" s"));
                sb.append('.');
            } else {
                sb.append(" Trying again will not help.");
            }
        } else {
            sb.append(" Trying again will not help.");
        }
        return sb.toString();
    }

    private static String what(RuntimeException e) {
        if (e instanceof SandboxAuthenticationException) {
            return "the sandbox provider rejected the application's credentials";
        }
        if (e instanceof SandboxRateLimitException) {
            return "the sandbox provider is rate limiting requests";
        }
        if (e instanceof SandboxCapacityException) {
            return "no sandbox capacity is free right now";
        }
        if (e instanceof SandboxConfigurationException) {
            return "the code-execution tool is not configured correctly";
        }
        if (e instanceof SandboxNotFoundException) {
            return "the sandbox no longer exists (it expired or was deleted)";
        }
        if (e instanceof SandboxException se) {
            return "the sandbox infrastructure failed"
                    + (se.httpStatus().isPresent() ? " (HTTP " + se.httpStatus().getAsInt() + ")" : "");
        }
        if (e instanceof UnsupportedPolicyException) {
            return "the sandbox provider cannot enforce the configured network or resource policy";
        }
        return "the code-execution tool failed unexpectedly (" + e.getClass().getSimpleName() + ")";
    }

    private static String ran(RuntimeException e, boolean execStarted) {
        boolean mayHaveRun = execStarted && (!(e instanceof SandboxException se) || se.codeMayHaveRun());
        return mayHaveRun ? " The code may have run in part; its output is lost." : " The code did not run.";
    }

    private static void log(RuntimeException e) {
        boolean ours = e instanceof SandboxException || e instanceof UnsupportedPolicyException;
        if (ours) {
            // sandbox4j's own messages hold no secrets by contract
            log.warn("code execution failed: {}: {}", e.getClass().getSimpleName(), e.getMessage());
        } else {
            // another library's message may echo a URL or a header: its type only, details at debug
            log.warn("code execution failed: {}", e.getClass().getName());
        }
        if (log.isDebugEnabled()) {
            // types and places only: a cause's message, ours included, may echo a URL or a header
            log.debug("code execution failure: {}", where(e));
        }
    }

    /** The exception's type and the frame it was thrown from, then each cause's: no messages. */
    static String where(Throwable e) {
        StringBuilder out = new StringBuilder();
        int depth = 0;
        for (Throwable t = e; t != null && depth < 8; t = t.getCause(), depth++) {
            if (depth > 0) {
                out.append(" <- caused by ");
            }
            out.append(t.getClass().getName());
            StackTraceElement[] frames = t.getStackTrace();
            if (frames.length > 0) {
                out.append(" at ").append(frames[0]);
            }
        }
        return out.toString();
    }
}
