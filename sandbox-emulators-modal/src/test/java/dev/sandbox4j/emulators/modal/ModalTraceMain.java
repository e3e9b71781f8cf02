package dev.sandbox4j.emulators.modal;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.modal.ModalSandboxRunner;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.HeaderRule;
import dev.sandbox4j.policy.SecretRef;
import dev.sandbox4j.testlogging.TraceJvm;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The child JVM of {@link ModalTraceSecretsTest}: the Modal adapter as a user configures it
 * ({@code fromEnv}: MODAL_SERVER_URL, MODAL_TOKEN_ID, MODAL_TOKEN_SECRET), over real Netty channels to
 * the emulator on loopback, every logger at TRACE. Prints every result and message it gets.
 */
public final class ModalTraceMain {
    private ModalTraceMain() {
    }

    public static void main(String[] args) {
        TraceJvm.plantCanaries();
        try (ModalSandboxRunner modal = ModalSandboxRunner.fromEnv(System.getenv())) {
            System.out.println(modal);
            print(modal.run(RunRequest.python("print('hello from modal')")));
            SandboxSpec spec = SandboxSpec.builder().file("in/data.txt", "some input").env("MODE", "trace").build();
            try (Sandbox s = modal.open(spec)) {
                System.out.println(s);
                print(s.exec(Execution.python("print(open('in/data.txt').read())")));
                print(s.exec(Execution.of(dev.sandbox4j.policy.Language.BASH, "echo $MODE")));
                // the budget runs out: the kill by marker is a second exec
                print(s.exec(Execution.builder("import time; time.sleep(60)").budget(Duration.ofSeconds(2)).build()));
            }
            // a brokered credential: Modal refuses header rules (the refusal must not carry the value)
            EgressPolicy brokered = EgressPolicy.builder().allowDomain("api.example.com")
                    .headerRule(HeaderRule.of("api.example.com", "Authorization", SecretRef.env("TRACE_HEADER_SECRET"), "Bearer "))
                    .build();
            report(() -> modal.run(RunRequest.of(SandboxSpec.builder().egress(brokered).build(), Execution.python("1"))));
        }
        // a wrong secret: the refusal, and every line about it, must not show it (nor the right one)
        Map<String, String> wrong = new HashMap<>(System.getenv());
        wrong.put(ModalSandboxRunner.TOKEN_SECRET_VARIABLE, System.getenv("TRACE_WRONG_SECRET"));
        try (ModalSandboxRunner bad = ModalSandboxRunner.fromEnv(wrong)) {
            report(() -> bad.run(RunRequest.python("print(1)")));
        }
        // Netty's own logging still reaches the capture after the adapter ran (only the frame logger is silenced)
        io.grpc.netty.shaded.io.netty.util.internal.logging.InternalLoggerFactory
                .getInstance("io.grpc.netty.shaded.io.netty.TraceCanary").trace("netty-trace " + TraceJvm.canary());
        System.out.println("trace main done");
    }

    private static void print(dev.sandbox4j.api.RunResult r) {
        System.out.println(r + " stdout=" + r.stdout() + " stderr=" + r.stderr());
    }

    private static void report(java.util.function.Supplier<Object> call) {
        try {
            System.out.println(call.get());
        } catch (RuntimeException e) {
            System.out.println("refused: " + e);
            if (!(e instanceof SandboxException) && !(e instanceof dev.sandbox4j.policy.UnsupportedPolicyException)) {
                throw e;
            }
        }
    }
}
