package dev.sandbox4j.docker.internal;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.egress.NetworkAllowance;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.util.List;
import java.util.Map;

/**
 * The body of the one {@code POST /containers/create} per sandbox: the whole policy is in it; the one change on
 * the live container is the lock-down after setup ({@link DockerDriver#updateEgress}), which only takes network
 * away. What it sets for a session's container, and why:
 * <ul>
 *   <li>network mode {@code none} for deny-all (no interface but loopback) and for an allow list (whose only way
 *       out is then the host proxy's socket, {@link DockerEgress}), the configured network for allow-all;
 *   <li>a read-only root file system, every capability dropped but {@code CAP_KILL} (which only the runner's
 *       root kill helper holds: code runs as a non-root uid and so has none), {@code no-new-privileges}, and
 *       the runner's own seccomp profile ({@link DockerSeccomp}: no vsock or other unneeded socket family, no
 *       io_uring, no ptrace, no namespaces, no keyring);
 *   <li>pids, memory (swap included, so none) and CPU from {@link Limits}; the disk bound split over the work
 *       directory (a tmpfs volume, kept across execs), {@code /tmp} (tmpfs) and {@code /dev/shm}; the network
 *       allowance is not the engine's: the egress proxies count it ({@link #networkAllowance});
 *   <li>Docker's init as the first process, running {@code sleep <lifetime>} as root in the container (with
 *       {@code CAP_KILL} alone), a user other than the code's: it reaps orphans, code cannot signal it, and when the lifetime ends the container stops and, being
 *       auto-removed, goes with its volume (the engine's own clock, whatever happens to this JVM);
 *   <li>the run id (and owner, expiry, caller's labels) and the creating JVM ({@link JvmOwner}) as labels on the
 *       container and its volume.
 * </ul>
 * A one-shot's container ({@link CreateRequest#firstProcess()}, {@link OneShotRun}) differs in what its first
 * process is and nothing it enforces: Docker's init runs {@code timeout -s KILL <lifetime>} and the code as the
 * code's user; no {@code CAP_KILL} (no kill helper runs in it); its stdout and stderr attachable; log driver
 * {@code none}; not {@code AutoRemove} (its exit code is read after it stopped; its teardown removes it).
 */
final class ContainerSpec {
    /** /tmp gets this share of the disk bound, up to 64 MiB; /dev/shm a sixteenth, up to 16 MiB. */
    static final long MAX_TMP = 64 * DockerSettings.MIB;
    static final long MAX_SHM = 16 * DockerSettings.MIB;
    /** The one capability in the container: the runner's root helper kills the code's processes with it. */
    static final String KILL_CAPABILITY = "CAP_KILL";
    /**
     * The user of the runner's kill helper: root in the container, holding only {@link #KILL_CAPABILITY}. The
     * engine gives an exec the container's capabilities only when the container's own user is root, so the
     * init runs as root too (it needs {@code CAP_KILL} to be effective for root execs).
     */
    static final String SUPERVISOR_USER = "0:0";

    private ContainerSpec() {
    }

    /** The network mode for an egress policy: deny-all and lists {@code none}, allow-all the configured network. */
    static String networkMode(DockerSettings s, EgressPolicy egress) {
        if (egress.isDenyAll() || (DockerEgress.proxied(egress) && egress.defaultAction() == EgressPolicy.Default.DENY)) {
            // a list: loopback only, the host proxy's socket bind-mounted in (DockerEgress); the driver
            // has checked the list against what the proxy enforces
            return "none";
        }
        if (egress.isAllowAll()) {
            return s.allowAllNetwork();
        }
        throw new UnsupportedPolicyException(DockerApi.PROVIDER, List.of(egress
                + " (the Docker runner enforces deny-all, allow-all and allow lists through its egress proxy, not default"
                + " allow with denied CIDRs: use a list, or a hosted provider that enforces denied CIDRs, such as e2b or vercel)"));
    }

    /**
     * The sandbox's network allowance ({@code Limits.networkMib}), counted by its egress proxies; refused with
     * allow-all as the code's or the setup's egress (the container is then on the allow-all network, where
     * nothing counts its bytes). Deny-all moves nothing, so any allowance holds there.
     *
     * @throws UnsupportedPolicyException for an allowance with allow-all egress
     */
    static NetworkAllowance networkAllowance(DockerSettings s, CreateRequest r) {
        NetworkAllowance a = NetworkAllowance.of(r.spec().limits());
        if (a.limited()) {
            String route = "puts the container on the '" + s.allowAllNetwork() + "' network";
            NetworkAllowance.requireCountable(r.spec().egress(), DockerApi.PROVIDER, route);
            NetworkAllowance.requireCountable(r.initialEgress(), DockerApi.PROVIDER, route);
        }
        return a;
    }

    /** The sizes of the work directory, /tmp and /dev/shm, together the disk bound. */
    static long[] split(long disk) {
        long tmp = Math.min(MAX_TMP, disk / 4);
        long shm = Math.min(MAX_SHM, disk / 16);
        return new long[] {disk - tmp - shm, tmp, shm};
    }

    static long memory(DockerSettings s, Limits l) {
        return l.memoryMib().isPresent() ? l.memoryMib().getAsInt() * DockerSettings.MIB : s.memoryBytes();
    }

