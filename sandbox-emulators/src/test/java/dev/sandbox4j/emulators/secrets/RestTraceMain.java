package dev.sandbox4j.emulators.secrets;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.daytona.DaytonaSandboxRunner;
import dev.sandbox4j.e2b.E2bSandboxRunner;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.HeaderRule;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.SecretRef;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import dev.sandbox4j.testlogging.TraceJvm;
import dev.sandbox4j.vercel.VercelSandboxRunner;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * The child JVM of {@link RestTraceSecretsTest}: one REST adapter ({@code args[0]}: e2b, vercel or
 * daytona) against its emulator over OkHttp on loopback, every logger at TRACE. The endpoint and the
 * credential come in TRACE_URL and TRACE_KEY, a wrong credential in TRACE_WRONG_KEY, a brokered header
 * value in TRACE_HEADER_SECRET. Prints every result and message it gets.
 */
public final class RestTraceMain {
    private RestTraceMain() {
    }

    public static void main(String[] args) {
        TraceJvm.plantCanaries();
        String provider = args[0];
        try (SandboxRunner runner = runner(provider, System.getenv("TRACE_KEY"))) {
            System.out.println(runner);
            print(runner.run(RunRequest.python("print('hello from " + provider + "')")));
            SandboxSpec spec = SandboxSpec.builder().file("in/data.txt", "some input").env("MODE", "trace").build();
            try (Sandbox s = runner.open(spec)) {
                System.out.println(s);
                print(s.exec(Execution.python("print(open('in/data.txt').read())")));
                print(s.exec(Execution.of(Language.BASH, "echo $MODE")));
                print(s.exec(Execution.builder("import time; time.sleep(60)").budget(Duration.ofSeconds(2)).build()));
            }
            // a brokered credential: E2B and Vercel hand it to their egress proxy, Daytona refuses it
            EgressPolicy brokered = EgressPolicy.builder().allowDomain("api.example.com")
                    .headerRule(HeaderRule.of("api.example.com", "Authorization", SecretRef.env("TRACE_HEADER_SECRET"), "Bearer "))
                    .build();
            report(() -> runner.run(RunRequest.of(SandboxSpec.builder().egress(brokered).build(),
                    Execution.python("print('brokered run')"))));
        }
        try (SandboxRunner bad = runner(provider, System.getenv("TRACE_WRONG_KEY"))) {
            report(() -> bad.run(RunRequest.python("print(1)")));
        }
        System.out.println("trace main done");
    }

    private static SandboxRunner runner(String provider, String key) {
        String url = System.getenv("TRACE_URL");
        switch (provider) {
            case "e2b":
                return E2bSandboxRunner.builder().apiKey(key).apiUrl(url).sandboxUrl(url)
                        .retryBaseDelay(Duration.ofMillis(50)).build();
            case "vercel":
                return VercelSandboxRunner.builder().token(key).teamId("team_trace").projectId("prj_trace")
                        .baseUrl(url + "/api").build();
            case "daytona":
                return DaytonaSandboxRunner.builder().apiKey(key).apiUrl(url).target("us")
                        .statusPollInterval(Duration.ofMillis(20)).retryBaseDelay(Duration.ofMillis(50)).build();
            default:
                throw new IllegalArgumentException(provider);
        }
    }

    private static void print(RunResult r) {
        System.out.println(r + " stdout=" + r.stdout() + " stderr=" + r.stderr());
    }

    private static void report(Supplier<Object> call) {
        try {
            Object r = call.get();
            System.out.println(r instanceof RunResult ? r + " stdout=" + ((RunResult) r).stdout() : r);
        } catch (SandboxException | UnsupportedPolicyException e) {
            System.out.println("refused: " + e);
        }
    }
}
