package dev.sandbox4j.emulators.e2b;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.emulators.ShellWords;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import okhttp3.MediaType;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** envd on port 49983: the Connect process stream, SendSignal, /files and the access token. */
class E2bEnvdWireTest extends WireTestSupport {
    String id;
    String token;

    @BeforeEach
    void sandbox() throws IOException {
        JsonNode sb = create("{\"templateID\":\"base\",\"timeout\":60,\"allow_internet_access\":false}");
        id = sb.get("sandboxID").asText();
        token = sb.get("envdAccessToken").asText();
    }

    void killSandbox() throws IOException {
        assertEquals(204, kill(id));
    }

    /** Recording e2b-a-command.json, byte for byte on the request side. */
    @Test
    void recordedCommandFlow() throws IOException {
        String boundary = "----formdata-undici-001127120934";
        String multipart = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"/tmp/main.py\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\nimport sys\nprint(\"hello from main.py\")\n"
                + "print(\"warning: something\", file=sys.stderr)\n\r\n--" + boundary + "--\r\n";
        Request upload = envd(id, token, "/files?path=/tmp/main.py")
                .post(RequestBody.create(multipart, MediaType.get("multipart/form-data; boundary=" + boundary))).build();
        try (Response r = http.newCall(upload).execute()) {
            assertEquals(200, r.code());
            assertEquals(JSON.readTree("[{\"path\":\"/tmp/main.py\",\"name\":\"main.py\",\"type\":\"file\"}]"),
                    JSON.readTree(r.body().string()));
        }
        Request start = start(id, token, "{\"process\":{\"cmd\":\"/bin/bash\",\"args\":[\"-l\",\"-c\",\"python3 /tmp/main.py\"]},\"stdin\":false}")
                .header("Connect-Timeout-Ms", "30000").header("Keepalive-Ping-Interval", "50").build();
        try (Response r = http.newCall(start).execute()) {
            assertEquals(200, r.code());
            assertEquals("application/connect+json", r.header("Content-Type"));
            List<Frame> frames = readAll(r.body().byteStream());
            assertTrue(frames.get(0).json.path("event").path("start").get("pid").isInt(), frames.toString());
            assertEquals("hello from main.py\n", stdout(frames, "stdout"));
            assertEquals("warning: something\n", stdout(frames, "stderr"));
            // protojson: exit code 0 and exited:false are left out
            assertEquals(JSON.readTree("{\"exited\":true,\"status\":\"exit status 0\"}"), end(frames));
            Frame last = frames.get(frames.size() - 1);
            assertEquals(2, last.flags);
            assertEquals(JSON.createObjectNode(), last.json);
        }
        killSandbox();
    }

    @Test
    void filesAnywhereAreFoundByTheCommandsThatNameThem() throws IOException {
        // the adapter's form for code too large for argv: a file in /tmp run by a fixed command
        String boundary = "okhttp-boundary";
        String multipart = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"code.py\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\nprint('from a file')\r\n--" + boundary + "--\r\n";
        Request upload = envd(id, token, "/files?path=%2Ftmp%2Fsandbox4j%2Fcode-abc.py")
                .post(RequestBody.create(multipart, MediaType.get("multipart/form-data; boundary=" + boundary))).build();
        try (Response r = http.newCall(upload).execute()) {
            assertEquals("/tmp/sandbox4j/code-abc.py", JSON.readTree(r.body().string()).get(0).get("path").asText());
        }
        assertEquals("from a file\n", stdout(run("{\"process\":{\"cmd\":\"python3\",\"args\":[\"/tmp/sandbox4j/code-abc.py\"]}}"), "stdout"));
        // /home/user in a shell string and as the cwd
        upload("notes.txt", "note");
        assertEquals("note", stdout(run("{\"process\":{\"cmd\":\"/bin/bash\",\"args\":[\"-l\",\"-c\",\"cat /home/user/notes.txt\"],"
                + "\"cwd\":\"/tmp/sandbox4j\"}}"), "stdout"));
        // code given to an interpreter is never rewritten
        assertEquals("/home/user\n", stdout(run("{\"process\":{\"cmd\":\"python3\",\"args\":[\"-c\",\"print('/home/user')\"]}}"), "stdout"));
        try (Response r = http.newCall(envd(id, token, "/files?path=%2Ftmp%2Fsandbox4j%2Fcode-abc.py").get().build()).execute()) {
            assertEquals("print('from a file')", r.body().string());
        }
        killSandbox();
    }

