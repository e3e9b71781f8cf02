package dev.sandbox4j.modal.internal;

import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.spi.Backoff;
import dev.sandbox4j.spi.Secret;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The resolved configuration of one Modal runner; built by {@code ModalSandboxRunner.Builder}. Also
 * reads {@code ~/.modal.toml} profiles the way Modal's SDKs do. Holds the token secret; its
 * {@link #toString()} never shows the token id or secret.
 */
public final class ModalSettings {
    public static final String DEFAULT_SERVER_URL = "https://api.modal.com:443";
    /** Sent as {@code x-modal-libmodal-version}: this client, honestly named. */
    static final String LIBRARY_VERSION = "sandbox4j-modal/0.1.0";
    /** The JS and Go SDKs send 1.0.0 ("behaves like this Python SDK version"). */
    static final String CLIENT_VERSION = "1.0.0";
    /** ClientType has no JVM value; the JS one (8) is the nearest and what the JS-shaped calls are. */
    static final String CLIENT_TYPE = "8";

    /** Opens a channel to {@code host:port}; tests replace it with in-process channels. */
    @FunctionalInterface
    public interface Channels {
        ManagedChannel open(String host, int port, boolean plaintext);
    }

    final URI serverUrl;
    final String host;
    final int port;
    final boolean plaintext;
    final Secret tokenId;
    final Secret tokenSecret;
    final String environment;
    final String appName;
    final String imageRef;
    final List<String> dockerfileCommands;
    final String imageBuilderVersion;
    final String runtime;
    final String workdir;
    final boolean sandboxV2;
    final Duration requestTimeout;
    final Duration execGrace;
    final Duration imageBuildTimeout;
    final Duration scheduleTimeout;
    final Duration maxThrottleWait;
    final int maxUnaryAttempts;
    final int argvLimitBytes;
    final Backoff backoff;
    final Channels channels;

    public ModalSettings(URI serverUrl, Secret tokenId, Secret tokenSecret, String environment, String appName,
                         String imageRef, List<String> dockerfileCommands, String imageBuilderVersion, String runtime,
                         String workdir, boolean sandboxV2, Duration requestTimeout, Duration execGrace,
                         Duration imageBuildTimeout, Duration scheduleTimeout, Duration maxThrottleWait,
                         int maxUnaryAttempts, int argvLimitBytes, Backoff backoff, Channels channels) {
        this.serverUrl = Objects.requireNonNull(serverUrl, "serverUrl");
        String scheme = serverUrl.getScheme() == null ? "" : serverUrl.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("https") && !scheme.equals("http") || serverUrl.getHost() == null) {
            throw new SandboxConfigurationException("modal: MODAL_SERVER_URL '" + serverUrl
                    + "' is not an http:// or https:// URL with a host");
        }
        this.plaintext = scheme.equals("http");
        this.host = serverUrl.getHost();
        this.port = serverUrl.getPort() > 0 ? serverUrl.getPort() : plaintext ? 80 : 443;
        this.tokenId = Objects.requireNonNull(tokenId, "tokenId");
        this.tokenSecret = Objects.requireNonNull(tokenSecret, "tokenSecret");
        this.environment = environment == null ? "" : environment;
        this.appName = Objects.requireNonNull(appName, "appName");
        this.imageRef = Objects.requireNonNull(imageRef, "imageRef");
        this.dockerfileCommands = List.copyOf(dockerfileCommands);
        this.imageBuilderVersion = imageBuilderVersion;
        this.runtime = runtime;
        this.workdir = workdir;
        this.sandboxV2 = sandboxV2;
        this.requestTimeout = requestTimeout;
        this.execGrace = execGrace;
        this.imageBuildTimeout = imageBuildTimeout;
        this.scheduleTimeout = scheduleTimeout;
        this.maxThrottleWait = maxThrottleWait;
        this.maxUnaryAttempts = maxUnaryAttempts;
        this.argvLimitBytes = argvLimitBytes;
        this.backoff = Objects.requireNonNull(backoff, "backoff");
        this.channels = channels;
    }

    public URI serverUrl() {
        return serverUrl;
    }

    public boolean sandboxV2() {
        return sandboxV2;
    }

    public String appName() {
        return appName;
    }

    /**
     * The keys of one profile of a Modal config file ({@code ~/.modal.toml}, or {@code MODAL_CONFIG_PATH}):
     * the profile named by {@code MODAL_PROFILE}, else the one marked {@code active = true}, else
     * {@code default}, as the SDKs choose it. Empty when the file does not exist.
     *
     * @throws SandboxConfigurationException when the file cannot be read or parsed (the message never
     *         quotes a value)
     */
    public static Map<String, String> profile(Map<String, String> env) {
        String configured = env.get("MODAL_CONFIG_PATH");
        Path path = configured != null && !configured.isBlank() ? Path.of(configured.trim())
                : Path.of(System.getProperty("user.home", "."), ".modal.toml");
        if (!Files.isRegularFile(path)) {
            return Map.of();
        }
        Map<String, Map<String, String>> profiles;
        try {
            profiles = parseToml(Files.readString(path, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new SandboxConfigurationException("modal: cannot read " + path + ": " + e.getClass().getSimpleName());
        }
        String wanted = env.get("MODAL_PROFILE");
        if (wanted == null || wanted.isBlank()) {
            wanted = profiles.entrySet().stream()
                    .filter(e -> "true".equals(e.getValue().get("active")))
                    .map(Map.Entry::getKey).findFirst().orElse("default");
        }
        return profiles.getOrDefault(wanted.trim(), Map.of());
    }

    /**
     * The subset of TOML a Modal config file uses: {@code [profile]} tables with string and boolean
     * keys, {@code #} comments. Anything else is skipped.
     */
    static Map<String, Map<String, String>> parseToml(String text) {
        Map<String, Map<String, String>> out = new LinkedHashMap<>();
        Map<String, String> current = null;
        int n = 0;
        for (String raw : text.split("\r?\n")) {
            n++;
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            if (line.startsWith("[")) {
                int end = line.indexOf(']');
                if (end < 0) {
                    throw new SandboxConfigurationException("modal: the config file's line " + n + " is not a [table]");
                }
                String name = unquote(line.substring(1, end).strip());
                current = out.computeIfAbsent(name, k -> new LinkedHashMap<>());
                continue;
            }
            int eq = line.indexOf('=');
            if (eq < 0 || current == null) {
                continue;
            }
            String key = line.substring(0, eq).strip();
            String value = line.substring(eq + 1).strip();
            if (value.startsWith("\"") || value.startsWith("'")) {
                char q = value.charAt(0);
                int close = value.indexOf(q, 1);
                if (close < 0) {
                    throw new SandboxConfigurationException("modal: the config file's line " + n
                            + " has an unterminated string (key " + key + ")");
                }
                value = value.substring(1, close);
            } else {
                int hash = value.indexOf('#');
                value = (hash >= 0 ? value.substring(0, hash) : value).strip();
            }
            current.put(unquote(key), value);
        }
        return out;
    }

    private static String unquote(String s) {
        if (s.length() >= 2 && (s.startsWith("\"") && s.endsWith("\"") || s.startsWith("'") && s.endsWith("'"))) {
            return s.substring(1, s.length() - 1);
        }
        return s;
    }

    @Override
    public String toString() {
        return "ModalSettings[" + serverUrl + ", app=" + appName + ", environment=" + (environment.isEmpty() ? "default" : environment)
                + ", image=" + imageRef + (dockerfileCommands.isEmpty() ? "" : " +" + dockerfileCommands.size() + " commands")
                + ", runtime=" + (runtime == null ? "default" : runtime) + ", " + (sandboxV2 ? "V2" : "V1") + "]";
    }
}
