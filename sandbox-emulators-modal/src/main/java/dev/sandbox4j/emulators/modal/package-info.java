/**
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
 * and tags, paged by {@code before_timestamp}. Router: TaskExecStart (idempotent by exec id),
 * TaskExecStdioRead from an offset, TaskExecWait (long poll), TaskExecPoll. Anything else answers
 * UNIMPLEMENTED. Checks: the token headers on every control-plane call and {@code x-modal-auth-token}
 * on the V2 family (UNAUTHENTICATED); the router JWT's signature and expiry (UNAUTHENTICATED) and its
 * task (PERMISSION_DENIED); unknown apps, images, sandboxes, tasks and exec ids (NOT_FOUND; a V1 RPC
 * does not know a V2 id and back); {@code timeout_secs} over 24 h, a zero exec timeout, relative
 * workdirs, malformed CIDRs or domains, contradictory network settings (INVALID_ARGUMENT). A create
 * retried with the same {@code x-idempotency-key} gets the first answer.
 *
 * <p>Known differences from Modal: the image is only a recipe (code runs with the host's tools in the
 * local sandbox, whatever the image says) and a new recipe "builds" at the first ImageJoinStreaming;
 * the entrypoint is not run (the sandbox lives until terminated or its {@code timeout_secs});
 * {@code idle_timeout_secs} is recorded, not enforced; execs of one sandbox run one at a time; stdio
 * arrives when the command ends, not as it is written (so a client whose deadline equals the exec
 * timeout may see its own deadline first), and with {@code stderr_config STDOUT} stderr follows stdout
 * instead of interleaving; an allowlist grants the whole host network when a CIDR admits a canary
 * target, and a domain never does.
 */
package dev.sandbox4j.emulators.modal;
