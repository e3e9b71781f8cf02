package dev.sandbox4j.benchmarks;

import static dev.sandbox4j.benchmarks.Interleaved.check;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.benchmarks.Interleaved.Case;
import dev.sandbox4j.emulators.kubernetes.AgentSandboxEmulator;
import dev.sandbox4j.kubernetes.KubernetesSandboxRunner;
import dev.sandbox4j.local.LocalSandboxRunner;
import io.fabric8.kubernetes.client.Config;
import java.util.List;
import java.util.Locale;

/**
 * The Kubernetes runner against the agent-sandbox emulator (pods as local bubblewrap sandboxes), beside
 * the local runner it runs on, interleaved: what the runner and the emulated API server add (the
 * NetworkPolicy and Sandbox creates, the Ready polls, fabric8's exec, the two deletes). Not a cluster:
 * no scheduling, image pull or CNI, so this is a floor, not a cluster's time to first result. Usage:
 * {@code KubernetesEmulatorLatency [rounds]} (default 20), after a warm-up of 5 rounds.
 */
public final class KubernetesEmulatorLatency {
    private KubernetesEmulatorLatency() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        try (LocalSandboxRunner local = LocalSandboxRunner.create().verify();
             AgentSandboxEmulator emulator = AgentSandboxEmulator.start(local)) {
            Config config = Config.empty();
            config.setNamespace("bench");
            try (KubernetesSandboxRunner k8s = KubernetesSandboxRunner.builder().config(config).masterUrl(emulator.url())
                    .networkPolicyEnforced(true).build();
                 Sandbox k8sSession = k8s.open(SandboxSpec.defaults());
                 Sandbox localSession = local.open(SandboxSpec.defaults())) {
                List<Case> cases = List.of(
                        Interleaved.bare(),
                        new Case("kubernetes run (cold Sandbox)", () -> check(k8s.run(RunRequest.python("print(1)")))),
                        new Case("kubernetes exec (open session)", () -> check(k8sSession.exec(Execution.python("print(1)")))),
                        new Case("local run (open+exec+close)", () -> check(local.run(RunRequest.python("print(1)")))),
                        new Case("local exec (open session)", () -> check(localSession.exec(Execution.python("print(1)")))));
                emulator.clearCalls();
                check(k8s.run(RunRequest.python("print(1)")));
                int calls = emulator.calls().size();
                Interleaved.measure(cases, 5, rounds, "; " + k8s);
                System.out.printf(Locale.ROOT, "kubernetes over local (median): run %+.1f ms, exec %+.1f ms; API calls for one run: %d%n",
                        cases.get(1).median() - cases.get(3).median(), cases.get(2).median() - cases.get(4).median(), calls);
            }
        }
    }
}
