package dev.sandbox4j.modal.internal;

import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunnerProvider;
import dev.sandbox4j.modal.ModalSandboxRunner;
import java.util.Map;

/** Registers Modal with {@code SandboxRunners} and the CLI's {@code --provider modal} (ServiceLoader). */
public final class ModalSandboxRunnerProvider implements SandboxRunnerProvider {
    @Override
    public String name() {
        return "modal";
    }

    @Override
    public String artifact() {
        return "dev.sandbox4j:sandbox-modal";
    }

    /** Credentials in MODAL_TOKEN_ID / MODAL_TOKEN_SECRET, or in the active profile of the Modal config file. */
    @Override
    public boolean isConfigured(Map<String, String> env) {
        if (set(env.get(ModalSandboxRunner.TOKEN_ID_VARIABLE)) && set(env.get(ModalSandboxRunner.TOKEN_SECRET_VARIABLE))) {
            return true;
        }
        try {
            Map<String, String> profile = ModalSettings.profile(env);
            return set(profile.get("token_id")) && set(profile.get("token_secret"));
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static boolean set(String v) {
        return v != null && !v.isBlank();
    }

    @Override
    public SandboxRunner fromEnv(Map<String, String> env) {
        return ModalSandboxRunner.fromEnv(env);
    }

    @Override
    public SandboxRunner fromEnv(Map<String, String> env, LifecycleListener listener) {
        return ModalSandboxRunner.builderFromEnv(env).lifecycleListener(listener).build();
    }
}
