package dev.sandbox4j.emulators.daytona;

import dev.sandbox4j.emulators.EmulatorOptions;
import dev.sandbox4j.emulators.HttpEmulator;
import dev.sandbox4j.emulators.InstantMachine;
import dev.sandbox4j.emulators.Machine;
import dev.sandbox4j.emulators.LocalMachines;
import dev.sandbox4j.local.LocalSandboxRunner;

/**
 * Serves the Daytona emulator on loopback until the process is stopped; each sandbox is a local
 * bubblewrap sandbox. The first line printed is the API URL (for {@code DAYTONA_API_URL}).
 *
 * <pre>
 * java -cp ... dev.sandbox4j.emulators.daytona.DaytonaEmulatorMain [--instant] [--create-delay-ms N] [port]
 * </pre>
 *
 * {@code --instant} runs no code ({@link DaytonaEmulator.Builder#instant}, and no local runner is
 * made); {@code --create-delay-ms N} answers every create N ms late. The request counts are served at
 * {@code GET <base>/_emulator/requests} and printed at exit ({@link HttpEmulator#requestsLine()}).
 *
 * Environment: {@code DAYTONA_EMULATOR_PORT} (when no argument; 0 or unset picks a free port),
 * {@code DAYTONA_EMULATOR_API_KEY} (the key clients must send; default
 * {@value DaytonaEmulator#DEFAULT_API_KEY}), {@code DAYTONA_EMULATOR_STARTING_POLLS} (status reads a new
 * sandbox stays {@code starting}; default 0).
 *
 * @since 0.1.0
 */
public final class DaytonaEmulatorMain {
    private DaytonaEmulatorMain() {
    }

    /**
     * Starts the emulator, prints its API URL, toolbox proxy URL, key source, control paths and mode, and
     * waits until the JVM is shut down (SIGTERM, SIGINT), when it closes the emulator and prints the ledger
     * and the request counts to standard error.
     *
     * @param args the options above
     * @throws IllegalArgumentException when the options are malformed ({@link EmulatorOptions#parse})
     * @throws NumberFormatException when the port or {@code DAYTONA_EMULATOR_STARTING_POLLS} is not a number
     * @throws IllegalStateException when the local runner cannot run sandboxes on this host
     * @throws java.io.IOException when the port cannot be bound
     * @throws InterruptedException when interrupted while waiting
     */
    public static void main(String[] args) throws Exception {
        EmulatorOptions options = EmulatorOptions.parse(args);
        args = options.restArray();
        String portText = args.length > 0 ? args[0] : System.getenv("DAYTONA_EMULATOR_PORT");
        int port = portText == null || portText.isBlank() ? 0 : Integer.parseInt(portText.trim());
        String key = System.getenv("DAYTONA_EMULATOR_API_KEY");
        String polls = System.getenv("DAYTONA_EMULATOR_STARTING_POLLS");

        LocalSandboxRunner runner = options.instant() ? null : LocalSandboxRunner.create().verify();
        Machine.Factory machines = runner == null ? InstantMachine.FACTORY : LocalMachines.using(runner);
        DaytonaEmulator.Builder b = DaytonaEmulator.builder(machines).port(port).instant(options.instant());
        if (key != null && !key.isEmpty()) {
            b.apiKey(key);
        }
        if (polls != null && !polls.isBlank()) {
            b.startingPolls(Integer.parseInt(polls.trim()));
        }
        DaytonaEmulator emulator = b.build();
        options.applyTo(emulator.faults());
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            emulator.close();
            if (runner != null) {
                runner.close();
            }
            System.err.println("daytona emulator stopped; " + emulator.ledger());
            System.err.println(emulator.requestsLine());
        }, "daytona-emulator-shutdown"));
        System.out.println(emulator.apiUrl());
        System.out.println("toolbox proxy: " + emulator.toolboxProxyUrl());
        System.out.println("api key: " + (key == null || key.isEmpty()
                ? DaytonaEmulator.DEFAULT_API_KEY : "(from DAYTONA_EMULATOR_API_KEY)"));
        System.out.println("controls: " + emulator.baseUrl() + "/_emulator/{calls,ledger,faults,requests}");
        System.out.println("mode: " + options.describe());
        System.out.flush();
        Thread.currentThread().join();
    }
}
