package dev.sandbox4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.SandboxRunners;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The hosted providers as the jar brings them: found by name, configured from their own variables. */
class RunCodeProvidersTest {

    private static String[] run(Map<String, String> env, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = RunCode.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), env);
        return new String[] {String.valueOf(status), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8)};
    }

    @Test
    void theJarBringsE2bDaytonaAndVercel() {
        for (String p : new String[] {"e2b", "daytona", "vercel"}) {
            assertTrue(SandboxRunners.provider(p).isPresent(), p + " is not on the CLI's classpath");
        }
    }

    @Test
    void aMissingKeyExitsTwoNamingTheVariable() {
        String[] r = run(Map.of(), "--provider", "e2b", "--code", "print(1)");
        assertEquals("2", r[0]);
        assertTrue(r[2].contains("E2B_API_KEY"), r[2]);
        r = run(Map.of(), "--provider", "daytona", "--code", "print(1)");
        assertEquals("2", r[0]);
        assertTrue(r[2].contains("DAYTONA_API_KEY"), r[2]);
        r = run(Map.of(), "--provider", "vercel", "--code", "print(1)");
        assertEquals("2", r[0]);
        assertTrue(r[2].contains("VERCEL_"), r[2]);
    }

    @Test
    @SuppressWarnings("try") // the listener only accepts and closes: the socket is not used
    void aConflictingDaytonaEgressExitsTwoWithoutAnyRequest() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            AtomicInteger connections = new AtomicInteger();
            Thread acceptor = new Thread(() -> {
                while (!server.isClosed()) {
                    try (Socket s = server.accept()) {
                        connections.incrementAndGet();
                    } catch (IOException e) {
                        return;
                    }
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            String key = "dtn_secret_key_0123456789";
            Map<String, String> env = Map.of("DAYTONA_API_KEY", key,
                    "DAYTONA_API_URL", "http://127.0.0.1:" + server.getLocalPort() + "/api");
            String[] r = run(env, "--provider", "daytona", "--egress", "allow=example.com,10.0.0.0/8", "--code", "print(1)");
            assertEquals("2", r[0], r[2]);
            assertTrue(r[2].contains("daytona"), r[2]);
            assertFalse(r[1].contains(key) || r[2].contains(key), "the key leaked into the output");
            assertEquals(0, connections.get(), "a refused policy must not reach the provider");
        }
    }
}
