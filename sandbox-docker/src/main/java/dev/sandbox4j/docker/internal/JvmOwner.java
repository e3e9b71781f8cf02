package dev.sandbox4j.docker.internal;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Optional;

/**
 * Which JVM created a container: the {@value #LABEL} label, {@code host=<name>;boot=<pid 1's start>;pidns=<pid
 * namespace>;pid=<pid>;start=<start>}, so that the sweep can tell a creator that is gone from one that is
 * alive. A pid is only meaningful where it was taken, so the label names the host, the start of its pid 1
 * (another boot, or another container, has another) and, on Linux, the pid namespace; a creator is gone
 * only when its label names this very place and no process with that pid and start time runs (a reused
 * pid with another start time is another process). Where this cannot be determined no label is written,
 * and nothing is ever swept as gone.
 */
final class JvmOwner {
    static final String LABEL = "sandbox4j-docker-jvm";
    private static final String PLACE = place();
    private static final String CURRENT = PLACE == null ? null : PLACE + ";pid=" + ProcessHandle.current().pid()
            + ";start=" + ProcessHandle.current().info().startInstant().map(Instant::toEpochMilli).orElse(-1L);

    private JvmOwner() {
    }

    /** This JVM's label value, or empty where its place cannot be named. */
    static Optional<String> current() {
        return Optional.ofNullable(CURRENT);
    }

    /** True only when {@code label} names a JVM of this host, boot and pid namespace that no longer runs. */
    static boolean provablyGone(String label) {
        if (PLACE == null || label == null || label.equals(CURRENT)) {
            return false;
        }
        int at = label.lastIndexOf(";pid=");
        if (at < 0 || !label.substring(0, at).equals(PLACE)) {
            return false; // another host, boot or pid namespace: its pids say nothing here
        }
        String[] rest = label.substring(at + 1).split(";");
        if (rest.length != 2 || !rest[0].startsWith("pid=") || !rest[1].startsWith("start=")) {
            return false;
        }
        long pid;
        long started;
        try {
            pid = Long.parseLong(rest[0].substring(4));
            started = Long.parseLong(rest[1].substring(6));
        } catch (NumberFormatException e) {
            return false;
        }
        Optional<ProcessHandle> p = ProcessHandle.of(pid);
        if (p.isEmpty() || !p.get().isAlive()) {
            return true;
        }
        Optional<Instant> start = p.get().info().startInstant();
        // the same pid started at another time is another process; an unknown start time keeps it
        return started >= 0 && start.isPresent() && Math.abs(start.get().toEpochMilli() - started) >= 1000;
    }

    private static String place() {
        try {
            String host = InetAddress.getLocalHost().getHostName();
            Optional<Instant> boot = ProcessHandle.of(1).flatMap(p -> p.info().startInstant());
            if (host.isBlank() || boot.isEmpty()) {
                return null;
            }
            String pidns = "-";
            Path ns = Path.of("/proc/self/ns/pid");
            if (Files.exists(ns, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                pidns = Files.readSymbolicLink(ns).toString();
            }
            return "host=" + host.replace(';', '_') + ";boot=" + boot.get().toEpochMilli() + ";pidns=" + pidns;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
