package dev.sandbox4j.emulators.daytona;

import dev.sandbox4j.emulators.daytona.internal.LocalMachines;
import dev.sandbox4j.local.LocalSandboxRunner;

/**
 * Serves the Daytona emulator on loopback until the process is stopped; each sandbox is a local
 * bubblewrap sandbox. The first line printed is the API URL (for {@code DAYTONA_API_URL}).
 *
 * <pre>
 * java -cp ... dev.sandbox4j.emulators.daytona.DaytonaEmulatorMain [port]
 * </pre>
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

    public static void main(String[] args) throws Exception {
        String portText = args.length > 0 ? args[0] : System.getenv("DAYTONA_EMULATOR_PORT");
        int port = portText == null || portText.isBlank() ? 0 : Integer.parseInt(portText.trim());
        String key = System.getenv("DAYTONA_EMULATOR_API_KEY");
        String polls = System.getenv("DAYTONA_EMULATOR_STARTING_POLLS");

        LocalSandboxRunner runner = LocalSandboxRunner.create().verify();
        LocalMachines machines = new LocalMachines(runner);
        DaytonaEmulator.Builder b = DaytonaEmulator.builder(machines).port(port);
        if (key != null && !key.isEmpty()) {
            b.apiKey(key);
        }
        if (polls != null && !polls.isBlank()) {
            b.startingPolls(Integer.parseInt(polls.trim()));
        }
        DaytonaEmulator emulator = b.build();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            emulator.close();
            machines.close();
            System.err.println("daytona emulator stopped; " + emulator.ledger());
        }, "daytona-emulator-shutdown"));
        System.out.println(emulator.apiUrl());
        System.out.println("toolbox proxy: " + emulator.toolboxProxyUrl());
        System.out.println("api key: " + (key == null || key.isEmpty()
                ? DaytonaEmulator.DEFAULT_API_KEY : "(from DAYTONA_EMULATOR_API_KEY)"));
        System.out.println("controls: " + emulator.baseUrl() + "/_emulator/{calls,ledger,faults}");
        System.out.flush();
        Thread.currentThread().join();
    }
}
