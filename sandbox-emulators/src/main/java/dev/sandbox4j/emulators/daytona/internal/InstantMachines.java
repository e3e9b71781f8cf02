package dev.sandbox4j.emulators.daytona.internal;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxFile;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
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
            public void writeFile(String relativePath, byte[] content) {
                // accepted and dropped
            }

            @Override
            public SandboxFile readFile(String relativePath, long maxBytes) throws IOException {
                throw new NoSuchFileException(relativePath);
            }

            @Override
            public RunResult exec(Execution execution) {
                throw new IllegalStateException("instant mode answers execs without running them");
            }

            @Override
            public void close() {
                // nothing to release
            }
        };
    }
}