    @Test
    void exitCodesErrorsArgvAndEnvironment() throws IOException {
        List<Frame> f = run("{\"process\":{\"cmd\":\"/bin/bash\",\"args\":[\"-l\",\"-c\",\"echo out; echo err >&2; exit 3\"]},\"stdin\":false}");
        assertEquals(JSON.readTree("{\"exitCode\":3,\"exited\":true,\"status\":\"exit status 3\",\"error\":\"exit status 3\"}"), end(f));
        assertEquals("out\n", stdout(f, "stdout"));
        assertEquals("err\n", stdout(f, "stderr"));

        // argv straight to the interpreter: quotes, $(), backticks and non-ASCII byte for byte
        String code = "print('it\\'s $(whoami) `id` \\u00e9\\u4e2d')";
        f = run("{\"process\":{\"cmd\":\"python3\",\"args\":[\"-c\"," + JSON.writeValueAsString(code) + "]}}");
        assertEquals("it's $(whoami) `id` é中\n", stdout(f, "stdout"));
        assertTrue(workspaces.last().executions.get(workspaces.last().executions.size() - 1).code()
                .endsWith("exec 'python3' '-c' " + ShellWords.quote(code)), "argv single-quoted, not interpreted");

        // envs and cwd, as the SDK sends them for commands.run(cmd, {envs, cwd})
        upload("sub/x.txt", "inside");
        f = run("{\"process\":{\"cmd\":\"/bin/bash\",\"args\":[\"-l\",\"-c\",\"echo $FOO; cat x.txt\"],"
                + "\"envs\":{\"FOO\":\"b'a r\"},\"cwd\":\"/home/user/sub\"},\"stdin\":false}");
        assertEquals("b'a r\ninside", stdout(f, "stdout"));
        f = run("{\"process\":{\"cmd\":\"ls\",\"args\":[\"-1\"],\"cwd\":\"/home/user/missing\"}}");
        assertEquals(1, f.size());
        assertEquals("invalid_argument", f.get(0).json.path("error").path("code").asText());
        assertEquals("cwd '/home/user/missing' does not exist", f.get(0).json.path("error").path("message").asText());
        killSandbox();
    }

    private List<Frame> run(String request) throws IOException {
        try (Response r = http.newCall(start(id, token, request).header("Connect-Timeout-Ms", "30000").build()).execute()) {
            assertEquals(200, r.code());
            return readAll(r.body().byteStream());
        }
    }

    private void upload(String path, String content) throws IOException {
        Request upload = envd(id, token, "/files?path=" + path)
                .post(RequestBody.create(content, MediaType.get("application/octet-stream"))).build();
        try (Response r = http.newCall(upload).execute()) {
            assertEquals(200, r.code(), r.body().string());
        }
    }

    @Test
    void connectTimeoutIsTheBudget() throws IOException {
        Request start = start(id, token, "{\"process\":{\"cmd\":\"/bin/bash\",\"args\":[\"-l\",\"-c\",\"echo begun; sleep 30\"]},\"stdin\":false}")
                .header("Connect-Timeout-Ms", "700").build();
        try (Response r = http.newCall(start).execute()) {
            List<Frame> frames = readAll(r.body().byteStream());
            Frame last = frames.get(frames.size() - 1);
            assertEquals(2, last.flags);
            assertEquals("deadline_exceeded", last.json.path("error").path("code").asText(), frames.toString());
            assertEquals("begun\n", stdout(frames, "stdout"), "output before the deadline is kept");
        }
        assertEquals(java.time.Duration.ofMillis(700), workspaces.last().executions.get(0).budget());
        killSandbox();
    }

