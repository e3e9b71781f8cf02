package dev.sandbox4j.emulators.modal;

import com.sun.net.httpserver.HttpServer;
import dev.sandbox4j.emulators.EmulatorOptions;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * Serves the Modal emulator on loopback until killed, and prints what to export.
 *
 * <p>Usage: {@code ModalEmulatorMain [--port N] [--router-port N] [--inspect-port N] [--instant]
 * [--create-delay-ms N]} (0, the default, picks a free port). {@code --instant} runs no code
 * ({@link ModalEmulator.Builder#instant}); {@code --create-delay-ms N} answers every create N ms late. The credentials it accepts are {@code MODAL_TOKEN_ID} / {@code MODAL_TOKEN_SECRET}
 * when set, else {@code ak-emulator} / {@code as-emulator}. The first line is
 * {@code export MODAL_SERVER_URL=http://127.0.0.1:<port>}, then the token lines. A small HTTP endpoint
 * on loopback serves {@code GET /_emulator/record} (what the emulator received, {@link
 * ModalEmulator#recordJson}) and {@code POST /_emulator/faults?...} sets fault knobs (see {@link #setFaults});
 * {@code GET /_emulator/requests} the gRPC call counts ({@link ModalEmulator#callsJson}); on SIGTERM it
 * prints {@code ledger: ...} (as the clients left it) and {@code calls: total=N}, then destroys every sandbox.
 *
 * @since 0.1.0
 */
public final class ModalEmulatorMain {
    private ModalEmulatorMain() {
    }

    /**
     * Starts the emulator and its inspection endpoint, prints the exports, and waits until the JVM is
     * shut down (SIGTERM, SIGINT).
     *
     * @param args the options above; others are ignored
     * @throws IllegalArgumentException when a port or {@code --create-delay-ms} is not a number, a port is
     *         outside 0 to 65535, or the delay is negative
     * @throws IOException when a port cannot be bound
     * @throws InterruptedException when interrupted while waiting
     */
    public static void main(String[] args) throws Exception {
        Map<String, String> env = System.getenv();
        EmulatorOptions options = EmulatorOptions.parse(args);
        args = options.restArray();
        int port = intArg(args, "--port", 0);
        ModalEmulator.Builder b = ModalEmulator.builder().port(port).routerPort(intArg(args, "--router-port", 0))
                .instant(options.instant());
        String id = env.get("MODAL_TOKEN_ID");
        String secret = env.get("MODAL_TOKEN_SECRET");
        if (id != null && secret != null) {
            b.token(id, secret);
        }
        ModalEmulator emulator = b.build();
        options.applyTo(emulator.faults());
        HttpServer inspect = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(),
                intArg(args, "--inspect-port", 0)), 0);
        inspect.createContext("/_emulator/record", exchange -> {
            byte[] body = emulator.recordJson().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("content-type", "application/json");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        inspect.createContext("/_emulator/requests", exchange -> {
            byte[] body = emulator.callsJson().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("content-type", "application/json");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        inspect.createContext("/_emulator/faults", exchange -> {
            int status = 200;
            String answer;
            try {
                setFaults(emulator, exchange.getRequestURI().getRawQuery());
                answer = "ok";
            } catch (IllegalArgumentException e) {
                status = 400;
                answer = e.getMessage();
            }
            byte[] body = answer.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(status, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        inspect.start();
        print(emulator, "http://" + InetAddress.getLoopbackAddress().getHostAddress() + ":" + inspect.getAddress().getPort(),
                System.out);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            inspect.stop(0);
            // Counted before the emulator's own teardown, so a client that leaked shows live > 0.
            System.out.println("ledger: " + emulator.ledger());
            System.out.println("calls: total=" + emulator.callCount());
            emulator.close();
            System.out.flush();
            stopped.countDown();
        }, "ModalEmulator-shutdown"));
        stopped.await();
    }

    static void print(ModalEmulator emulator, String inspectUrl, PrintStream out) {
        out.println("export MODAL_SERVER_URL=" + emulator.serverUrl());
        out.println("export MODAL_TOKEN_ID=" + emulator.tokenId());
        out.println("export MODAL_TOKEN_SECRET=" + emulator.tokenSecret());
        out.println("# Modal emulator: control plane " + emulator.serverUrl() + ", command router on port "
                + emulator.routerPort() + " (plaintext on loopback)" + (emulator.instant() ? ", instant (no code runs)" : "")
                + "; call counts at " + inspectUrl + "/_emulator/requests; record at " + inspectUrl + "/_emulator/record");
        out.flush();
    }

    /**
     * Sets fault knobs from a query such as {@code failCreate=503:1&rateLimitCreate=1:2&loseCreateResponse=1
     * &dropStream=1&failTeardown=503:2} or {@code reset}, for conformance runs against the standalone emulator.
     */
    static void setFaults(ModalEmulator emulator, String query) {
        if (query == null || query.isEmpty()) {
            throw new IllegalArgumentException("no fault given");
        }
        for (String part : query.split("&")) {
            String[] kv = part.split("=", 2);
            String[] n = kv.length > 1 ? kv[1].split(":") : new String[0];
            try {
                switch (kv[0]) {
                    case "reset":
                        emulator.faults().reset();
                        break;
                    case "failCreate":
                        emulator.faults().failCreate(Integer.parseInt(n[0]), Integer.parseInt(n[1]));
                        break;
                    case "rateLimitCreate":
                        emulator.faults().rateLimitCreate(Integer.parseInt(n[0]), Integer.parseInt(n[1]));
                        break;
                    case "loseCreateResponse":
                        emulator.faults().loseCreateResponse(Integer.parseInt(n[0]));
                        break;
                    case "dropStream":
                        emulator.faults().dropStream(Integer.parseInt(n[0]));
                        break;
                    case "hostileFraming":
                        emulator.faults().hostileFraming(Boolean.parseBoolean(n[0]));
                        break;
                    case "failTeardown":
                        emulator.faults().failTeardown(Integer.parseInt(n[0]), Integer.parseInt(n[1]));
                        break;
                    default:
                        throw new IllegalArgumentException("unknown fault '" + kv[0] + "'");
                }
            } catch (ArrayIndexOutOfBoundsException | NumberFormatException e) {
                throw new IllegalArgumentException("bad fault '" + part + "'");
            }
        }
    }

    private static int intArg(String[] args, String name, int dflt) throws IOException {
        for (int i = 0; i < args.length - 1; i++) {
            if (args[i].equals(name)) {
                try {
                    return Integer.parseInt(args[i + 1]);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException(name + " must be a number, was '" + args[i + 1] + "'");
                }
            }
        }
        return dflt;
    }
}
