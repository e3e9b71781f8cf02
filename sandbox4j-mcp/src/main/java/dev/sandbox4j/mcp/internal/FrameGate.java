package dev.sandbox4j.mcp.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stands between the client's stream and the MCP SDK's stdio transport, which stops answering after a
 * frame it cannot read. Each line is checked here first: invalid JSON is answered {@code -32700}, a
 * frame that is not a JSON-RPC 2.0 request, notification or response (a batch, {@code "id": null}, no
 * method) {@code -32600}, a {@code tools/call} whose params do not have the shape the protocol gives
 * them {@code -32602}; only well-formed frames reach the SDK, so the next frame is always served. A
 * {@code tools/call} is tagged with its request id (in {@code params._meta}, replacing anything the
 * client put under that key) so its handler can be found by {@code notifications/cancelled}. At the end
 * of the client's stream every running call is cancelled, then the SDK sees the end too.
 */
public final class FrameGate {
    /** The {@code _meta} key the gate sets on each {@code tools/call}: the request's id as JSON text. */
    public static final String REQUEST_ID_META = "dev.sandbox4j/request-id";

    static final int MAX_FRAME_BYTES = 16 * 1024 * 1024;
    private static final Logger LOG = LoggerFactory.getLogger(FrameGate.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final InputStream client;
    private final LineWriter out;
    private final Calls calls;
    private final Pipe pipe;

    private FrameGate(InputStream client, LineWriter out, Calls calls) throws IOException {
        this.client = client;
        this.out = out;
        this.calls = calls;
        this.pipe = Pipe.open();
    }

    /**
     * Starts the gate on a thread of its own.
     *
     * @return the stream the SDK's transport reads: the checked frames
     */
    public static InputStream start(InputStream client, LineWriter out, Calls calls) {
        try {
            FrameGate gate = new FrameGate(new BufferedInputStream(client), out, calls);
            Thread t = new Thread(gate::pump, "sandbox4j-mcp-frames");
            t.setDaemon(true);
            t.start();
            return Channels.newInputStream(gate.pipe.source());
        } catch (IOException e) {
            throw new IllegalStateException("cannot open the frame pipe", e);
        }
    }

    private void pump() {
        OutputStream toSdk = Channels.newOutputStream(pipe.sink());
        try {
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            boolean tooLong = false;
            while (true) {
                int b = client.read();
                if (b < 0) {
                    break;
                }
                if (b != '\n') {
                    if (line.size() < MAX_FRAME_BYTES) {
                        line.write(b);
                    } else {
                        tooLong = true;
                    }
                    continue;
                }
                if (tooLong) {
                    out.writeLine(error(null, -32600, "Invalid Request: a frame is at most " + MAX_FRAME_BYTES + " bytes"));
                } else {
                    String checked = check(line.toString(StandardCharsets.UTF_8));
                    if (checked != null) {
                        toSdk.write((checked + "\n").getBytes(StandardCharsets.UTF_8));
                        toSdk.flush();
                    }
                }
                line.reset();
                tooLong = false;
            }
        } catch (IOException e) {
            LOG.info("the client's stream ended with an error: {}", e.toString());
        } finally {
            // the client is gone: nobody waits for a running call's answer
            calls.cancelAll();
            try {
                toSdk.close();
            } catch (IOException e) {
                LOG.debug("closing the frame pipe", e);
            }
        }
    }

    /** The frame to hand the SDK, or null when it was answered here. */
    String check(String text) throws IOException {
        if (text.endsWith("\r")) {
            text = text.substring(0, text.length() - 1);
        }
        if (text.isBlank()) {
            return null;
        }
        JsonNode frame;
        try {
            frame = JSON.readTree(text);
        } catch (JsonProcessingException e) {
            out.writeLine(error(null, -32700, "Parse error: the frame is not valid JSON"));
            return null;
        }
        if (frame == null || frame.isArray()) {
            out.writeLine(error(null, -32600, "Invalid Request: batches are not supported; send one object per line"));
            return null;
        }
        if (!frame.isObject()) {
            out.writeLine(error(null, -32600, "Invalid Request: a frame must be a JSON object"));
            return null;
        }
        JsonNode id = frame.get("id");
        boolean hasId = frame.has("id");
        boolean validId = hasId && (id.isTextual() || id.isIntegralNumber());
        JsonNode replyId = validId ? id : null;
        if (!"2.0".equals(frame.path("jsonrpc").asText(null)) || !frame.path("jsonrpc").isTextual()) {
            out.writeLine(error(replyId, -32600, "Invalid Request: \"jsonrpc\" must be \"2.0\""));
            return null;
        }
        if (hasId && !validId) {
            out.writeLine(error(null, -32600, "Invalid Request: \"id\" must be a string or an integer"));
            return null;
        }
        JsonNode method = frame.get("method");
        if (method == null) {
            if (hasId && (frame.has("result") || frame.has("error"))) {
                return text; // a response to one of the server's own requests
            }
            out.writeLine(error(replyId, -32600, "Invalid Request: \"method\" is missing"));
            return null;
        }
        if (!method.isTextual()) {
            out.writeLine(error(replyId, -32600, "Invalid Request: \"method\" must be a string"));
            return null;
        }
        JsonNode params = frame.get("params");
        if (params != null && !params.isObject()) {
            if (hasId) {
                out.writeLine(error(id, -32602, "Invalid params: \"params\" must be an object"));
            }
            return null;
        }
        switch (method.asText()) {
            case "notifications/cancelled":
                if (params != null && params.has("requestId")) {
                    calls.cancel(params.get("requestId").toString());
                }
                return text;
            case "tools/call":
                if (!hasId) {
                    return null; // a call sent as a notification has nobody to answer
                }
                if (params == null || !params.path("name").isTextual()) {
                    out.writeLine(error(id, -32602, "Invalid params: \"params.name\" must be the tool's name, a string"));
                    return null;
                }
                JsonNode args = params.get("arguments");
                if (args != null && !args.isNull() && !args.isObject()) {
                    out.writeLine(error(id, -32602, "Invalid params: \"params.arguments\" must be an object, "
                            + "such as {\"code\": \"print(1)\"}"));
                    return null;
                }
                JsonNode meta = params.get("_meta");
                if (meta != null && !meta.isObject()) {
                    out.writeLine(error(id, -32602, "Invalid params: \"params._meta\" must be an object"));
                    return null;
                }
                ObjectNode tagged = ((ObjectNode) params).with("_meta");
                tagged.put(REQUEST_ID_META, id.toString());
                return JSON.writeValueAsString(frame);
            default:
                return text;
        }
    }

    static String error(JsonNode id, int code, String message) {
        ObjectNode frame = JSON.createObjectNode();
        frame.put("jsonrpc", "2.0");
        if (id == null) {
            frame.putNull("id");
        } else {
            frame.set("id", id);
        }
        ObjectNode error = frame.putObject("error");
        error.put("code", code);
        error.put("message", message);
        return frame.toString();
    }
}
