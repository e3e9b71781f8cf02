package dev.sandbox4j.vercel.internal;

import dev.sandbox4j.spi.SandboxHandle;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One running Vercel sandbox: its durable name ({@code s4j-<runId>}, how a lost create is found again)
 * and the id of its session (the running microVM every runtime call is addressed to).
 */
public final class VercelHandle implements SandboxHandle {
    private final String sessionId;
    private final String name;
    private final String cwd;
    private final String runId;
    private final AtomicInteger codeFiles = new AtomicInteger();
    /** Header-rule secrets resolved for this sandbox; a session found by name has an empty one. */
    private volatile dev.sandbox4j.http.HttpTransport.SecretScope secrets;

    VercelHandle(String sessionId, String name, String cwd, String runId) {
        this.sessionId = sessionId;
        this.name = name;
        this.cwd = cwd;
        this.runId = runId;
    }

    /** The session id: what runtime calls (commands, files, policy, stop) address. */
    @Override
    public String id() {
        return sessionId;
    }

    /** The sandbox's name, unique in the project. */
    public String name() {
        return name;
    }

    /** The session's working directory, where input files go. */
    public String cwd() {
        return cwd;
    }

    public String runId() {
        return runId;
    }

    void secrets(dev.sandbox4j.http.HttpTransport.SecretScope scope) {
        this.secrets = scope;
    }

    /** Never null: a found session gets an empty scope of its own lazily. */
    synchronized dev.sandbox4j.http.HttpTransport.SecretScope secretsOr(dev.sandbox4j.http.HttpTransport http) {
        if (secrets == null) {
            secrets = http.secretScope();
        }
        return secrets;
    }

    dev.sandbox4j.http.HttpTransport.SecretScope secrets() {
        return secrets;
    }

    int nextCodeFile() {
        return codeFiles.incrementAndGet();
    }

    @Override
    public String toString() {
        return "VercelHandle[" + name + ", session " + sessionId + "]";
    }
}
