package dev.sandbox4j.docker.internal;

import dev.sandbox4j.spi.SandboxHandle;
import dev.sandbox4j.policy.EgressPolicy;

/**
 * One Docker sandbox: a container named {@code sandbox4j-<run id>}, alive between the execs of a session
 * (its first process sleeps for the lifetime), with its work directory on a sized tmpfs volume.
 */
public final class DockerHandle implements SandboxHandle {
    enum State { OPEN, GONE }

    private final String name;
    private final String runId;
    private final String containerId;

    // guarded by this
    private EgressPolicy egress;
    private State state = State.OPEN;
    private String goneReason;
    private DockerEgress egressChannel;
    // a one-shot's container: created with the code as its first process, started by its one exec
    private dev.sandbox4j.api.Execution firstProcess;
    private boolean started;

    DockerHandle(String name, String runId, String containerId, EgressPolicy egress) {
        this.name = name;
        this.runId = runId;
        this.containerId = containerId;
        this.egress = egress;
    }

    /** The container's name, {@code sandbox4j-<run id>}. */
    @Override
    public String id() {
        return name;
    }

    public String runId() {
        return runId;
    }

    /** The engine's id of the container (its name works in every call too). */
    public String containerId() {
        return containerId;
    }

    /** The egress in force: the one the container was created with, the code's after a lock-down. */
    public synchronized EgressPolicy egress() {
        return egress;
    }

    synchronized void egress(EgressPolicy e) {
        this.egress = e;
    }

    synchronized State state() {
        return state;
    }

    synchronized String goneReason() {
        return goneReason;
    }

    /** Marks the sandbox gone (removed, or killed because an exec's processes could not be shown dead). */
    synchronized void gone(String reason) {
        if (state == State.OPEN) {
            state = State.GONE;
            goneReason = reason;
        }
    }

    /** The host proxy of a container whose egress is a list, or null. */
    synchronized void egressChannel(DockerEgress c) {
        this.egressChannel = c;
    }

    /** The host proxy, left in place, or null. */
    synchronized DockerEgress egressChannel() {
        return egressChannel;
    }

    /** Takes the host proxy away (for the caller to close), or null. */
    synchronized DockerEgress takeEgressChannel() {
        DockerEgress c = egressChannel;
        egressChannel = null;
        return c;
    }

    /** Marks the container as a one-shot's, created (not started) with {@code e} as its first process. */
    synchronized void firstProcess(dev.sandbox4j.api.Execution e) {
        this.firstProcess = e;
    }

    /** The execution the container runs as its first process, or null for a session's container. */
    synchronized dev.sandbox4j.api.Execution firstProcess() {
        return firstProcess;
    }

    /** Whether this is a one-shot's container (its code is its first process; no exec ever runs in it). */
    synchronized boolean oneShot() {
        return firstProcess != null;
    }

    /** Claims the one start of a one-shot's container: true once, false ever after (the start is never resent). */
    synchronized boolean claimStart() {
        if (started) {
            return false;
        }
        started = true;
        return true;
    }

    @Override
    public String toString() {
        return "DockerHandle[" + name + "]";
    }
}
