package dev.sandbox4j.emulators.e2b;

/**
 * Serves the emulator with unisolated {@link ProcessWorkspace}s, for trying an SDK against the wire
 * format by hand. Not the standalone emulator (that is {@link E2bEmulatorMain}, with local sandboxes).
 */
public final class DevE2bEmulator {
    public static void main(String[] args) throws Exception {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
        String key = System.getenv().getOrDefault("E2B_API_KEY", "e2b_" + E2bEmulator.randomId(40));
        E2bEmulator e = E2bEmulator.builder().port(port).apiKey(key).trace(true)
                .workspaces(new ProcessWorkspace.Factory()).build();
        System.out.println("E2B emulator (dev, unisolated) on " + e.baseUrl());
        System.out.flush();
        Thread.currentThread().join();
    }
}
