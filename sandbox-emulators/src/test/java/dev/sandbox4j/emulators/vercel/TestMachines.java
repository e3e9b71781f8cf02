package dev.sandbox4j.emulators.vercel;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.emulators.LocalMachines;
import dev.sandbox4j.emulators.Machine;
import dev.sandbox4j.policy.EgressPolicy;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** The emulator's real machines (local sandboxes), recording the egress each command got. */
final class TestMachines implements Machine.Factory {
    final List<Recording> opened = new CopyOnWriteArrayList<>();
    final LocalMachines local = LocalMachines.create();

    @Override
    public Machine open(boolean hostNetwork, java.util.Map<String, String> env, java.time.Duration lifetime)
            throws Exception {
        return open(hostNetwork ? EgressPolicy.allowAll() : EgressPolicy.denyAll(), env, lifetime);
    }

    @Override
    public Machine open(EgressPolicy egress, java.util.Map<String, String> env, java.time.Duration lifetime) {
        Recording r = new Recording(local.open(egress, env, lifetime), egress);
        opened.add(r);
        return r;
    }

    /** Local sandboxes still open: must be zero after every test, like the emulator's ledger. */
    int openLocalSandboxes() {
        return local.openSandboxes();
    }

    /**
     * Local sandboxes still open once every machine the emulator destroyed is closed, waiting at most
     * {@code max}: a session's stop answers (or a command comes back 137) before its machine is torn
     * down, so the count is an end state to wait for, not a value at the moment a reply arrives.
     */
    int openLocalSandboxesSettled(java.time.Duration max) throws InterruptedException {
        long end = System.nanoTime() + max.toNanos();
        synchronized (destroyed) {
            while (local.openSandboxes() > 0) {
                long left = end - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                // woken by each Recording.close(); the timeout only bounds a real leak
                java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(destroyed, left);
            }
        }
        return local.openSandboxes();
    }

    private final Object destroyed = new Object();

    @Override
    public void close() {
        local.close();
    }

    Recording last() {
        return opened.get(opened.size() - 1);
    }

    /**
     * Delegates, remembering the egress the emulator set (at the open, then each switch) and the one in
     * force at each command.
     */
    final class Recording implements Machine {
        final Machine delegate;
        /** Whether each command had the host network. */
        final List<Boolean> networkAtRun = new CopyOnWriteArrayList<>();
        final List<EgressPolicy> egressAtRun = new CopyOnWriteArrayList<>();
        volatile EgressPolicy egress;

        Recording(Machine delegate, EgressPolicy egress) {
            this.delegate = delegate;
            this.egress = egress;
        }

        @Override
        public String workPath() {
            return delegate.workPath();
        }

        @Override
        public java.nio.file.Path workDirectory() {
            return delegate.workDirectory();
        }

        @Override
        public void writeFile(String relativePath, byte[] content) throws java.io.IOException {
            delegate.writeFile(relativePath, content);
        }

        @Override
        public void writeFile(String relativePath, byte[] content, int mode) throws java.io.IOException {
            delegate.writeFile(relativePath, content, mode);
        }

        @Override
        public void mkdir(String relativePath) throws java.io.IOException {
            delegate.mkdir(relativePath);
        }

        @Override
        public dev.sandbox4j.api.SandboxFile readFile(String relativePath, long maxBytes) throws java.io.IOException {
            return delegate.readFile(relativePath, maxBytes);
        }

        @Override
        public void setNetwork(boolean hostNetwork) {
            egress = hostNetwork ? EgressPolicy.allowAll() : EgressPolicy.denyAll();
            delegate.setNetwork(hostNetwork);
        }

        @Override
        public void setEgress(EgressPolicy egress) {
            this.egress = egress;
            delegate.setEgress(egress);
        }

        @Override
        public dev.sandbox4j.api.RunResult exec(Execution execution) {
            EgressPolicy now = egress;
            networkAtRun.add(now.isAllowAll());
            egressAtRun.add(now);
            return delegate.exec(execution);
        }

        @Override
        public boolean killRunning() {
            return delegate.killRunning();
        }

        @Override
        public boolean isClosed() {
            return delegate.isClosed();
        }

        @Override
        public void close() {
            try {
                delegate.close();
            } finally {
                synchronized (destroyed) {
                    destroyed.notifyAll();
                }
            }
        }
    }
}
