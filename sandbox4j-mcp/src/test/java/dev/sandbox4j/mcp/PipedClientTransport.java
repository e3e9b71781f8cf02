package dev.sandbox4j.mcp;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import reactor.core.publisher.Mono;

/**
 * The SDK's client over in-process pipes: newline-delimited JSON-RPC, as the stdio transports frame it.
 * Only the pipe is ours; the framing of each message (serialize, deserialize) is the SDK's, and every
 * line the server wrote is kept so a test can check that each one is a protocol frame.
 */
final class PipedClientTransport implements McpClientTransport {
    private final McpJsonMapper json = McpJsonDefaults.getMapper();
    private final BufferedReader fromServer;
    private final OutputStream toServer;
    final List<String> serverLines = new CopyOnWriteArrayList<>();
    final List<String> unreadable = new CopyOnWriteArrayList<>();

    PipedClientTransport(InputStream fromServer, OutputStream toServer) {
        this.fromServer = new BufferedReader(new InputStreamReader(fromServer, StandardCharsets.UTF_8));
        this.toServer = toServer;
    }

    @Override
    public Mono<Void> connect(Function<Mono<McpSchema.JSONRPCMessage>, Mono<McpSchema.JSONRPCMessage>> handler) {
        Thread reader = new Thread(() -> {
            try {
                for (String line; (line = fromServer.readLine()) != null; ) {
                    serverLines.add(line);
                    McpSchema.JSONRPCMessage message;
                    try {
                        message = McpSchema.deserializeJsonRpcMessage(json, line);
                    } catch (IOException | RuntimeException e) {
                        unreadable.add(line);
                        continue;
                    }
                    handler.apply(Mono.just(message)).subscribe();
                }
            } catch (IOException e) {
                // the pipe closed: the test is over
            }
        }, "mcp-test-client-reader");
        reader.setDaemon(true);
        reader.start();
        return Mono.empty();
    }

    @Override
    public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
        return Mono.fromRunnable(() -> {
            try {
                byte[] frame = (json.writeValueAsString(message) + "\n").getBytes(StandardCharsets.UTF_8);
                synchronized (toServer) {
                    toServer.write(frame);
                    toServer.flush();
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    @Override
    public Mono<Void> closeGracefully() {
        return Mono.fromRunnable(() -> {
            try {
                toServer.close();
            } catch (IOException e) {
                // already closed
            }
        });
    }

    @Override
    public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
        return json.convertValue(data, typeRef);
    }
}
