package dev.sandbox4j.docker.internal;

import java.util.ArrayList;
import java.util.List;

/** What the engine itself holds, asked on the runner's own engine client (for checks in other test packages). */
public final class EngineCheck {
    private EngineCheck() {
    }

    /** Containers (running or not) and volumes carrying {@code key=value}, by name. */
    public static List<String> labelled(DockerDriver driver, String key, String value) throws InterruptedException {
        List<String> out = new ArrayList<>();
        for (DockerApi.Listed c : driver.api().listByLabel(key, value)) {
            out.add(c.name + " (" + c.state + ")");
        }
        for (String v : driver.api().volumesByLabel(key, value)) {
            out.add("volume " + v);
        }
        return out;
    }
}
