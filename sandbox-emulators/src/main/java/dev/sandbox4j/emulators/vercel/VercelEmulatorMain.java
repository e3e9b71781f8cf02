package dev.sandbox4j.emulators.vercel;

import dev.sandbox4j.emulators.vercel.internal.LocalMachines;
import dev.sandbox4j.emulators.vercel.internal.MachineFactory;
import java.io.IOException;
import java.io.PrintStream;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * Serves the Vercel Sandbox emulator on loopback until killed.
 *
 * <p>Usage: {@code VercelEmulatorMain [port]} (or {@code VERCEL_EMULATOR_PORT}; 0 or nothing picks a free
 * port). The credentials it accepts come from the same variables the SDK and our adapter read:
 * {@code VERCEL_TOKEN}, {@code VERCEL_TEAM_ID}, {@code VERCEL_PROJECT_ID}; each has a fixed default for
 * local use. The first line printed is the URL; point the SDK or adapter at {@code <url>/api}.
 *
 * @since 0.1.0
 */
public final class VercelEmulatorMain {
    static final String DEFAULT_TOKEN = "emulator-token";
    static final String DEFAULT_TEAM = "team_emulator";
    static final String DEFAULT_PROJECT = "prj_emulator";

    private VercelEmulatorMain() {
    }

    public static void main(String[] args) throws Exception {
        VercelEmulator emulator = start(args, System.getenv(), LocalMachines.create(), System.out);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            emulator.close();
            stopped.countDown();
        }, "VercelEmulator-shutdown"));
        stopped.await();
    }

    static VercelEmulator start(String[] args, Map<String, String> env, MachineFactory machines, PrintStream out)
            throws IOException {
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
                .build();
        out.println(emulator.baseUrl());
        out.println("Vercel Sandbox emulator: base URL " + emulator.baseUrl() + "/api, team " + emulator.teamId()
                + ", project " + emulator.projectId() + ", token "
                + (token != null ? "from VERCEL_TOKEN" : "'" + DEFAULT_TOKEN + "' (set VERCEL_TOKEN to change)"));
        out.flush();
        return emulator;
    }
}
