package dev.sandbox4j.api;

/** The calling thread was interrupted. The sandbox was torn down and the thread's interrupt flag is set again. */
public class SandboxInterruptedException extends SandboxException {
    public SandboxInterruptedException(Builder b) {
        super(b);
    }

    public SandboxInterruptedException(String message) {
        super(builder(message).codeMayHaveRun(true));
    }
}
