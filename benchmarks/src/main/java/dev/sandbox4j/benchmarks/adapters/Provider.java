package dev.sandbox4j.benchmarks.adapters;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One provider in the benchmark: how to start its emulator, where it prints its URL, and the
 * environment that points both the official SDK and the Java adapter at it (the same variables).
 */
final class Provider {
    final String name;
    /** The npm package conformance/ installs (its folder under conformance/.scratch is the name). */
    final String sdkPackage;
    final String emulatorMain;
    private final List<String> emulatorArgs;
    private final Pattern urlLine;
    private final Map<String, String> emulatorEnv;
    private final java.util.function.Function<String, Map<String, String>> clientEnv;

    private Provider(String name, String sdkPackage, String emulatorMain, List<String> emulatorArgs, String urlLine,
            Map<String, String> emulatorEnv, java.util.function.Function<String, Map<String, String>> clientEnv) {
        this.name = name;
        this.sdkPackage = sdkPackage;
        this.emulatorMain = emulatorMain;
        this.emulatorArgs = emulatorArgs;
        this.urlLine = Pattern.compile(urlLine);
        this.emulatorEnv = emulatorEnv;
        this.clientEnv = clientEnv;
    }

    static List<String> names() {
        return List.of("e2b", "daytona", "vercel", "modal");
    }

    /** The provider of that name, with fresh fake credentials for this run. */
    static Provider named(String name, String tag) {
        switch (name) {
            case "e2b": {
                String key = "e2b_bench_" + tag;
                return new Provider(name, "e2b", "dev.sandbox4j.emulators.e2b.E2bEmulatorMain", List.of("--port", "0"),
                        "^E2B emulator listening on (http://\\S+)", Map.of("E2B_API_KEY", key),
                        url -> Map.of("E2B_API_KEY", key, "E2B_API_URL", url, "E2B_SANDBOX_URL", url));
            }
            case "daytona": {
                String key = "bench-key-" + tag;
                return new Provider(name, "@daytonaio/sdk", "dev.sandbox4j.emulators.daytona.DaytonaEmulatorMain",
                        List.of("0"), "^(http://\\S+)$", Map.of("DAYTONA_EMULATOR_API_KEY", key),
                        url -> Map.of("DAYTONA_API_URL", url, "DAYTONA_API_KEY", key, "DAYTONA_TARGET", "us"));
            }
            case "vercel": {
                Map<String, String> creds = Map.of("VERCEL_TOKEN", "bench-token-" + tag, "VERCEL_TEAM_ID", "team_bench",
                        "VERCEL_PROJECT_ID", "prj_bench");
                return new Provider(name, "@vercel/sandbox", "dev.sandbox4j.emulators.vercel.VercelEmulatorMain",
                        List.of("0"), "^(http://\\S+)$", creds, url -> {
                            Map<String, String> env = new HashMap<>(creds);
                            env.put("EMULATOR_URL", url); // the SDK's fetch is rewritten to it
                            env.put("VERCEL_API_URL", url + "/api"); // the adapter's base URL
                            return env;
                        });
            }
            case "modal": {
                Map<String, String> creds = Map.of("MODAL_TOKEN_ID", "ak-bench" + tag, "MODAL_TOKEN_SECRET",
                        "as-bench" + tag, "MODAL_CONFIG_PATH", "/nonexistent/sandbox4j-bench-modal.toml");
                return new Provider(name, "modal", "dev.sandbox4j.emulators.modal.ModalEmulatorMain", List.of(),
                        "^# Modal emulator: control plane (http://[^,\\s]+)", creds, url -> {
                            Map<String, String> env = new HashMap<>(creds);
                            env.put("MODAL_SERVER_URL", url);
                            return env;
                        });
            }
            default:
                throw new IllegalArgumentException("unknown provider " + name + " (known: " + names() + ")");
        }
    }

    List<String> emulatorArgs(boolean instant) {
        List<String> a = new java.util.ArrayList<>(emulatorArgs);
        if (instant) {
            a.add(0, "--instant");
        }
        return a;
    }

    Map<String, String> emulatorEnv() {
        return emulatorEnv;
    }

    Map<String, String> clientEnv(String url) {
        return clientEnv.apply(url);
    }

    /** The emulator's URL from one line of its output, or null. */
    String urlFrom(String line) {
        var m = urlLine.matcher(line);
        return m.find() ? m.group(1) : null;
    }
}