    @Test
    void outputStreamsWhileTheCommandRuns() throws IOException {
        Request start = start(id, token, "{\"process\":{\"cmd\":\"/bin/bash\",\"args\":[\"-c\",\"echo early; sleep 30\"]}}")
                .header("Connect-Timeout-Ms", "60000").build();
        try (Response r = http.newCall(start).execute()) {
            InputStream in = r.body().byteStream();
            assertNotNull(readFrame(in).json.path("event").get("start"));
            Frame data = readFrame(in); // arrives while the command still sleeps
            assertEquals("early\n", stdout(List.of(data), "stdout"));
        }
        killSandbox();
    }

    @Test
    void aFloodNobodyStopsIsKilledAtTheEmulatorsCap() throws IOException {
        killSandbox();
        emulator.close();
        emulator = E2bEmulator.builder().apiKey(KEY).machines(workspaces).hardCapBytes(256 * 1024).build();
        sandbox();
        Request start = start(id, token, "{\"process\":{\"cmd\":\"python3\",\"args\":[\"-c\",\"while True: print('y' * 1000)\"]}}")
                .header("Connect-Timeout-Ms", "60000").build();
        try (Response r = http.newCall(start).execute()) {
            List<Frame> frames = readAll(r.body().byteStream());
            assertEquals("signal: killed", end(frames).get("status").asText());
            int bytes = stdout(frames, "stdout").length();
            assertTrue(bytes > 256 * 1024 && bytes < 64 * 1024 * 1024, "streamed " + bytes + " bytes");
        }
        killSandbox();
    }

    @Test
    void keepalivesFlowWhileTheCommandIsQuiet() throws IOException {
        Request start = start(id, token, "{\"process\":{\"cmd\":\"sleep\",\"args\":[\"1.5\"]}}")
                .header("Keepalive-Ping-Interval", "1").header("Connect-Timeout-Ms", "20000").build();
        try (Response r = http.newCall(start).execute()) {
            List<Frame> frames = readAll(r.body().byteStream());
            assertTrue(frames.stream().anyMatch(fr -> fr.json.path("event").has("keepalive")), frames.toString());
            assertEquals("exit status 0", end(frames).get("status").asText());
        }
        killSandbox();
    }

    @Test
    void sendSignalKillsARunningCommand() throws IOException {
        Request start = start(id, token, "{\"process\":{\"cmd\":\"/bin/bash\",\"args\":[\"-l\",\"-c\",\"sleep 30\"]},\"stdin\":false}").build();
        try (Response r = http.newCall(start).execute()) {
            InputStream in = r.body().byteStream();
            Frame first = readFrame(in);
            int pid = first.json.path("event").path("start").get("pid").asInt();
            Request kill = envd(id, token, "/process.Process/SendSignal").header("Connect-Protocol-Version", "1")
                    .post(json("{\"process\":{\"pid\":" + pid + "},\"signal\":\"SIGNAL_SIGKILL\"}")).build();
            try (Response k = http.newCall(kill).execute()) {
                assertEquals(200, k.code());
                assertEquals(JSON.createObjectNode(), JSON.readTree(k.body().string()));
            }
            List<Frame> rest = readAll(in);
            assertEquals(JSON.readTree("{\"exitCode\":-1,\"status\":\"signal: killed\",\"error\":\"signal: killed\"}"), end(rest));
            assertEquals(2, rest.get(rest.size() - 1).flags);
            try (Response k = http.newCall(kill).execute()) {
                assertEquals(404, k.code());
                JsonNode err = JSON.readTree(k.body().string());
                assertEquals("not_found", err.get("code").asText());
                assertEquals("process with pid " + pid + " not found", err.get("message").asText());
            }
        }
        Request bad = envd(id, token, "/process.Process/SendSignal")
                .post(json("{\"process\":{\"pid\":1},\"signal\":\"SIGNAL_SIGHUP\"}")).build();
        try (Response k = http.newCall(bad).execute()) {
            assertEquals(501, k.code());
            assertEquals("unimplemented", JSON.readTree(k.body().string()).get("code").asText());
        }
        // the sandbox still runs commands after a kill
        assertEquals("again\n", stdout(run("{\"process\":{\"cmd\":\"echo\",\"args\":[\"again\"]}}"), "stdout"));
        killSandbox();
    }

