package dev.sandbox4j.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The runnable jar as an MCP client starts it: a subprocess spoken to over its stdin and stdout. Every
 * line on stdout must be a JSON-RPC frame; logs go to stderr. Runs after package (the jar must exist).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // an upper bound, so that a hung server fails the build instead of stalling it
class SandboxMcpJarIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Path jar() {
        String p = System.getProperty("sandbox4j.mcp.jar");
        assertNotNull(p, "run through Maven: the jar's path comes from the build");
        Path jar = Path.of(p);
        assertTrue(Files.isRegularFile(jar), "no jar at " + jar);
        return jar;
    }

    private static Process start(String... options) throws IOException {
        return start(java.util.Map.of(), options);
    }

    private static Process start(java.util.Map<String, String> env, String... options) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", jar().toString()));
        command.addAll(List.of(options));
        ProcessBuilder pb = new ProcessBuilder(command);
        // provider keys come from the environment: none here, and none needed for local
        pb.environment().keySet().removeIf(k -> k.startsWith("E2B_") || k.startsWith("DAYTONA_") || k.startsWith("VERCEL_")
                || k.startsWith("MODAL_") || k.startsWith("SANDBOX4J_"));
        pb.environment().putAll(env);
        return pb.start();
    }

    private static CompletableFuture<String> drain(InputStream in) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "unreadable: " + e;
            }
        });
    }

    private static void send(OutputStream stdin, String frame) throws IOException {
        stdin.write((frame + "\n").getBytes(StandardCharsets.UTF_8));
        stdin.flush();
    }

    @Test
    void initializeListAndCallOverStdioWithOnlyProtocolFramesOnStdout() throws Exception {
        Process p = start("--provider", "local", "--egress", "deny-all", "--max-timeout", "20");
        CompletableFuture<String> err = drain(p.getErrorStream());
        var lines = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        Map<Integer, JsonNode> answers = new HashMap<>();
        List<String> stdout = new ArrayList<>();
        try (OutputStream stdin = p.getOutputStream()) {
            send(stdin, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                    + "\"capabilities\":{},\"clientInfo\":{\"name\":\"jar-test\",\"version\":\"1\"}}}");
            readUntil(lines, stdout, answers, 1);
            send(stdin, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
            send(stdin, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{}}");
            send(stdin, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\","
                    + "\"arguments\":{\"code\":\"print(6 * 7)\",\"language\":\"python\"}}}");
            send(stdin, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\","
                    + "\"arguments\":{\"code\":\"print(1)\",\"egress\":\"allow-all\"}}}");
            send(stdin, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\","
                    + "\"arguments\":{\"code\":\"while :; do :; done\",\"language\":\"bash\",\"timeoutSeconds\":1}}}");
            readUntil(lines, stdout, answers, 2, 3, 4, 5);
        }
        // stdin closed: the server stops by itself
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the server ends when stdin closes");
        for (String line; (line = lines.readLine()) != null; ) {
            stdout.add(line);
        }
        String stderr = err.get(30, TimeUnit.SECONDS);
        assertEquals(0, p.exitValue(), stderr);

        for (String line : stdout) {
            JsonNode frame = JSON.readTree(line); // throws on anything that is not JSON
            assertEquals("2.0", frame.path("jsonrpc").asText(), "not a JSON-RPC frame on stdout: " + line);
        }
        assertEquals("sandbox4j", answers.get(1).at("/result/serverInfo/name").asText(), answers.get(1).toString());
        JsonNode tools = answers.get(2).at("/result/tools");
        assertEquals(1, tools.size(), tools.toString());
        assertEquals("run_code", tools.get(0).path("name").asText());
        assertEquals(List.of("code", "language", "timeoutSeconds"),
                iterable(tools.get(0).at("/inputSchema/properties").fieldNames()));
        JsonNode ran = answers.get(3).path("result");
        assertFalse(ran.path("isError").asBoolean(), ran.toString());
        String text = ran.at("/content/0/text").asText();
        assertTrue(text.startsWith("status: exited with code 0"), text);
        assertTrue(text.matches("(?s).*<stdout marker=([0-9a-f]{32})>\n42\n</stdout marker=\\1>\n.*"), text);
        assertEquals("exited", ran.at("/structuredContent/status").asText());
        JsonNode refused = answers.get(4).path("result");
        assertTrue(refused.path("isError").asBoolean(), refused.toString());
        assertTrue(refused.at("/content/0/text").asText().startsWith("error: unknown argument 'egress'"), refused.toString());
        JsonNode loop = answers.get(5).path("result");
        assertEquals("timed_out", loop.at("/structuredContent/status").asText(), loop.toString());

        assertTrue(stderr.contains("sandbox4j MCP server ready on stdio"), "the logs are on stderr: " + stderr);
        assertFalse(stderr.contains("\tat "), "no stack trace: " + stderr);
    }

    @Test
    void aPolicyTheProviderCannotEnforceStopsTheServerBeforeItSpeaks() throws Exception {
        // E2B allows IPv4 CIDRs only, so an IPv6 one is refused before any call (the local runner now enforces
        // every list --egress can express, through its egress proxy). The key is a dummy and the API URL a
        // closed loopback port: nothing is sent anywhere, and nothing could leave this machine if it were.
        Process p = start(java.util.Map.of("E2B_API_KEY", "e2b_0123456789abcdef0123456789abcdef01234567",
                        "E2B_API_URL", "http://127.0.0.1:9", "E2B_SANDBOX_URL", "http://127.0.0.1:9"),
                "--provider", "e2b", "--egress", "allow=2001:db8::/32");
        p.getOutputStream().close();
        CompletableFuture<String> out = drain(p.getInputStream());
        CompletableFuture<String> err = drain(p.getErrorStream());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));

        assertEquals(2, p.exitValue());
        assertEquals("", out.get(30, TimeUnit.SECONDS), "nothing on stdout");
        String stderr = err.get(30, TimeUnit.SECONDS);
        assertTrue(stderr.startsWith("sandbox4j-mcp: "), stderr);
        assertTrue(stderr.contains("allowed CIDR 2001:db8::/32"), "the rule is named: " + stderr);
        assertFalse(stderr.contains("\tat "), stderr);
    }

    @Test
    void anUnknownOptionIsAUsageErrorOnStderr() throws Exception {
        Process p = start("--allow-policy-from-client");
        p.getOutputStream().close();
        CompletableFuture<String> out = drain(p.getInputStream());
        CompletableFuture<String> err = drain(p.getErrorStream());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));

        assertEquals(2, p.exitValue());
        assertEquals("", out.get(30, TimeUnit.SECONDS));
        String stderr = err.get(30, TimeUnit.SECONDS);
        assertTrue(stderr.contains("unknown option --allow-policy-from-client"), stderr);
        assertEquals(1, stderr.split("--help", -1).length - 1, "the hint once: " + stderr);
        assertEquals(1, stderr.lines().count(), stderr);
    }

    @Test
    void versionPrintsTheJarsVersionOnStderrAndExitsZero() throws Exception {
        Process p = start("--version");
        p.getOutputStream().close();
        CompletableFuture<String> out = drain(p.getInputStream());
        CompletableFuture<String> err = drain(p.getErrorStream());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));

        assertEquals(0, p.exitValue());
        assertEquals("", out.get(30, TimeUnit.SECONDS), "stdout is the protocol's");
        assertTrue(err.get(30, TimeUnit.SECONDS).matches("sandbox4j-mcp \\d+\\.\\d+\\.\\d+\\S*\n"), err.get());
    }

    @Test
    void closingStdinDuringACallEndsTheProcessAndItsSandbox() throws Exception {
        Process p = start("--provider", "local", "--max-timeout", "100");
        CompletableFuture<String> err = drain(p.getErrorStream());
        var lines = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        Map<Integer, JsonNode> answers = new HashMap<>();
        List<String> stdout = new ArrayList<>();
        OutputStream stdin = p.getOutputStream();
        send(stdin, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                + "\"capabilities\":{},\"clientInfo\":{\"name\":\"jar-test\",\"version\":\"1\"}}}");
        readUntil(lines, stdout, answers, 1);
        send(stdin, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
        send(stdin, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\","
                + "\"arguments\":{\"code\":\"import time\\ntime.sleep(95)\",\"timeoutSeconds\":95}}}");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (p.descendants().noneMatch(h -> h.info().command().orElse("").contains("bwrap"))) {
            assertTrue(System.nanoTime() < deadline, "the call's sandbox never started");
            Thread.sleep(10); // polling a condition under a deadline
        }
        List<ProcessHandle> sandbox = p.descendants().toList();
        stdin.close();
        // an upper bound far below the 95 s sleep: the shared machine may be slow, the server must not wait for the code
        assertTrue(p.waitFor(45, TimeUnit.SECONDS), "the server ends when stdin closes, without waiting for the call");
        assertEquals(0, p.exitValue(), err.get(30, TimeUnit.SECONDS));
        // killed processes may take a moment to be reaped once reparented; a survivor would sleep its 95 s
        for (ProcessHandle h : sandbox) {
            try {
                h.onExit().get(30, TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                throw new AssertionError("a sandbox process outlived the server: " + h.info(), e);
            }
        }
    }

    @Test
    void everyProviderTheHelpNamesIsInTheJar() throws Exception {
        Process p = start("--provider", "nosuch");
        p.getOutputStream().close();
        CompletableFuture<String> out = drain(p.getInputStream());
        CompletableFuture<String> err = drain(p.getErrorStream());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));

        assertEquals(2, p.exitValue());
        assertEquals("", out.get(30, TimeUnit.SECONDS));
        String stderr = err.get(30, TimeUnit.SECONDS);
        // the runner lists the providers it found on the jar's classpath
        assertTrue(stderr.contains("[daytona, docker, e2b, local, modal, vercel]"), stderr);
    }

    /**
     * The AppCDS archive the build made (profile {@code appcds}) maps on this JDK: with
     * {@code -Xshare:on} a JVM that cannot map it refuses to start, so the answer proves it was used.
     * Skipped, with the reason, only where the profile did not run (no training log).
     */
    @Test
    void theAppCdsArchiveMapsAndTheServerAnswersFromIt() throws Exception {
        String p = System.getProperty("sandbox4j.mcp.jsa");
        assertNotNull(p, "run through Maven: the archive's path comes from the build");
        Path jsa = Path.of(p);
        Path log = Path.of(p + ".log");
        assumeTrue(Files.exists(jsa) || Files.exists(log), "the appcds profile did not run (-Dsandbox4j.appcds.skip,"
                + " or not a unix machine): no archive to check");
        assertTrue(Files.size(jsa) > 0, "the training run made no archive: " + Files.readString(log));
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:SharedArchiveFile=" + jsa, "-Xshare:on", "-jar", jar().toString(), "--provider", "local",
                "--egress", "deny-all");
        Process proc = new ProcessBuilder(command).start();
        CompletableFuture<String> err = drain(proc.getErrorStream());
        var lines = new java.io.BufferedReader(new java.io.InputStreamReader(proc.getInputStream(), StandardCharsets.UTF_8));
        Map<Integer, JsonNode> answers = new HashMap<>();
        List<String> stdout = new ArrayList<>();
        try (OutputStream stdin = proc.getOutputStream()) {
            send(stdin, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                    + "\"capabilities\":{},\"clientInfo\":{\"name\":\"appcds-test\",\"version\":\"1\"}}}");
            readUntil(lines, stdout, answers, 1);
        }
        assertTrue(proc.waitFor(60, TimeUnit.SECONDS), "the server ends when stdin closes");
        assertEquals(0, proc.exitValue(), err.get(30, TimeUnit.SECONDS));
        assertEquals("sandbox4j", answers.get(1).at("/result/serverInfo/name").asText(), answers.get(1).toString());
    }

    private static void readUntil(java.io.BufferedReader lines, List<String> stdout, Map<Integer, JsonNode> answers,
                                  int... ids) throws IOException {
        for (int id : ids) {
            while (!answers.containsKey(id)) {
                String line = lines.readLine();
                assertNotNull(line, "stdout ended before the answer to " + id + "; so far: " + stdout);
                stdout.add(line);
                JsonNode frame = JSON.readTree(line);
                if (frame.has("id") && frame.get("id").isInt()) {
                    answers.put(frame.get("id").asInt(), frame);
                }
            }
        }
    }

    private static List<String> iterable(java.util.Iterator<String> it) {
        List<String> out = new ArrayList<>();
        it.forEachRemaining(out::add);
        return out;
    }
}
