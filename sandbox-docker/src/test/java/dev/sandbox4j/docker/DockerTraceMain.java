package dev.sandbox4j.docker;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.HeaderRule;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.SecretRef;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import dev.sandbox4j.testlogging.TraceJvm;
import java.time.Duration;

/**
 * The child JVM of {@link DockerTraceSecretsTest}: the Docker runner, every logger at TRACE, with host
 * secrets in its environment (OPENAI_API_KEY, TRACE_HOST_SECRET) that neither a log line nor the sandbox
 * (whose environment it prints) may show, and a brokered header value (TRACE_HEADER_SECRET) it refuses.
 */
public final class DockerTraceMain {
    private DockerTraceMain() {
    }

    public static void main(String[] args) {
        TraceJvm.plantCanaries();
        try (DockerSandboxRunner runner = TestEngine.builder().build()) {
            System.out.println(runner);
            print(runner.run(RunRequest.python("print('hello from docker')")));
            SandboxSpec spec = SandboxSpec.builder().file("in/data.txt", "some input").env("MODE", "trace").build();
            try (Sandbox s = runner.open(spec)) {
                System.out.println(s);
                print(s.exec(Execution.python("print(open('in/data.txt').read())")));
                // what the sandbox sees of the environment: the spec's MODE, never the host's secrets
                print(s.exec(Execution.of(Language.BASH, "env; cat /proc/1/environ 2>/dev/null | tr '\\0' '\\n'")));
                print(s.exec(Execution.builder("import time; time.sleep(60)").budget(Duration.ofSeconds(2)).build()));
            }
            EgressPolicy brokered = EgressPolicy.builder().allowDomain("api.example.com")
                    .headerRule(HeaderRule.of("api.example.com", "Authorization", SecretRef.env("TRACE_HEADER_SECRET"), "Bearer "))
                    .build();
            try {
                // through the container's egress proxy (its CA made, its trust variables set); the code sends nothing
                RunResult r = runner.run(RunRequest.of(SandboxSpec.builder().egress(brokered).build(), Execution.python("1")));
                print(r);
                System.out.println("brokered: " + r.status());
            } catch (SandboxException | UnsupportedPolicyException e) {
                System.out.println("refused: " + e);
            }
        }
        System.out.println("trace main done");
    }

    private static void print(RunResult r) {
        System.out.println(r + " stdout=" + r.stdout() + " stderr=" + r.stderr());
    }
}
