package dev.sandbox4j.emulators.vercel;

import dev.sandbox4j.emulators.EmulatorOptions;
import dev.sandbox4j.emulators.HttpEmulator;
import dev.sandbox4j.emulators.InstantMachine;
import dev.sandbox4j.emulators.Machine;
import dev.sandbox4j.emulators.LocalMachines;
import java.io.IOException;
import java.io.PrintStream;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * Serves the Vercel Sandbox emulator on loopback until killed.
 *
 * <p>Usage: {@code VercelEmulatorMain [--instant] [--create-delay-ms N] [port]} (or {@code VERCEL_EMULATOR_PORT}; 0 or nothing picks a free
 * port). The credentials it accepts come from the same variables the SDK and our adapter read:
 * {@code VERCEL_TOKEN}, {@code VERCEL_TEAM_ID}, {@code VERCEL_PROJECT_ID}; each has a fixed default for
 * local use. The first line printed is the URL; point the SDK or adapter at {@code <url>/api}.
 * {@code --instant} runs no code ({@link VercelEmulator.Builder#instant}, and no local runner is made);
 * {@code --create-delay-ms N} answers every create N ms late. The request counts are served at
 * {@code GET <url>/_emulator/requests} and printed at exit ({@link HttpEmulator#requestsLine()}).
 *
 * @since 0.1.0
 */
public final class VercelEmulatorMain {
    static final String DEFAULT_TOKEN = "emulator-token";
    static final String DEFAULT_TEAM = "team_emulator";
    static final String DEFAULT_PROJECT = "prj_emulator";

    private VercelEmulatorMain() {
    }

    /**
     * Starts the emulator, prints its URL and how to reach it, and waits until the JVM is shut down;
     * at shutdown it closes the emulator and prints the ledger and the request counts.
     *
     * @param args the command-line options described on this class: the emulator options, then an
     *        optional port
     * @throws Exception if the emulator cannot start (for instance the port is not a number or cannot
     *         be bound) or the wait for shutdown is interrupted
     */
    public static void main(String[] args) throws Exception {
        Machine.Factory machines = EmulatorOptions.parse(args).instant() ? InstantMachine.FACTORY : LocalMachines.create();
        VercelEmulator emulator = start(args, System.getenv(), machines, System.out);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            emulator.close();
            System.out.println("ledger: " + emulator.ledger());
            System.out.println(emulator.requestsLine());
            System.out.flush();
            stopped.countDown();
        }, "VercelEmulator-shutdown"));
        stopped.await();
    }

    static VercelEmulator start(String[] args, Map<String, String> env, Machine.Factory machines, PrintStream out)
            throws IOException {
        EmulatorOptions options = EmulatorOptions.parse(args);
        args = options.restArray();
        String portText = args.length > 0 ? args[0] : env.getOrDefault("VERCEL_EMULATOR_PORT", "0");
        int port;
        try {
            port = Integer.parseInt(portText);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("port must be a number, was '" + portText + "'");
        }
        String token = env.get("VERCEL_TOKEN");
        VercelEmulator emulator = VercelEmulator.builder().port(port)
                .token(token != null ? token : DEFAULT_TOKEN)
                .teamId(env.getOrDefault("VERCEL_TEAM_ID", DEFAULT_TEAM))
                .projectId(env.getOrDefault("VERCEL_PROJECT_ID", DEFAULT_PROJECT))
                .machines(machines)
                .instant(options.instant())
                .build();
        options.applyTo(emulator.faults());
        out.println(emulator.baseUrl());
        out.println("Vercel Sandbox emulator: base URL " + emulator.baseUrl() + "/api, team " + emulator.teamId()
                + ", project " + emulator.projectId() + ", token "
                + (token != null ? "from VERCEL_TOKEN" : "'" + DEFAULT_TOKEN + "' (set VERCEL_TOKEN to change)")
                + "; " + options.describe() + "; request counts at " + emulator.baseUrl() + HttpEmulator.REQUESTS_PATH);
        out.flush();
        return emulator;
    }
}
