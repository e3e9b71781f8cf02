/**
 * Internal test tooling: not API, may change in any release.
 * A Modal emulator for tests and local development: {@link dev.sandbox4j.emulators.modal.ModalEmulator}
 * and the standalone {@link dev.sandbox4j.emulators.modal.ModalEmulatorMain}.
 *
 * <p>Modal has no REST API; its SDKs speak gRPC to a control plane ({@code modal.client.ModalClient})
 * and run exec through a task command router ({@code modal.task_command_router.TaskCommandRouter}) on
 * another host:port, authenticated by a per-task JWT. The emulator serves both on loopback. This is a
 * module of its own, {@code sandbox-emulators-modal}, so that grpc-java, protobuf and Netty stay off the
 * classpath of the REST emulators in {@code sandbox-emulators}; it reuses their shared core
 * ({@code Machine}, {@code LocalMachine}, {@code Ledger}, {@code Faults}, {@code ShellWords}).
 *
 * <p>Independent of the adapter: it compiles its own subset of the upstream protos
 * ({@code src/main/proto/modal_emu}, field numbers unchanged, upstream commit in each header, Java
 * package {@code ...modal.internal.proto}), and its state machine and checks are written from the
 * protocol reference ({@code shared/providers/modal.md}) and the official SDK's behaviour. The official
 * JS SDK, npm {@code modal@0.11.1}, runs against it in {@code conformance/run.sh modal}.
 *
 * <p>Served RPCs. Control plane: AuthTokenGet, AppGetOrCreate, EnvironmentGetOrCreate,
 * ImageGetOrCreate and ImageJoinStreaming, SecretGetOrCreate, SandboxCreate / SandboxCreateV2,
 * SandboxGetTaskId(V2), TaskGetCommandRouterAccess, SandboxGetCommandRouterAccess, SandboxWait(V2) as a
 * long poll, SandboxTerminate(V2), SandboxList (V1 sandboxes) and SandboxListV2 (both), filtered by app
 * and tags, paged by {@code before_timestamp}; SandboxGetFromName(V2) (a running sandbox by name in an
 * app), SandboxTagsGet(V2) and SandboxTagsSet(V2) (which replaces the whole set, as the Python SDK's
 * {@code set_tags} documents). Router: TaskExecStart (idempotent by exec id), TaskExecStdioRead from an
 * offset, delivering output as the command writes it, TaskExecWait (long poll), TaskExecPoll, stdin
 * through TaskExecStdinWrite, TaskExecStdinWriteStream and TaskExecStdinStatus; TaskSetNetworkAccess,
 * which switches the local sandbox's egress for the commands started after it (ALLOWLIST as upstream's
 * proto says, and OPEN, which the Python SDK sends; BLOCKED or an unset type is INVALID_ARGUMENT); and the filesystem tool
 * the JS SDK 0.11.1's {@code sandbox.filesystem} runs as an exec ({@code /__modal/.bin/modal-sandbox-fs-tools}
 * with a JSON argument: ReadFile, ListFiles, Stat, WriteFile with the content on stdin, MakeDirectory),
 * served over the local sandbox's files. Anything else answers UNIMPLEMENTED. Checks: the token headers on every control-plane call and {@code x-modal-auth-token}
 * on the V2 family (UNAUTHENTICATED); the router JWT's signature and expiry (UNAUTHENTICATED) and its
 * task (PERMISSION_DENIED); unknown apps, images, sandboxes, tasks and exec ids (NOT_FOUND; a V1 RPC
 * does not know a V2 id and back); {@code timeout_secs} over 24 h, a zero exec timeout, relative
 * workdirs, malformed CIDRs or domains, contradictory network settings (INVALID_ARGUMENT). A create
 * retried with the same {@code x-idempotency-key} gets the first answer.
 *
 * <p>Network access, at create and after TaskSetNetworkAccess alike ({@code WireNetwork.localPolicy}):
 * OPEN is the host's network; BLOCKED and an empty ALLOWLIST are none; any other ALLOWLIST is enforced
 * by the local runner's egress proxy, default deny with its domains and CIDRs allowed together (Modal
 * combines them additively), unless one of its CIDRs admits a canary target (then the host's network,
 * a test rig's convenience). What the local runner cannot enforce exactly (a runner without its egress
 * proxy, a domain sandbox4j's model refuses) is no network at all, stricter than Modal, never weaker.
 *
 * <p>Known differences from Modal: the image is only a recipe (code runs with the host's tools in the
 * local sandbox, whatever the image says, so {@code python3}, {@code node} and {@code bash} are there
 * exactly when the local runner has them, and the adapter's language probe finds those) and a new recipe "builds" at the first ImageJoinStreaming;
 * the entrypoint is not run (the sandbox lives until terminated or its {@code timeout_secs});
 * {@code idle_timeout_secs} is recorded, not enforced; execs of one sandbox run one at a time (the
 * filesystem tool runs beside them); the commands themselves read no stdin (their stdin is at its end:
 * data written to it is FAILED_PRECONDITION, an empty write with {@code eof} is taken), only the
 * filesystem tool's WriteFile takes stdin; a command killed by a signal is answered
 * {@code signal: N} (modal.md 3.9), told from the local runner's exit code 128 + N, so an explicit
 * {@code exit 137} reads as signal 9 too; the emulated filesystem is the local sandbox's working
 * directory ({@code /sandbox}): the tool refuses a path elsewhere and does not follow links
 * (PermissionDenied), where Modal's follows them, Remove and Watch are not served, and a tool call
 * waits for a running command to end (the local sandbox does one thing at a time); an allowlist
 * grants the whole host network when a CIDR admits a canary target, and a domain never does; an allowed
 * domain is reached through the proxy by TLS SNI or by plain HTTP {@code Host}, on the proxy's domain
 * ports (80, 443 and any a test adds, such as the list canary's port), where Modal's domain allowlist
 * (beta) lets only TLS on port 443 through, matched on SNI; {@code *.x} is sandbox4j's (subdomains at any
 * depth, not x), as how Modal matches a wildcard is not documented; under a list the code reaches the
 * network only through that proxy (HTTP and CONNECT tunnels: no UDP, no DNS of its own), where Modal's
 * CIDRs admit any protocol and its DNS stays open; after a
 * TaskSetNetworkAccess a command already running keeps the network it started with (Modal drops its
 * connections the new policy forbids), and since the local runner kills every process of a command when
 * it ends, nothing of one exec outlives it (on Modal a background process does).
 */
package dev.sandbox4j.emulators.modal;
