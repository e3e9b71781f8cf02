/**
 * API. The local bubblewrap runner, the embedded default on Linux.
 *
 * <p>What ends an exec's processes, on every path and whether the JVM is root or not: all of them are
 * in one PID namespace whose PID 1 is an execute-only init the code can neither write nor signal.
 * When the code exits, that init exits with its status and the kernel kills the rest of the namespace
 * before bubblewrap returns; on the budget, the output cap, an interrupt, {@code close()}, the
 * lifetime and the JVM's shutdown hook the JVM SIGKILLs that init from the host and waits until it is
 * reaped; with kernel limits (root, cgroup v1) the sandbox's cgroup is then emptied too, after every
 * exec and at teardown.
 *
 * <p>A sandbox whose egress is a list goes out only through its host-side egress proxy (module
 * {@code sandbox-egress}), reached over a unix socket bound into its empty network namespace; the init
 * starts the in-sandbox forwarder to it before the code, and the forwarder dies with the namespace like
 * every other process of the exec, so it adds nothing that outlives an exec.
 *
 * <p>Creates and {@code close()}: a create is counted ({@code openSandboxes()}) from its first side
 * effect (the probe's or the sandbox's directory) until it is registered or has removed what it made;
 * a create that fails part way, an {@link Error} included, removes its mount, cgroup and directory
 * before it throws. {@code close()} refuses new creates, waits up to 30 s for those in flight and tears
 * down every sandbox registered meanwhile; a create that finishes after close began tears its own
 * sandbox down and throws a {@code SandboxException} (not retriable, no code ran). When close returns,
 * nothing of any sandbox of the runner is left, unless a create outlived the wait (logged; it removes
 * itself when it finishes, and {@code openSandboxes()} counts it until then).
 */
package dev.sandbox4j.local;
