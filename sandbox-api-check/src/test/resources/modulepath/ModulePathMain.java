import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunnerProvider;
import dev.sandbox4j.api.SandboxRunners;
import dev.sandbox4j.api.SandboxSpec;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeSet;

/**
 * Run by ModulePathTest in a JVM of its own, with sandbox4j's jars on the module path (this file is
 * launched as source, so it is in the unnamed module and sees exported packages only). Arguments:
 * the modules that must be named (not automatic), then "--", then KEY=VALUE pairs for the runners'
 * environments. Prints one line per finding; the test reads them.
 */
public final class ModulePathMain {
    public static void main(String[] args) throws Exception {
        Map<String, String> env = new HashMap<>();
        boolean pairs = false;
        for (String a : args) {
            if (a.equals("--")) {
                pairs = true;
            } else if (pairs) {
                int eq = a.indexOf('=');
                env.put(a.substring(0, eq), a.substring(eq + 1));
            } else {
                Module m = ModuleLayer.boot().findModule(a).orElse(null);
                System.out.println("module " + a + " "
                        + (m == null ? "absent" : m.getDescriptor().isAutomatic() ? "automatic" : "named"));
            }
        }
        TreeSet<String> providers = new TreeSet<>();
        for (SandboxRunnerProvider p : ServiceLoader.load(SandboxRunnerProvider.class)) {
            providers.add(p.name());
        }
        System.out.println("providers " + String.join(",", providers));
        for (String name : new String[] {"local", "e2b", "modal"}) {
            try (SandboxRunner runner = SandboxRunners.byName(name, env)) {
                RunResult r = runner.run(RunRequest.builder("print(6 * 7)").budget(Duration.ofSeconds(30)).build());
                String session;
                try (Sandbox s = runner.open(SandboxSpec.builder().file("in.txt", "file-ok").build())) {
                    session = s.exec(Execution.python("print(open('in.txt').read())")).stdout().trim();
                }
                System.out.println("run " + name + " " + r.status() + " " + r.stdout().trim() + " " + session);
            } catch (Throwable t) {
                System.out.println("run " + name + " failed " + t);
                t.printStackTrace(System.out);
            }
        }
    }
}