    @Test
    void filesOutliveAKilledCommandEvenWhenTheLocalSandboxTearsItselfDown() throws IOException {
        workspaces.closeOnInterrupt = true;
        workspaces.last().closeOnInterrupt = true;
        upload("keep.txt", "kept");
        upload("/tmp/also.txt", "also");
        Request start = start(id, token, "{\"process\":{\"cmd\":\"sleep\",\"args\":[\"30\"]}}").build();
        try (Response r = http.newCall(start).execute()) {
            InputStream in = r.body().byteStream();
            int pid = readFrame(in).json.path("event").path("start").get("pid").asInt();
            Request kill = envd(id, token, "/process.Process/SendSignal")
                    .post(json("{\"process\":{\"pid\":" + pid + "},\"signal\":\"SIGNAL_SIGKILL\"}")).build();
            try (Response k = http.newCall(kill).execute()) {
                assertEquals(200, k.code());
            }
            assertEquals(-1, end(readAll(in)).get("exitCode").asInt());
        }
        assertEquals(2, workspaces.opened.size(), "the torn-down workspace was replaced");
        assertTrue(workspaces.opened.get(0).isClosed());
        assertEquals("kept also", stdout(run("{\"process\":{\"cmd\":\"/bin/bash\",\"args\":[\"-c\",\"echo -n $(cat keep.txt) $(cat /tmp/also.txt)\"]}}"), "stdout"));
        killSandbox();
    }

    @Test
    void theAccessTokenGuardsEveryRouteButHealthAndSignedFiles() throws Exception {
        for (String t : new String[] {null, "wrong"}) {
            try (Response r = http.newCall(start(id, t, "{\"process\":{\"cmd\":\"true\"}}").build()).execute()) {
                assertEquals(401, r.code());
                assertEquals("application/json; charset=utf-8", r.header("Content-Type"));
                assertEquals(JSON.readTree("{\"code\":401,\"message\":\"" + Envd.UNAUTHORIZED + "\"}"),
                        JSON.readTree(r.body().string()));
            }
        }
        assertTrue(workspaces.last().executions.isEmpty(), "nothing ran without the token");
        try (Response r = http.newCall(envd(id, null, "/health").get().build()).execute()) {
            assertEquals(204, r.code());
        }
        RequestBody body = RequestBody.create("data", MediaType.get("application/octet-stream"));
        try (Response r = http.newCall(envd(id, "wrong", "/files?path=a.txt").post(body).build()).execute()) {
            assertEquals(401, r.code());
            assertEquals("access token present in header but does not match", JSON.readTree(r.body().string()).get("message").asText());
        }
        try (Response r = http.newCall(envd(id, null, "/files?path=a.txt").post(body).build()).execute()) {
            assertEquals(401, r.code());
            assertEquals("missing signature query parameter", JSON.readTree(r.body().string()).get("message").asText());
        }
        // a pre-signed URL: v1_ + base64(sha256("path:operation:user:token")) without padding
        byte[] hash = MessageDigest.getInstance("SHA-256").digest(("a.txt:write::" + token).getBytes(StandardCharsets.UTF_8));
        String signature = "v1_" + Base64.getEncoder().withoutPadding().encodeToString(hash);
        try (Response r = http.newCall(envd(id, null, "/files?path=a.txt&signature=" + signature.replace("+", "%2B").replace("/", "%2F")).post(body).build()).execute()) {
            assertEquals(200, r.code());
        }
        try (Response r = http.newCall(envd(id, null, "/files?path=a.txt&signature=v1_forged").post(body).build()).execute()) {
            assertEquals(401, r.code());
            assertEquals("invalid signature", JSON.readTree(r.body().string()).get("message").asText());
        }
        try (Response r = http.newCall(envd(id, token, "/files?path=a.txt").get().build()).execute()) {
            assertEquals(200, r.code());
            assertEquals("data", r.body().string());
        }
        killSandbox();
    }

