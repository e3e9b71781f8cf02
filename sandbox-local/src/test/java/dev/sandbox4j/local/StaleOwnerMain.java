package dev.sandbox4j.local;

import dev.sandbox4j.api.SandboxSpec;
import java.nio.file.Path;

/** A JVM that opens a sandbox and waits to be killed (for {@link StaleSweepTest}). */
public final class StaleOwnerMain {
    private StaleOwnerMain() {
    }

    public static void main(String[] args) throws Exception {
        LocalSandboxRunner runner = LocalSandboxRunner.builder().workRoot(Path.of(args[0])).build();
        LocalSandbox s = runner.openLocal(SandboxSpec.defaults());
        s.writeFile("kept.txt", new byte[] {1});
        System.out.println(s.workDirectory());
        System.out.flush();
        System.in.read();
    }
}
