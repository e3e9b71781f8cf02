package dev.sandbox4j.kubernetes.internal;

import java.time.Duration;
import java.util.Objects;

/** What a {@code KubernetesSandboxRunner} was built with. Holds no credentials (those stay in the fabric8 Config). */
public final class KubernetesSettings {
    /** Bytes in a mebibyte. */
    public static final long MIB = 1024L * 1024;
    /** The container's name in every sandbox pod. */
    public static final String CONTAINER = "sandbox";

    private final String namespace;
    private final String image;
    private final String runtimeClassName;
    private final long uid;
    private final long gid;
    private final String workDir;
    private final long memoryMib;
    private final long diskMib;
    private final String cpu;
    private final Duration requestTimeout;
    private final Duration readyTimeout;
    private final Duration killGrace;
    private final int argvLimitBytes;
    private final java.util.List<java.util.Map.Entry<dev.sandbox4j.policy.EgressPolicy, String>> warmPools;
    private final Duration readyPoll;

    public KubernetesSettings(String namespace, String image, String runtimeClassName, long uid, long gid, String workDir,
            long memoryMib, long diskMib, String cpu, Duration requestTimeout, Duration readyTimeout, Duration killGrace,
            int argvLimitBytes) {
        this(namespace, image, runtimeClassName, uid, gid, workDir, memoryMib, diskMib, cpu, requestTimeout, readyTimeout,
                killGrace, argvLimitBytes, java.util.List.of(), Duration.ofMillis(250));
    }

    public KubernetesSettings(String namespace, String image, String runtimeClassName, long uid, long gid, String workDir,
            long memoryMib, long diskMib, String cpu, Duration requestTimeout, Duration readyTimeout, Duration killGrace,
            int argvLimitBytes, java.util.List<java.util.Map.Entry<dev.sandbox4j.policy.EgressPolicy, String>> warmPools,
            Duration readyPoll) {
        this.warmPools = java.util.List.copyOf(warmPools);
        this.readyPoll = Objects.requireNonNull(readyPoll, "readyPoll");
        this.namespace = Objects.requireNonNull(namespace, "namespace");
        this.image = Objects.requireNonNull(image, "image");
        this.runtimeClassName = runtimeClassName;
        this.uid = uid;
        this.gid = gid;
        this.workDir = Objects.requireNonNull(workDir, "workDir");
        this.memoryMib = memoryMib;
        this.diskMib = diskMib;
        this.cpu = Objects.requireNonNull(cpu, "cpu");
        this.requestTimeout = Objects.requireNonNull(requestTimeout, "requestTimeout");
        this.readyTimeout = Objects.requireNonNull(readyTimeout, "readyTimeout");
        this.killGrace = Objects.requireNonNull(killGrace, "killGrace");
        this.argvLimitBytes = argvLimitBytes;
    }

    public String namespace() {
        return namespace;
    }

    public String image() {
        return image;
    }

    /** The pod's RuntimeClass (gVisor, Kata), or null for the cluster's default runtime. */
    public String runtimeClassName() {
        return runtimeClassName;
    }

    public long uid() {
        return uid;
    }

    public long gid() {
        return gid;
    }

    /** The work directory in the pod: an emptyDir volume, the only writable place besides /tmp. */
    public String workDir() {
        return workDir;
    }

    /** Memory when {@code Limits.memoryMib} is unset. */
    public long memoryMib() {
        return memoryMib;
    }

    /** Disk (work directory and /tmp together) when {@code Limits.diskMib} is unset. */
    public long diskMib() {
        return diskMib;
    }

    /** CPU limit (Kubernetes quantity) when {@code Limits.vcpus} is unset. */
    public String cpu() {
        return cpu;
    }

    public Duration requestTimeout() {
        return requestTimeout;
    }

    /** How long a create waits for the Sandbox's Ready condition. */
    public Duration readyTimeout() {
        return readyTimeout;
    }

    public Duration killGrace() {
        return killGrace;
    }

    /** Code longer than this (or with a NUL) goes by file, not argv. */
    public int argvLimitBytes() {
        return argvLimitBytes;
    }

    /**
     * The longest pause between two polls of a Sandbox's or a claim's Ready condition (they start at 20 ms,
     * or this when shorter, and grow 1.5 times plus 1 ms: {@link dev.sandbox4j.spi.Backoff#poll}).
     */
    public Duration readyPoll() {
        return readyPoll;
    }

    /** The SandboxWarmPools claims go to, by the egress of their template; empty: a Sandbox per sandbox. */
    public java.util.List<java.util.Map.Entry<dev.sandbox4j.policy.EgressPolicy, String>> warmPools() {
        return warmPools;
    }

    /** Whether sandboxes are SandboxClaims (against {@link #warmPools()}) rather than Sandboxes. */
    public boolean claims() {
        return !warmPools.isEmpty();
    }

    @Override
    public String toString() {
        return "KubernetesSettings[namespace=" + namespace + ", image=" + image + ", runtimeClass=" + runtimeClassName + "]";
    }
}