    @Test
    void uploadsAsTheSdkSendsThem() throws IOException {
        // writeFiles([...]): several 'file' parts, each named by its path, no path query; other fields skipped
        String boundary = "b0undary";
        String multipart = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a/one.txt\"\r\n\r\n1\r\n"
                + "--" + boundary + "\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nignored\r\n"
                + "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"/home/user/two.bin\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\n\u0000\u0001\r\n--" + boundary + "--\r\n";
        Request upload = envd(id, token, "/files")
                .post(RequestBody.create(multipart.getBytes(StandardCharsets.ISO_8859_1), MediaType.get("multipart/form-data; boundary=" + boundary))).build();
        try (Response r = http.newCall(upload).execute()) {
            assertEquals(200, r.code());
            JsonNode entries = JSON.readTree(r.body().string());
            assertEquals("/home/user/a/one.txt", entries.get(0).get("path").asText());
            assertEquals("/home/user/two.bin", entries.get(1).get("path").asText());
            assertEquals(2, entries.size());
        }
        assertArrayEquals(new byte[] {0, 1}, java.nio.file.Files.readAllBytes(workspaces.last().workDirectory().resolve("two.bin")));

        // octet-stream with gzip, as files.write(path, data, {gzip: true}) sends it
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (GZIPOutputStream z = new GZIPOutputStream(gz)) {
            z.write("zipped".getBytes(StandardCharsets.UTF_8));
        }
        Request zipped = envd(id, token, "/files?path=~%2Fz.txt").header("Content-Encoding", "gzip")
                .post(RequestBody.create(gz.toByteArray(), MediaType.get("application/octet-stream"))).build();
        try (Response r = http.newCall(zipped).execute()) {
            assertEquals(200, r.code());
            assertEquals("/home/user/z.txt", JSON.readTree(r.body().string()).get(0).get("path").asText());
        }
        Request wrongType = envd(id, token, "/files?path=x").post(RequestBody.create("x", MediaType.get("text/plain"))).build();
        try (Response r = http.newCall(wrongType).execute()) {
            assertEquals(400, r.code());
        }
        Request noPath = envd(id, token, "/files").post(RequestBody.create("x", MediaType.get("application/octet-stream"))).build();
        try (Response r = http.newCall(noPath).execute()) {
            assertEquals(400, r.code());
            assertEquals("path query parameter is required for raw body upload", JSON.readTree(r.body().string()).get("message").asText());
        }
        killSandbox();
    }

    @Test
    void theProxyAnswersForUnknownSandboxesAndClosedPorts() throws IOException {
        try (Response r = http.newCall(envd("inosuchsandbox0000000", token, "/health").get().build()).execute()) {
            assertEquals(502, r.code());
            assertEquals(JSON.readTree("{\"sandboxId\":\"inosuchsandbox0000000\",\"message\":\"The sandbox was not found\",\"code\":502}"),
                    JSON.readTree(r.body().string()));
        }
        Request interpreter = new Request.Builder().url(url("/execute")).header("E2b-Sandbox-Id", id)
                .header("E2b-Sandbox-Port", "49999").post(json("{\"code\":\"print(1)\"}")).build();
        try (Response r = http.newCall(interpreter).execute()) {
            assertEquals(502, r.code(), "the base template runs no code interpreter");
            assertEquals("The sandbox is running but port is not open", JSON.readTree(r.body().string()).get("message").asText());
        }
        // the direct host form <port>-<id>.<domain> routes without headers
        Request direct = new Request.Builder().url(url("/process.Process/Start")).header("Host", "49983-" + id + ".e2b.local")
                .header("X-Access-Token", token).post(startBody("{\"process\":{\"cmd\":\"echo\",\"args\":[\"direct\"]}}")).build();
        try (Response r = http.newCall(direct).execute()) {
            assertEquals("direct\n", stdout(readAll(r.body().byteStream()), "stdout"));
        }
        killSandbox();
        try (Response r = http.newCall(envd(id, token, "/health").get().build()).execute()) {
            assertEquals(502, r.code(), "a killed sandbox is gone");
        }
    }

