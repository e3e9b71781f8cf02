package dev.sandbox4j.emulators.vercel.internal;

import dev.sandbox4j.api.Execution;
import java.time.Duration;
import java.util.Map;

/** The machines of instant mode: nothing behind them; writes dropped, no file found, no command run. */
public final class InstantMachines implements MachineFactory {
    /** The one factory (it holds nothing). */
    public static final InstantMachines INSTANCE = new InstantMachines();

    private InstantMachines() {
    }

    @Override
    public Machine open(boolean hostNetwork, Map<String, String> env, Duration lifetime) {
        return new Machine() {
            @Override
            public String workPath() {
                return LocalMachines.WORK_PATH;
            }

            @Override
            public void writeFile(String relativePath, byte[] content, int mode) {
                // accepted and dropped
            }

            @Override
            public void mkdir(String relativePath) {
                // accepted and dropped
            }

            @Override
            public byte[] readFile(String relativePath, long maxBytes) {
                return null;
            }

            @Override
            public void setNetwork(boolean hostNetwork) {
                // no network to switch
            }

            @Override
            public Outcome run(Execution execution, Output output) {
                return Outcome.exited(0);
            }

            @Override
            public boolean kill() {
                return false;
            }

            @Override
            public void destroy() {
                // nothing to release
            }
        };
    }
}
