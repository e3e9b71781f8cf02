package dev.sandbox4j.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox4j.policy.EgressPolicy;
import io.modelcontextprotocol.server.McpSyncServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Raw frames against the server: what a careless or hostile client sends, and that the next frame is served. */
class McpFramesTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long ANSWER_SECONDS = 60; // an upper bound, not a timing: the machine is shared

    private LocalRunnerFixture local;
    private SandboxMcpServer sandbox;
    private McpSyncServer server;
    private OutputStream toServer;
    private final BlockingQueue<String> fromServer = new LinkedBlockingQueue<>();
    private final Map<String, JsonNode> answers = new HashMap<>();

    @BeforeEach
    void start() throws Exception {
        local = new LocalRunnerFixture();
        sandbox = SandboxMcpServer.builder(local.runner()).egress(EgressPolicy.denyAll())
                .defaultBudget(Duration.ofSeconds(10)).maxBudget(Duration.ofSeconds(60)).build();
        Pipe in = Pipe.open();
        Pipe out = Pipe.open();
        server = sandbox.serve(Channels.newInputStream(in.source()), Channels.newOutputStream(out.sink()));
        toServer = Channels.newOutputStream(in.sink());
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(Channels.newInputStream(out.source()), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    fromServer.add(line);
                }
            } catch (Exception e) {
                fromServer.add("reader failed: " + e);
            }
        }, "frames-reader");
        reader.setDaemon(true);
        reader.start();
        send("{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                + "\"capabilities\":{},\"clientInfo\":{\"name\":\"frames-test\",\"version\":\"1\"}}}");
        answer("\"init\"");
        send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    }

    @AfterEach
    void stop() throws Exception {
        toServer.close();
        server.closeGracefully();
        local.close();
    }

    private void send(String frame) throws Exception {
        toServer.write((frame + "\n").getBytes(StandardCharsets.UTF_8));
        toServer.flush();
    }

    /** The next frame answering {@code id} (its JSON text, "null" for an answer without an id). */
    private JsonNode answer(String id) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ANSWER_SECONDS);
        while (!answers.containsKey(id)) {
            String line = fromServer.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            assertNotNull(line, "no answer to " + id + "; got " + answers.keySet());
            JsonNode frame = JSON.readTree(line);
            assertEquals("2.0", frame.path("jsonrpc").asText(), line);
            if (frame.has("id")) {
                answers.put(frame.get("id").toString(), frame);
            }
        }
        return answers.remove(id);
    }

    private void pingIsServed(int id) throws Exception {
        send("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"ping\"}");
        JsonNode pong = answer(String.valueOf(id));
        assertTrue(pong.has("result"), pong.toString());
    }

    private static String call(String id, String arguments) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\",\"arguments\":"
                + arguments + "}}";
    }

    private void aSandboxIsRunning() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ANSWER_SECONDS);
        while (local.leftovers() == 0) {
            assertTrue(System.nanoTime() < deadline, "the call's sandbox never appeared");
            Thread.sleep(10); // polling a condition under a deadline
        }
    }

    @Test
    void invalidJsonIsAParseErrorAndTheNextFrameIsServed() throws Exception {
        for (String junk : new String[] {"not json", "{\"jsonrpc\":\"2.0\",\"id\":1,", "\u0000\u0001"}) {
            send(junk);
            JsonNode e = answer("null");
            assertEquals(-32700, e.at("/error/code").asInt(), e.toString());
            pingIsServed(1);
        }
    }

    @Test
    void framesThatAreNotRequestsAreInvalidRequestsAndTheNextFrameIsServed() throws Exception {
        String[][] frames = {{"[{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}]", "null"},
                {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", "null"}, {"42", "null"},
                {"{\"id\":5,\"method\":\"ping\"}", "5"}, {"{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"ping\"}", "null"},
                {"{\"jsonrpc\":\"2.0\",\"id\":5}", "5"}, {"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":7}", "5"}};
        for (String[] frame : frames) {
            send(frame[0]);
            JsonNode e = answer(frame[1]);
            assertEquals(-32600, e.at("/error/code").asInt(), frame[0] + " -> " + e);
            pingIsServed(2);
        }
    }

    @Test
    void paramsOfTheWrongShapeAreInvalidParamsWithAPlainMessage() throws Exception {
        for (String args : new String[] {"\"print(1)\"", "[1]", "7"}) {
            send(call("9", args));
            JsonNode e = answer("9");
            assertEquals(-32602, e.at("/error/code").asInt(), e.toString());
            String message = e.at("/error/message").asText();
            assertTrue(message.contains("arguments") && !message.contains("jackson") && !message.contains("Exception"), message);
            pingIsServed(3);
        }
        send("{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":\"x\"}");
        assertEquals(-32602, answer("10").at("/error/code").asInt());
        send(call("11", "{\"code\":\"print(6*7)\"}"));
        JsonNode ran = answer("11");
        assertTrue(ran.at("/result/content/0/text").asText().contains("\n42\n"), ran.toString());
    }

    @Test
    void argumentsOutsideTheAdvertisedSchemaAreRefused() throws Exception {
        for (String args : new String[] {"{\"code\":\"print(1)\",\"timeoutSeconds\":-5}", "{\"code\":\"print(1)\",\"timeoutSeconds\":0}",
                "{\"code\":\"print(1)\",\"timeoutSeconds\":\"soon\"}", "{\"code\":1}", "{}", "{\"code\":\"1\",\"language\":\"cobol\"}"}) {
            send(call("12", args));
            JsonNode r = answer("12").path("result");
            assertTrue(r.path("isError").asBoolean(), args + " -> " + r);
            assertTrue(r.at("/content/0/text").asText().endsWith("Nothing ran."), r.toString());
        }
        assertEquals(0, local.leftovers());
    }

    @Test
    void aCancelledCallStopsItsSandboxAtOnceAndSaysSo() throws Exception {
        send(call("\"long\"", "{\"code\":\"import time\\ntime.sleep(55)\",\"timeoutSeconds\":55}"));
        aSandboxIsRunning();
        long sent = System.nanoTime();
        send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"long\",\"reason\":\"user\"}}");
        JsonNode r = answer("\"long\"").path("result");
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - sent);
        assertTrue(seconds < 45, "stopped long before the 55 s sleep ended: " + seconds + " s");
        assertEquals("cancelled", r.at("/structuredContent/status").asText(), r.toString());
        assertTrue(r.at("/content/0/text").asText().contains("cancelled"), r.toString());
        assertEquals(0, local.leftovers(), "the sandbox was torn down");
        pingIsServed(4);
        send(call("13", "{\"code\":\"print(1)\"}"));
        assertFalse(answer("13").at("/result/isError").asBoolean(), "the next call runs normally");
    }

    @Test
    void theEndOfStdinCancelsARunningCallAndTearsItsSandboxDown() throws Exception {
        send(call("14", "{\"code\":\"import time\\ntime.sleep(55)\",\"timeoutSeconds\":55}"));
        aSandboxIsRunning();
        toServer.close();
        assertTrue(sandbox.awaitIdle(Duration.ofSeconds(45)), "the call ended long before its 55 s sleep");
        assertEquals(0, local.leftovers(), "the sandbox was torn down");
    }
}