    @Test
    void badRequestsEndTheStreamWithConnectErrors() throws IOException {
        List<Frame> f = run("{\"process\":{}}");
        assertEquals("invalid_argument", f.get(0).json.path("error").path("code").asText());
        Request compressed = envd(id, token, "/process.Process/Start")
                .post(RequestBody.create(new byte[] {1, 0, 0, 0, 2, '{', '}'}, CONNECT_JSON)).build();
        try (Response r = http.newCall(compressed).execute()) {
            Frame only = readFrame(r.body().byteStream());
            assertEquals(2, only.flags);
            assertEquals("internal", only.json.path("error").path("code").asText());
        }
        Request notConnect = envd(id, token, "/process.Process/Start").post(json("{}")).build();
        try (Response r = http.newCall(notConnect).execute()) {
            assertEquals(415, r.code());
        }
        Request badTimeout = start(id, token, "{\"process\":{\"cmd\":\"true\"}}").header("Connect-Timeout-Ms", "soon").build();
        try (Response r = http.newCall(badTimeout).execute()) {
            assertEquals("invalid_argument", readFrame(r.body().byteStream()).json.path("error").path("code").asText());
        }
        assertTrue(workspaces.last().executions.isEmpty());
        killSandbox();
    }

    // ------------------------------------------------------------------ faults on the stream

    @Test
    void aDroppedStreamEndsWithoutEndOfStream() throws IOException {
        emulator.faults().dropStream(1);
        Request start = start(id, token, "{\"process\":{\"cmd\":\"/bin/bash\",\"args\":[\"-l\",\"-c\",\"echo first; echo second\"]}}").build();
        try (Response r = http.newCall(start).execute()) {
            InputStream in = r.body().byteStream();
            assertNotNull(readFrame(in).json.path("event").get("start"));
            Frame data = readFrame(in);
            assertTrue(data.json.path("event").has("data"), data.toString());
            assertThrows(IOException.class, () -> readAll(in), "the connection is cut, not ended");
        }
        assertEquals("ok\n", stdout(run("{\"process\":{\"cmd\":\"echo\",\"args\":[\"ok\"]}}"), "stdout"), "one drop only");
        killSandbox();
    }

    @Test
    void killingTheSandboxCutsItsStreams() throws IOException {
        Request start = start(id, token, "{\"process\":{\"cmd\":\"sleep\",\"args\":[\"30\"]}}").build();
        try (Response r = http.newCall(start).execute()) {
            InputStream in = r.body().byteStream();
            assertNotNull(readFrame(in));
            killSandbox();
            assertThrows(IOException.class, () -> readAll(in));
        }
    }

    @Test
    void hostileFramesAreSentLazily() throws IOException {
        emulator.faults().hostileFraming(true);
        try (Response r = http.newCall(start(id, token, "{\"process\":{\"cmd\":\"true\"}}").build()).execute()) {
            InputStream in = r.body().byteStream();
            assertNotNull(readFrame(in).json.path("event").get("start"));
            Frame hostile = readFrame(in);
            assertEquals(0, hostile.flags);
            assertEquals(0xFFFFFFFFL, hostile.length);
            assertNull(hostile.json);
        }
        emulator.hostileFrame(E2bEmulator.HostileFrame.GIGABYTE_FRAME);
        try (Response r = http.newCall(start(id, token, "{\"process\":{\"cmd\":\"true\"}}").build()).execute()) {
            InputStream in = r.body().byteStream();
            readFrame(in);
            Frame hostile = readFrame(in);
            assertEquals(1L << 30, hostile.length);
            byte[] some = readUpTo(in, 1 << 20);
            assertEquals(1 << 20, some.length, "the gigabyte keeps coming until the client leaves");
            assertFalse(new String(some, 0, 40, StandardCharsets.US_ASCII).isBlank());
        }
        emulator.faults().reset();
        killSandbox();
    }
}