    static long disk(DockerSettings s, Limits l) {
        return l.diskMib().isPresent() ? l.diskMib().getAsInt() * DockerSettings.MIB : s.diskBytes();
    }

    /** Whole seconds of the lifetime, at least one. */
    static long lifetimeSeconds(CreateRequest r) {
        return Math.max(1, (r.lifetime().toMillis() + 999) / 1000);
    }

    static ObjectNode body(DockerSettings s, CreateRequest r) {
        String network = networkMode(s, r.initialEgress());
        Limits limits = r.spec().limits();
        long[] sizes = split(disk(s, limits));
        long memory = memory(s, limits);
        ObjectNode b = DockerApi.MAPPER.createObjectNode();
        b.put("Image", s.image());
        dev.sandbox4j.api.Execution first = r.firstProcess().orElse(null);
        ArrayNode cmd = b.putArray("Cmd");
        if (first == null) {
            b.put("User", s.initUser());
            cmd.add("sleep").add(Long.toString(lifetimeSeconds(r)));
        } else {
            // a one-shot: the code is the container's own process, as the code's user, under Docker's init;
            // timeout ends it at the lifetime on the engine's side, whatever happens to this JVM
            b.put("User", s.user());
            cmd.add("timeout").add("-s").add("KILL").add(Long.toString(lifetimeSeconds(r)));
            Scripts.inline(first.language(), first.code()).forEach(cmd::add);
        }
        b.putArray("Entrypoint"); // empty clears the image's ENTRYPOINT; null would keep it
        b.put("WorkingDir", DockerSettings.WORK_DIR);
        // a one-shot's output is read from an attach made before its start; a session's execs attach per exec
        b.put("AttachStdin", false).put("AttachStdout", first != null).put("AttachStderr", first != null).put("Tty", false)
                .put("OpenStdin", false);
        ArrayNode env = b.putArray("Env");
        env.add("HOME=" + DockerSettings.WORK_DIR);
        for (Map.Entry<String, String> e : r.spec().env().entrySet()) {
            env.add(e.getKey() + "=" + e.getValue());
        }
        ObjectNode labels = b.putObject("Labels");
        r.labels().forEach(labels::put);
        // which JVM made it, so a later start can sweep it once that JVM is gone
        JvmOwner.current().ifPresent(o -> labels.put(JvmOwner.LABEL, o));
        ObjectNode h = b.putObject("HostConfig");
        h.put("NetworkMode", network);
        h.put("ReadonlyRootfs", true);
        h.putArray("CapDrop").add("ALL");
        if (first == null) {
            // only the runner's root helper can use it (code runs as a non-root uid, so it holds no capability);
            // a one-shot has no helper: its container is killed as a whole
            h.putArray("CapAdd").add(KILL_CAPABILITY);
        }
        h.putArray("SecurityOpt").add("no-new-privileges").add(DockerSeccomp.securityOpt());
        h.put("Init", true);
        // a session's container goes by itself when its sleep ends; a one-shot's stays once its code exited,
        // for its exit code, and its teardown removes it without force (DockerDriver.destroy)
        h.put("AutoRemove", first == null);
        if (first != null) {
            h.putObject("LogConfig").put("Type", "none"); // the output goes to the attach only, never to a log on the host
        }
        h.put("Privileged", false);
        h.put("IpcMode", "private");
        h.put("PidsLimit", s.pidsLimit());
        h.put("Memory", memory);
        h.put("MemorySwap", memory);
        if (limits.vcpus().isPresent()) {
            h.put("NanoCpus", limits.vcpus().getAsInt() * 1_000_000_000L);
        }
        h.put("ShmSize", sizes[2]);
        h.putObject("Tmpfs").put("/tmp", "rw,nosuid,nodev,size=" + sizes[1] / 1024 + "k,mode=1777");
        ObjectNode work = h.putArray("Mounts").addObject();
        work.put("Type", "volume").put("Target", DockerSettings.WORK_DIR).put("ReadOnly", false);
        ObjectNode vo = work.putObject("VolumeOptions");
        vo.put("NoCopy", true);
        ObjectNode vl = vo.putObject("Labels");
        r.labels().forEach(vl::put);
        JvmOwner.current().ifPresent(o -> vl.put(JvmOwner.LABEL, o));
        vo.putObject("DriverConfig").put("Name", "local").putObject("Options")
                .put("type", "tmpfs").put("device", "tmpfs")
                .put("o", "size=" + sizes[0] / 1024 + "k,uid=" + s.uid() + ",gid=" + s.gid() + ",mode=0700,nosuid,nodev");
        return b;
    }

    /** The body of {@code POST /containers/{id}/exec}: argv as given, as the code's user, in the work directory. */
    static ObjectNode exec(DockerSettings s, List<String> argv) {
        return exec(s.user(), argv);
    }

    /** The same as another user: {@link #SUPERVISOR_USER} for the kill helper. */
    static ObjectNode exec(String user, List<String> argv) {
        ObjectNode b = DockerApi.MAPPER.createObjectNode();
        b.put("AttachStdin", false).put("AttachStdout", true).put("AttachStderr", true).put("Tty", false);
        b.put("User", user);
        b.put("WorkingDir", DockerSettings.WORK_DIR);
        b.put("Privileged", false);
        ArrayNode cmd = b.putArray("Cmd");
        argv.forEach(cmd::add);
        return b;
    }
}
