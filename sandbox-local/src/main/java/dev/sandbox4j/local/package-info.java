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
 *
 * <p>Attach ({@code Feature.ATTACH}), within one JVM: {@code Sandbox.detach()} hands an open local
 * sandbox to a JVM-wide registry keyed by its id; no runner counts it or tears it down at its close
 * any more. {@code attach(id, spec)} on any {@code LocalSandboxRunner} of the same JVM takes it from there
 * (that runner then owns it: it counts it and its close tears it down) after the lifecycle's checks
 * (run-id label, owner, the recorded policy label) and the driver's own report of what it knows for sure:
 * the egress in effect now (so a spec that locks egress down after setup can be attached), the disk,
 * memory and vCPU bounds the create applied against those a create for the spec would apply here, the
 * environment (differing names only, never values) and the host user its processes run as. A refusal
 * leaves it in the registry. A closed or expired sandbox, one another runner took, and any id from
 * another JVM give {@code SandboxNotFoundException}; one still open in a runner that has not detached it
 * gives {@code AttachRefusedException}. Its lifetime timer runs on while it is detached. At a normal
 * JVM exit the shutdown hook removes detached sandboxes like open ones. No process of a detached sandbox
 * is alive (detach waits for the exec in progress, and no process outlives an exec), so a JVM killed with
 * SIGKILL leaves only its directory, mount and cgroup, which the next runner's start removes. A list
 * egress's proxy stays open in this JVM while detached, with the settings of the runner that started it,
 * until the egress changes.
 */
package dev.sandbox4j.local;
