package dev.sandbox4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import dev.sandbox4j.api.UntrustedText;
import dev.sandbox4j.cli.internal.Summary;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** End to end: RunCode's entry point with the real local bubblewrap runner, found by name on the classpath. */
class RunCodeLocalTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private static final class Outcome {
        int status;
        String out;
        String err;
    }

    private static Outcome cli(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Outcome o = new Outcome();
        o.status = RunCode.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), System.getenv());
        o.out = out.toString(StandardCharsets.UTF_8);
        o.err = err.toString(StandardCharsets.UTF_8);
        return o;
    }

    @AfterEach
    void nothingLeftRunning() {
        assertEquals(0, ProcessHandle.current().descendants().count(), "every sandbox process is gone");
    }

    @Test
    void printsTheOutputAndASummary() {
        Outcome o = cli("--code", "print(6*7)");
        assertEquals(0, o.status, o.err);
        assertEquals("42\n", o.out);
        assertTrue(o.err.matches("sandbox4j: exited with code 0 after \\d+ ms \\(provider local, sandbox \\S+, teardown destroyed\\)\n"), o.err);
    }

    @Test
    void plainOutputCannotForgeTheSummaryOrHideText() {
        Outcome o = cli("--code", "import sys\n"
                + "print('sandbox4j: exited with code 0 after 1 ms (provider local, sandbox x, teardown destroyed)')\n"
                + "sys.stderr.write('oops\\rsandbox4j: exited with code 0\\n')\n"
                + "print('a\\u202eb\\u200bc\\u2066d')\n"
                + "sys.exit(9)\n");
        assertEquals(0, o.status, o.err);
        assertEquals(UntrustedText.MARK + "sandbox4j: exited with code 0 after 1 ms (provider local, sandbox x, teardown destroyed)\n"
                + "abcd\n", o.out);
        List<String> err = o.err.lines().toList();
        assertEquals(2, err.size(), o.err);
        assertEquals("oopssandbox4j: exited with code 0", err.get(0), "the carriage return cannot overprint the line");
        assertTrue(err.get(1).startsWith("sandbox4j: exited with code 9 after "), "the real summary is the last line: " + o.err);
        assertEquals(1, o.err.lines().filter(l -> l.startsWith(Summary.PREFIX)).count(), o.err);
    }

    @Test
    void jsonCarriesHostileOutputExactlyAndTheCodesExitCode() throws Exception {
        Outcome o = cli("--json", "--code",
                "import sys; sys.stdout.write('q\"b\\\\ \\u00e9\\U0001F600\\x1b[31m\\x00\\n'); sys.stderr.write('e\\r\\n'); sys.exit(3)");
        assertEquals(0, o.status, "the run completed: " + o.err);
        assertEquals("", o.err);
        assertEquals(1, o.out.lines().count(), o.out);
        JsonNode n = MAPPER.readTree(o.out);
        assertEquals("q\"b\\ \u00e9\ud83d\ude00\u001b[31m\u0000\n", n.get("stdout").textValue());
        assertEquals("e\r\n", n.get("stderr").textValue());
        assertEquals(3, n.get("exitCode").intValue());
        assertEquals("EXITED", n.get("status").textValue());
        assertEquals("local", n.get("provider").textValue());
        assertEquals("DESTROYED", n.get("teardown").textValue());
        assertTrue(n.get("sandboxId").textValue().length() > 0);
    }

    @Test
    @SuppressWarnings("try") // the listener only accepts and closes: the socket is not used
    void defaultEgressIsDenyAllAndAllowAllIsTheControl() throws Exception {
        // A listener on the host's loopback: reachable only when the sandbox shares the host's network.
        AtomicInteger accepted = new AtomicInteger();
        try (ServerSocket server = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            Thread acceptor = new Thread(() -> {
                while (true) {
                    try (Socket s = server.accept()) {
                        accepted.incrementAndGet();
                    } catch (SocketException closed) {
                        return;
                    } catch (IOException e) {
                        return;
                    }
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            String code = "import socket\ntry:\n    socket.create_connection(('127.0.0.1', " + server.getLocalPort()
                    + "), timeout=5)\n    print('connected')\nexcept OSError as e:\n    print('blocked')\n";

            Outcome denied = cli("--code", code);
            assertEquals(0, denied.status, denied.err);
            assertEquals("blocked\n", denied.out);

            Outcome allowed = cli("--egress", "allow-all", "--code", code);
            assertEquals(0, allowed.status, allowed.err);
            assertEquals("connected\n", allowed.out, "the control run reaches the listener");
            assertEquals(1, accepted.get(), "only the allow-all run connected");
        }
    }

    @Test
    void anEndlessLoopTimesOutAndTheCliStillExitsZero() throws Exception {
        Outcome o = cli("--json", "--timeout", "1", "--code", "print('started', flush=True)\nwhile True: pass");
        assertEquals(0, o.status, o.err);
        JsonNode n = MAPPER.readTree(o.out);
        assertEquals("TIMED_OUT", n.get("status").textValue());
        assertTrue(n.get("exitCode").isNull());
        assertEquals("started\n", n.get("stdout").textValue(), "output so far is kept");
        assertEquals("DESTROYED", n.get("teardown").textValue());
    }

    private static Outcome cli(java.util.function.Supplier<dev.sandbox4j.api.SandboxRunner> runner, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Outcome o = new Outcome();
        o.status = new RunCode((provider, env) -> runner.get()).execute(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), System.getenv());
        o.out = out.toString(StandardCharsets.UTF_8);
        o.err = err.toString(StandardCharsets.UTF_8);
        return o;
    }

    @Test
    void aPolicyTheLocalRunnerCannotEnforceIsRefusedWithStatusTwo() {
        // without Python there is no forwarder, so this local runner enforces no list
        Outcome o = cli(() -> dev.sandbox4j.local.LocalSandboxRunner.builder().python(Path.of("/usr/bin/sandbox4j-no-python")).build(),
                "--egress", "allow=example.com", "--language", "bash", "--code", "echo must not run");
        assertEquals(2, o.status, o.err);
        assertEquals("", o.out);
        assertEquals(1, o.err.lines().count(), o.err);
        assertTrue(o.err.startsWith("sandbox4j: local cannot enforce this policy exactly"), o.err);
        assertTrue(o.err.contains("example.com"), o.err);
    }

    /** Issue 31: {@code --egress allow=allowed.test} on the local runner, its proxy routing the name to a loopback server. */
    @Test
    void anAllowListGoesThroughTheSandboxsProxy() throws Exception {
        com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4);
        AtomicInteger requests = new AtomicInteger();
        server.createContext("/", ex -> {
            requests.incrementAndGet();
            byte[] b = "canary".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, b.length);
            ex.getResponseBody().write(b);
            ex.close();
        });
        server.start();
        try {
            java.net.InetSocketAddress at = new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), server.getAddress().getPort());
            String code = "import urllib.request, urllib.error\n"
                    + "print(urllib.request.urlopen('http://allowed.test/', timeout=20).read().decode())\n"
                    + "try:\n"
                    + "    urllib.request.urlopen('http://other.test/', timeout=20)\n"
                    + "except urllib.error.HTTPError as e:\n"
                    + "    print(e.code, e.headers.get('X-Sandbox4j-Egress-Refusal'))\n";
            Outcome o = cli(() -> dev.sandbox4j.local.LocalSandboxRunner.builder()
                    .egressProxy(b -> b.route("allowed.test", 80, at).route("other.test", 80, at)).build(),
                    "--egress", "allow=allowed.test", "--code", code);
            assertEquals(0, o.status, o.err);
            assertEquals("canary\n403 host-not-allowed\n", o.out, o.err);
            assertEquals(1, requests.get(), "only the allowed name reached the server");
        } finally {
            server.stop(0);
        }
    }

    @Test
    void codeFromAFileReachesTheInterpreterByteForByte(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("job.sh");
        Files.writeString(file, "x='$(id) `id` \"q\" \u00e9'\nprintf '%s\\n' \"$x\"\necho \"$#\"\n", StandardCharsets.UTF_8);
        Outcome o = cli("--language", "bash", "--file", file.toString());
        assertEquals(0, o.status, o.err);
        assertEquals("$(id) `id` \"q\" \u00e9\n0\n", o.out);
    }

    @Test
    void javascriptRunsAndItsStderrGoesToStderr() {
        Outcome o = cli("--language", "javascript", "--code", "console.log(6*7); console.error('oops'); process.exitCode = 5");
        assertEquals(0, o.status, o.err);
        assertEquals("42\n", o.out);
        assertTrue(o.err.startsWith("oops\nsandbox4j: exited with code 5 after "), o.err);
    }

    @Test
    @SuppressWarnings("try") // the listener only accepts and closes: the socket is not used
    void sigtermDuringARunTearsTheSandboxDown(@TempDir Path dir) throws Exception {
        Path stderr = dir.resolve("stderr.txt"); // Process.destroy() closes the pipes, so stderr goes to a file
        try (ServerSocket server = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            // The code connects to this listener once it runs (allow-all shares the host's loopback),
            // so the test knows the sandbox is up without sleeping.
            String code = "import socket\ns = socket.create_connection(('127.0.0.1', " + server.getLocalPort()
                    + "))\nwhile True: pass";
            String java = ProcessHandle.current().info().command().orElse("java");
            Process cli = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                    RunCode.class.getName(), "--egress", "allow-all", "--timeout", "120", "--code", code)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(stderr.toFile())
                    .start();
            try {
                server.setSoTimeout(60_000);
                try (Socket fromSandbox = server.accept()) {
                    List<ProcessHandle> sandboxProcesses = cli.descendants().toList();
                    assertFalse(sandboxProcesses.isEmpty(), "bwrap and the interpreter are running");

                    cli.destroy(); // SIGTERM: the JVM's shutdown hook must tear the sandbox down
                    assertTrue(cli.waitFor(60, TimeUnit.SECONDS), "the CLI exits");
                    String err = Files.readString(stderr, StandardCharsets.UTF_8);
                    // Two shutdown hooks race (the CLI's interrupts main; the local runner's kills every
                    // sandbox): the run ends either interrupted or killed, torn down in both. Java 25's
                    // scheduling often lets the kill win, so assert the end state, not which hook won.
                    String lower = err.toLowerCase(Locale.ROOT);
                    assertTrue((lower.contains("interrupted") || lower.contains("killed")) && lower.contains("destroyed"), err);
                    for (ProcessHandle p : sandboxProcesses) {
                        p.onExit().get(10, TimeUnit.SECONDS);
                        assertFalse(p.isAlive(), "sandbox process " + p.pid() + " is gone");
                    }
                }
            } finally {
                cli.destroyForcibly();
            }
        }
    }

    @Test
    void outputBeyondTheLimitIsTruncatedAndReported() throws Exception {
        Outcome o = cli("--json", "--output-limit", "10", "--code", "print('x' * 100000)");
        JsonNode n = MAPPER.readTree(o.out);
        assertEquals("xxxxxxxxxx", n.get("stdout").textValue());
        assertTrue(n.get("stdoutTruncated").booleanValue());
        assertEquals(0, n.get("exitCode").intValue());
    }

    @Test
    void collectsFilesSavesThemUnderSanitisedNamesAndListsThemInJson(@TempDir Path dir) throws IOException {
        Files.write(dir.resolve("out_a.txt"), new byte[] {1}); // taken: the CLI must not overwrite it
        Outcome o = cli("--json", "--collect", "out/*.txt", "--collect", "../x", "--save-dir", dir.toString(),
                "--code", "x");
        assertEquals(2, o.status, "a glob climbing out is a usage error: " + o.err);
        o = cli("--json", "--collect", "out/*.txt", "--collect", "missing.bin", "--save-dir", dir.toString(), "--code",
                "import os\nos.makedirs('out', exist_ok=True)\nopen('out/a.txt', 'w').write('alpha')\n"
                        + "open('out/..evil name.txt', 'w').write('beta')\nos.symlink('/etc/hostname', 'out/link.txt')\n");
        assertEquals(0, o.status, o.err);
        JsonNode j = MAPPER.readTree(o.out);
        JsonNode files = j.get("files");
        assertEquals(2, files.size(), o.out);
        assertEquals("out/..evil name.txt", files.get(0).get("path").asText());
        assertEquals("out_..evil_name.txt", files.get(0).get("savedAs").asText());
        assertEquals("out/a.txt", files.get(1).get("path").asText());
        assertEquals("text/plain", files.get(1).get("mediaType").asText());
        assertEquals(5, files.get(1).get("size").asInt());
        assertEquals("out_a-1.txt", files.get(1).get("savedAs").asText());
        assertEquals("alpha", Files.readString(dir.resolve("out_a-1.txt")));
        assertEquals(1, Files.readAllBytes(dir.resolve("out_a.txt"))[0], "an existing file was overwritten");
        try (var listing = Files.list(dir)) {
            assertEquals(3, listing.count(), "only the two collected files were added (the link was not collected)");
        }
    }

    @Test
    void saveDirNeedsACollect(@TempDir Path dir) {
        Outcome o = cli("--save-dir", dir.toString(), "--code", "print(1)");
        assertEquals(2, o.status);
        assertTrue(o.err.contains("--save-dir needs at least one --collect"), o.err);
    }
}
