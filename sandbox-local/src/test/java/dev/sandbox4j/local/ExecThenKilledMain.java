package dev.sandbox4j.local;

import dev.sandbox4j.api.RunRequest;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A JVM that runs code leaving a session-leader daemon and waits in the exec until it is killed (for
 * {@link JvmKilledDuringExecTest}). Arguments: the work root, kernel limits (true or false), a token the
 * code's command lines carry.
 */
public final class ExecThenKilledMain {
    private ExecThenKilledMain() {
    }

    public static void main(String[] args) {
        try (LocalSandboxRunner runner = LocalSandboxRunner.builder().workRoot(Path.of(args[0]))
                .kernelLimits(Boolean.parseBoolean(args[1])).build()) {
            String code = "import os, time\n"
                    + "if os.fork() == 0:\n"
                    + "    os.setsid()\n"
                    + "    os.execv('/bin/sh', ['/bin/sh', '-c', 'trap \"\" TERM HUP INT; sleep 300 # " + args[2] + "'])\n"
                    + "time.sleep(300) # " + args[2] + "\n";
            runner.run(RunRequest.builder(code).budget(Duration.ofSeconds(600)).build());
        }
    }
}
