package dev.sandbox4j.compose;

import dev.sandbox4j.policy.Capabilities;
import java.util.concurrent.atomic.AtomicInteger;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;

/** A runner whose {@code open} does what the test says: for failures a lifecycle would never produce itself. */
final class ScriptedRunner implements SandboxRunner {
    @FunctionalInterface
    interface Opener {
        Sandbox open(SandboxSpec spec);
    }

    private final String name;
    private final Capabilities capabilities;
    private final Opener opener;
    final AtomicInteger opens = new AtomicInteger();
    volatile boolean closed;

    ScriptedRunner(String name, Opener opener) {
        this.name = name;
        this.capabilities = dev.sandbox4j.spi.lifecycle.ScriptedDriver.everything(name);
        this.opener = opener;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Capabilities capabilities() {
        return capabilities;
    }

    @Override
    public Sandbox open(SandboxSpec spec) {
        opens.incrementAndGet();
        return opener.open(spec);
    }

    @Override
    public void close() {
        closed = true;
    }
}
