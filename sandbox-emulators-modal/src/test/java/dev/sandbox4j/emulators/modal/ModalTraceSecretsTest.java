package dev.sandbox4j.emulators.modal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.testlogging.TraceJvm;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Issue 28 item 8 for Modal: the adapter in a child JVM with every logger at TRACE (Netty's shaded
 * frame logger, gRPC's java.util.logging loggers, sandbox4j's own), over real Netty channels to the
 * emulator on loopback. No token id, token secret, wrong secret, brokered header value or JWT (the
 * {@code x-modal-auth-token} and the router's bearer) may appear in anything the child writes.
 */
class ModalTraceSecretsTest {
    private static final String TOKEN_ID = "ak-trace-" + "4f1d8c2b9e7a6035";
    private static final String TOKEN_SECRET = "as-trace-" + "b3e9a17c5d20f864";
    private static final String WRONG_SECRET = "as-wrong-" + "9d2c7e1f0a3b4856";
    private static final String HEADER_SECRET = "sk-brokered-" + "61e0c9f2a8d7b435";

    @Test
    void noSecretInAnyLineAtTrace() throws Exception {
        TraceJvm.Result r;
        try (LocalSandboxRunner local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048).build();
                ModalEmulator emulator = ModalEmulator.builder().runner(local).token(TOKEN_ID, TOKEN_SECRET).build()) {
            r = TraceJvm.run("modal", ModalTraceMain.class, Map.of(
                    "MODAL_SERVER_URL", emulator.serverUrl(),
                    "MODAL_TOKEN_ID", TOKEN_ID,
                    "MODAL_TOKEN_SECRET", TOKEN_SECRET,
                    "MODAL_CONFIG_PATH", "/nonexistent/sandbox4j-trace/.modal.toml",
                    "TRACE_WRONG_SECRET", WRONG_SECRET,
                    "TRACE_HEADER_SECRET", HEADER_SECRET), List.of(), Duration.ofMinutes(3));
            assertTrue(emulator.ledger().created() >= 2, emulator.ledger().toString());
        }
        System.err.println("modal at TRACE: " + r);
        r.assertClean(List.of(TOKEN_ID, TOKEN_SECRET, WRONG_SECRET, HEADER_SECRET))
                .assertContains("trace main done")
                .assertContains("hello from modal")
                .assertContains("refused: ") // the header rule and the wrong secret
                .assertContains("netty-trace " + r.output().lines().filter(l -> l.contains("slf4j-trace "))
                        .findFirst().orElseThrow().replaceAll(".*slf4j-trace ", ""));
        // the run went through Netty and gRPC with their loggers on: lines from both are in the capture
        assertTrue(r.linesWith("io.grpc.netty.shaded.io.netty.") > 0, "no shaded Netty line at TRACE");
        assertTrue(r.linesWith("] io.grpc.") > 0, "no gRPC (java.util.logging) line at FINEST");
        assertTrue(Pattern.compile("TRACE dev\\.sandbox4j\\.|DEBUG dev\\.sandbox4j\\.").matcher(r.output()).find(),
                "no sandbox4j line at TRACE or DEBUG");
    }
}
