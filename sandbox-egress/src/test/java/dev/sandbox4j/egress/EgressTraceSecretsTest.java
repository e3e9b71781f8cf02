package dev.sandbox4j.egress;

import dev.sandbox4j.testlogging.TraceJvm;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * No secret in any log line (issue 28 item 8, for the proxy): a brokered request in a child JVM with
 * every logger at TRACE; the secret reaches the loopback API (the child checks and prints that) and
 * is in none of the child's output.
 */
class EgressTraceSecretsTest {
    private static final String HEADER_SECRET = "sk-brokered-" + "9f1e64c2a07d3b58";

    @Test
    void theBrokeredSecretIsInNoLineAtTrace() {
        TraceJvm.Result r = TraceJvm.run("egress", EgressTraceMain.class, Map.of("TRACE_HEADER_SECRET", HEADER_SECRET),
                List.of(), Duration.ofMinutes(2));
        r.assertClean(List.of(HEADER_SECRET))
                .assertContains("secret arrived: true")
                .assertContains("brokered: 200 canary GET /v1/models")
                .assertContains("unresolvable secret: 502 sandbox4j-egress: secret env:TRACE_UNSET_SECRET could not be resolved")
                .assertContains("refused (host-not-allowed): host not allowed: other.test")
                .assertContains("trace main done");
    }
}
