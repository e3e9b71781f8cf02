package dev.sandbox4j.emulators.e2b;

import dev.sandbox4j.emulators.EmulatorOptions;
import dev.sandbox4j.emulators.HttpEmulator;
import java.io.PrintStream;
import java.util.concurrent.CountDownLatch;

/**
 * Serves the E2B emulator on a loopback port until killed.
 *
 * <pre>
 * java -cp ... dev.sandbox4j.emulators.e2b.E2bEmulatorMain [--port N] [--trace] [--debug-sandbox]
 *     [--instant] [--create-delay-ms N]
 * </pre>
 *
 * The port comes from {@code --port}, else {@code E2B_EMULATOR_PORT}, else a free one. The API key is
 * {@code E2B_API_KEY} when it is set (it must start with {@code e2b_}); otherwise one is generated and
 * printed. The first line printed is {@code E2B emulator listening on <url>}, followed by the
 * variables that point the official SDKs (and sandbox4j's E2B runner) at it. At shutdown it prints
 * the ledger and the request counts ({@link HttpEmulator#requestsLine()}), then destroys whatever is still
 * alive; while it runs, {@code GET <url>/_emulator/requests} serves the counts as JSON. {@code --instant}
 * runs no code ({@link E2bEmulator.Builder#instant}); {@code --create-delay-ms N} answers every create
 * N ms late.
 *
 * @since 0.1.0
 */
public final class E2bEmulatorMain {
    private E2bEmulatorMain() {
    }

    /**
     * Starts the emulator, prints its URL and the variables for the SDKs, and waits until the JVM is
     * shut down. A bad argument or {@code E2B_API_KEY} prints the usage and exits with status 2.
     *
     * @param args the command-line options described on this class
     * @throws Exception if the emulator cannot start (for instance its port cannot be bound) or the
     *         wait for shutdown is interrupted
     */
    public static void main(String[] args) throws Exception {
        PrintStream out = System.out;
        EmulatorOptions options;
        try {
            options = EmulatorOptions.parse(args);
        } catch (IllegalArgumentException e) {
            usage(e.getMessage());
            return;
        }
        args = options.restArray();
        int port = parsePort(System.getenv("E2B_EMULATOR_PORT"), 0);
        boolean trace = false;
        boolean debugSandbox = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--port":
                    if (i + 1 >= args.length) {
                        usage("--port needs a number");
                    }
                    port = parsePort(args[++i], -1);
                    break;
                case "--trace":
                    trace = true;
                    break;
                case "--debug-sandbox":
                    debugSandbox = true;
                    break;
                default:
                    usage("unknown argument " + args[i]);
            }
        }
        String key = System.getenv("E2B_API_KEY");
        boolean generated = key == null || key.isBlank();
        if (generated) {
            key = "e2b_" + E2bEmulator.randomId(40);
        } else if (!key.startsWith("e2b_")) {
            usage("E2B_API_KEY must start with e2b_ (as E2B's keys do)");
        }
        E2bEmulator emulator = E2bEmulator.builder().port(port).apiKey(key).trace(trace).debugSandbox(debugSandbox)
                .instant(options.instant()).build();
        options.applyTo(emulator.faults());
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            out.println("E2B emulator stopping; ledger: created=" + emulator.ledger().created() + " destroyed="
                    + emulator.ledger().destroyed() + " live=" + emulator.ledger().live());
            out.println(emulator.requestsLine());
            out.flush();
            emulator.close();
            stopped.countDown();
        }, "E2bEmulator-shutdown"));
        String url = emulator.baseUrl();
        out.println("E2B emulator listening on " + url);
        out.println("export E2B_API_URL=" + url);
        out.println("export E2B_SANDBOX_URL=" + url);
        if (generated) {
            out.println("export E2B_API_KEY=" + key); // a key for this local emulator only
        }
        out.println("# " + options.describe() + "; request counts at " + url + HttpEmulator.REQUESTS_PATH);
        out.flush();
        stopped.await();
    }

    private static int parsePort(String s, int fallback) {
        if (s == null || s.isBlank()) {
            if (fallback < 0) {
                usage("--port needs a number");
            }
            return fallback;
        }
        try {
            int p = Integer.parseInt(s.trim());
            if (p < 0 || p > 65535) {
                usage("port out of range: " + s);
            }
            return p;
        } catch (NumberFormatException e) {
            usage("not a port: " + s);
            return -1;
        }
    }

    private static void usage(String problem) {
        System.err.println(problem);
        System.err.println("usage: E2bEmulatorMain [--port N] [--trace] [--debug-sandbox] " + EmulatorOptions.USAGE + "   (env: E2B_EMULATOR_PORT, E2B_API_KEY)");
        System.exit(2);
    }
}
