package dev.sandbox4j.docker.internal;

import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.docker.DockerSandboxRunner;
import dev.sandbox4j.docker.TestEngine;

/**
 * Run as a child JVM by {@link GoneOwnerSweepTest}: opens two Docker sandboxes, detaches the second, prints
 * both names, then waits to be killed with SIGKILL (no shutdown hook runs).
 */
public final class OrphanMaker {
    private OrphanMaker() {
    }

    public static void main(String[] args) throws Exception {
        DockerSandboxRunner docker = TestEngine.runner(b -> b);
        Sandbox kept = docker.open(SandboxSpec.defaults());
        Sandbox handedOn = docker.open(SandboxSpec.defaults());
        handedOn.detach();
        System.out.println("OPEN " + kept.id() + " " + handedOn.id());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
