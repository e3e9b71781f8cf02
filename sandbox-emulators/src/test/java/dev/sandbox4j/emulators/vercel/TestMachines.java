package dev.sandbox4j.emulators.vercel;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.emulators.vercel.internal.Machine;
import dev.sandbox4j.emulators.vercel.internal.MachineFactory;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Opens machines for the emulator and records the network each command got. */
final class TestMachines implements MachineFactory {
    final List<Recording> opened = new CopyOnWriteArrayList<>();

    @Override
    public Machine open(boolean hostNetwork, java.util.Map<String, String> env, java.time.Duration lifetime)
            throws Exception {
        Recording r = new Recording(new HostMachine());
        opened.add(r);
        return r;
    }

    Recording last() {
        return opened.get(opened.size() - 1);
    }

    /** Delegates, remembering the network setting in force at each command. */
    static final class Recording implements Machine {
        final Machine delegate;
        final List<Boolean> networkAtRun = new CopyOnWriteArrayList<>();
        private volatile boolean network;

        Recording(Machine delegate) {
            this.delegate = delegate;
        }

        @Override
        public String workPath() {
            return delegate.workPath();
        }

        @Override
        public void writeFile(String relativePath, byte[] content, int mode) throws Exception {
            delegate.writeFile(relativePath, content, mode);
        }

        @Override
        public void mkdir(String relativePath) throws Exception {
            delegate.mkdir(relativePath);
        }

        @Override
        public byte[] readFile(String relativePath, long maxBytes) throws Exception {
            return delegate.readFile(relativePath, maxBytes);
        }

        @Override
        public void setNetwork(boolean hostNetwork) {
            network = hostNetwork;
            delegate.setNetwork(hostNetwork);
        }

        @Override
        public Outcome run(Execution execution, Output output) throws InterruptedException {
            networkAtRun.add(network);
            return delegate.run(execution, output);
        }

        @Override
        public void destroy() {
            delegate.destroy();
        }
    }
}
