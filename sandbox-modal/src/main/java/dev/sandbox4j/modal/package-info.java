/**
 * API.
 * The Modal adapter: {@link dev.sandbox4j.modal.ModalSandboxRunner}, over gRPC to Modal's control plane
 * and per-task command router (Modal has no REST API and no official Java client).
 *
 * <p>The generated stubs come from a subset of the upstream protos written for this project
 * ({@code src/main/proto/modal_proto}, field numbers unchanged from modal-labs/modal-client
 * {@code 69519ae}), in {@code dev.sandbox4j.modal.internal.proto}; they are not API. gRPC, Netty
 * (shaded) and protobuf reach only users who depend on {@code sandbox-modal}.
 *
 * <p>Connections: a runner holds one channel (one HTTP/2 connection) to the control plane and one per
 * command-router address ({@code host:port}), shared by every sandbox on that router; each router call
 * carries its own sandbox's JWT ({@code authorization: Bearer}), none is attached to the channel. A router
 * channel no sandbox uses stays open for the next one (at most 8 such idle channels; the oldest closes
 * first). All channels run on one Netty event loop thread of the runner's own ({@code sandbox4j-modal-netty-1},
 * epoll where available); {@code close()} shuts every channel and that thread down.
 *
 * <p>Logs: grpc-netty's HTTP/2 frame logger ({@code io.grpc.netty.shaded.io.grpc.netty.NettyClientHandler},
 * DEBUG) prints every header frame, the token id and secret and both JWTs included, and hex-dumps data
 * frames. The adapter keeps it silent whatever the logging configuration: before it builds a channel it
 * wraps grpc-netty-shaded's default {@code InternalLoggerFactory} so that this one name gets a logger that
 * is never enabled, every other name the factory Netty chose. Limits: the wrapper is JVM-wide for
 * grpc-netty-shaded (other gRPC clients there lose their client frame log too); code that later calls
 * {@code InternalLoggerFactory.setDefaultFactory} replaces it, and connections made after that log frames
 * again until this adapter builds its next channel; an application-made factory (not one of Netty's
 * five) cannot be wrapped, and a WARN line says so.
 *
 * <p>Errors: UNAUTHENTICATED and PERMISSION_DENIED are {@code SandboxAuthenticationException}, NOT_FOUND
 * {@code SandboxNotFoundException}, RESOURCE_EXHAUSTED {@code SandboxRateLimitException} (with the retry
 * policy's wait as {@code retryAfter()} when Modal sent one); a {@code TaskExecStart} throttled with a
 * retry policy is a refusal (the code did not run), a bare RESOURCE_EXHAUSTED there may follow the start.
 *
 * <p>Languages: capabilities are read before any sandbox exists, so a runner declares the configured
 * languages ({@code Builder.languages}, default Python and Bash, what {@code python:3.13-slim} has), or,
 * with {@code Builder.probeLanguages(true)} ({@code SANDBOX4J_MODAL_LANGUAGES=probe}), the interpreters
 * found in its image once when it is built: one deny-all sandbox of at most 5 minutes, one
 * {@code /bin/sh -c} exec of {@code command -v} for {@code python3}, {@code node} and {@code bash}, then
 * its terminate (a failed probe terminates the sandbox and fails the build).
 *
 * <p>Lock-down after setup ({@code Egress.LIVE_UPDATE}): the router's {@code TaskSetNetworkAccess}
 * (in upstream's proto at {@code 69519ae} and in npm {@code modal@0.11.1}), sent once with the request
 * timeout as its deadline and never again after a failure that may have taken effect (only an
 * UNAUTHENTICATED refusal is resent, with fresh router access); a refusal is an
 * {@code UnsupportedPolicyException}. Then one exec SIGKILLs every process carrying an exec marker (what
 * the setup left, such as a daemon), pass after pass until none is found. Modal has no call that reads a
 * sandbox's policy back, so the OK is the only confirmation; attach refuses a lock-down spec for that
 * reason (the lifecycle's rule).
 *
 * <p>Not verified against the real service (no account here): which {@code x-modal-client-type} and
 * {@code x-modal-libmodal-version} Modal accepts from a client that is not one of its SDKs (this one
 * sends the JS SDK's type 8 and {@code sandbox4j-modal/<version>}); whether the server deduplicates a
 * repeated {@code SandboxCreateV2} or {@code TaskExecStart} (so neither is ever resent after an
 * ambiguous failure); the exit status Modal reports when an exec's {@code timeout_secs} fires (the
 * adapter decides a timeout by the clock); whether {@code /proc} scanning in gVisor sees every process
 * of an exec (the kill by marker); that a process which rewrote its own environment escapes the
 * lock-down's kill (it matches by the marker); whether {@code TaskSetNetworkAccess} takes the
 * allow-all allowlist ({@code 0.0.0.0/0}) it sends for a lock-down to allow-all; and the router's TLS
 * certificate with the JVM's trust roots.
 */
package dev.sandbox4j.modal;
