package dev.sandbox4j.local;

import dev.sandbox4j.api.SandboxSpec;
import java.nio.file.Path;

/** A JVM that detaches a sandbox and exits normally (for {@link LocalAttachTest}). */
public final class DetachedAtExitMain {
    private DetachedAtExitMain() {
    }

    public static void main(String[] args) throws Exception {
        LocalSandboxRunner runner = LocalSandboxRunner.builder().workRoot(Path.of(args[0])).build();
        LocalSandbox s = runner.openLocal(SandboxSpec.defaults());
        s.writeFile("kept.txt", new byte[] {1});
        Path work = s.workDirectory();
        s.detach();
        runner.close(); // a detached sandbox is not the runner's to remove
        System.out.println(work);
        System.out.flush();
    }
}
