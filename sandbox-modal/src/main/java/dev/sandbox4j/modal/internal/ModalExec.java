package dev.sandbox4j.modal.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.InputFile;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.spi.Backoff;
import dev.sandbox4j.spi.CodeCommand;
import dev.sandbox4j.spi.ExecOutcome;
import dev.sandbox4j.spi.OutputSink;
import dev.sandbox4j.spi.Secret;
import dev.sandbox4j.modal.internal.proto.ModalApi;
import dev.sandbox4j.modal.internal.proto.ModalClientGrpc;
import dev.sandbox4j.modal.internal.proto.ModalRouterApi;
import dev.sandbox4j.modal.internal.proto.TaskCommandRouterGrpc;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.Context;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Modal's per-task command router ({@code modal.task_command_router.TaskCommandRouter}) for
 * {@link ModalDriver}: files written with fixed scripts, and each exec as {@code TaskExecStart}, two
 * concurrent {@code TaskExecStdioRead} streams and {@code TaskExecWait}, with the kill by marker.
 * The control-plane calls (create, list, terminate) stay in {@link ModalDriver}.
 */
final class ModalExec {
    private static final Logger log = LoggerFactory.getLogger(ModalDriver.class);
    private static final String PROVIDER = ModalDriver.PROVIDER;
    private static final Set<Status.Code> NEVER_STARTED = Set.of(Status.Code.INVALID_ARGUMENT,
            Status.Code.FAILED_PRECONDITION, Status.Code.NOT_FOUND, Status.Code.PERMISSION_DENIED,
            Status.Code.UNAUTHENTICATED, Status.Code.ALREADY_EXISTS, Status.Code.UNIMPLEMENTED,
            Status.Code.OUT_OF_RANGE);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final ModalSettings settings;
    private final ModalRpc rpc;
    private final ModalChannels channels;
    private final Backoff streamBackoff;
    private final ExecutorService io;
    private final AtomicInteger routerCalls = new AtomicInteger();

    ModalExec(ModalSettings settings, ModalRpc rpc, ModalChannels channels) {
        this.settings = settings;
        this.channels = channels;
        this.rpc = rpc;
        // the JS SDK resumes a dropped stdio stream after 10 ms, doubling
        this.streamBackoff = settings.backoff.toBuilder().base(Duration.ofMillis(10)).max(Duration.ofSeconds(1)).build();
        AtomicInteger n = new AtomicInteger();
        this.io = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "sandbox4j-modal-io-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** The router calls sent so far, every retry counted. */
    int routerCalls() {
        return routerCalls.get();
    }

    // ---------------------------------------------------------------- router

    /** The sandbox's view of its router's shared channel: its own JWT on each call. */
    private Channel router(ModalHandle h) {
        return h.router(this::leaseRouter);
    }

    private ModalChannels.Lease leaseRouter(String url) {
        URI u;
        try {
            u = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw SandboxException.builder("modal: the command router URL is not a URL").provider(PROVIDER).build();
        }
        String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
        if (u.getHost() == null || !(scheme.equals("https") || settings.plaintext && scheme.equals("http"))) {
            // TLS always, unless the control plane itself is plaintext (a local server), as the SDKs do
            throw SandboxException.builder("modal: the command router URL must be https://host[:port]")
                    .provider(PROVIDER).build();
        }
        return channels.leaseRouter(u.getHost(), u.getPort() > 0 ? u.getPort() : 443);
    }

    /** New router access for {@code h}: {@code SandboxGetCommandRouterAccess} (V2) or {@code TaskGetCommandRouterAccess} (V1). */
    private void refreshRouter(ModalHandle h) throws InterruptedException {
        String url;
        String jwt;
        if (h.v2()) {
            ModalApi.SandboxGetCommandRouterAccessResponse r = rpc.unary(ModalClientGrpc.getSandboxGetCommandRouterAccessMethod(),
                    ModalApi.SandboxGetCommandRouterAccessRequest.newBuilder().setSandboxId(h.id()).build(), true);
            url = r.getUrl();
            jwt = r.getJwt();
        } else {
            ModalApi.TaskGetCommandRouterAccessResponse r = rpc.unary(ModalClientGrpc.getTaskGetCommandRouterAccessMethod(),
                    ModalApi.TaskGetCommandRouterAccessRequest.newBuilder().setTaskId(h.taskId()).build(), true);
            url = r.getUrl();
            jwt = r.getJwt();
        }
        if (url.isEmpty() || jwt.isEmpty()) {
            throw SandboxException.builder("modal: command router access for sandbox " + h.id() + " came back empty")
                    .provider(PROVIDER).retriable(true).build();
        }
        h.routerAccess(url, Secret.of(jwt));
    }

    /** One router unary call with a wall-clock deadline; an UNAUTHENTICATED answer (expired JWT) refreshes the access once. */
    private <Q, R> R routerUnary(ModalHandle h, MethodDescriptor<Q, R> method, Q req, Duration deadline)
            throws InterruptedException {
        boolean refreshed = false;
        while (true) {
            routerCalls.incrementAndGet();
            try {
                return ClientCalls.blockingUnaryCall(router(h), method,
                        CallOptions.DEFAULT.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS), req);
            } catch (StatusRuntimeException e) {
                ModalRpc.rethrowInterrupt(e);
                if (e.getStatus().getCode() == Status.Code.UNAUTHENTICATED && !refreshed) {
                    refreshed = true; // refused, so nothing ran: safe to send again
                    refreshRouter(h);
                    continue;
                }
                throw e;
            }
        }
    }

    // ---------------------------------------------------------------- files

    void writeFiles(ModalHandle sandbox, List<InputFile> files) throws InterruptedException {
        for (InputFile f : files) {
            writeFile(sandbox, f.path(), f.content());
        }
    }

    /**
     * Writes a file with fixed scripts, the path and the content (base64, 48 KiB a chunk) as
     * arguments: {@code sh -c ModalDriver.WRITE_SCRIPT sh PATH CHUNK}, then {@code ModalDriver.APPEND_SCRIPT} for the rest.
     * Two RPCs a chunk (start, wait). Arguments rather than {@code TaskExecStdinWrite}, which not
     * every router implementation serves.
     */
    void writeFile(ModalHandle h, String path, byte[] content) throws InterruptedException {
        String what = "modal: writing " + path + " in sandbox " + h.id();
        int off = 0;
        do {
            int n = Math.min(ModalDriver.FILE_CHUNK, content.length - off);
            String chunk = java.util.Base64.getEncoder().encodeToString(java.util.Arrays.copyOfRange(content, off, off + n));
            String execId = UUID.randomUUID().toString();
            ModalRouterApi.TaskExecStartRequest.Builder start = ModalRouterApi.TaskExecStartRequest.newBuilder()
                    .setTaskId(h.taskId()).setExecId(execId)
                    .addAllCommandArgs(List.of("/bin/sh", "-c", off == 0 ? ModalDriver.WRITE_SCRIPT : ModalDriver.APPEND_SCRIPT, "sh", path, chunk))
                    .setTimeoutSecs(ModalPolicy.seconds(settings.requestTimeout));
            if (settings.workdir != null) {
                start.setWorkdir(settings.workdir);
            }
            try {
                routerUnary(h, TaskCommandRouterGrpc.getTaskExecStartMethod(), start.build(), settings.requestTimeout);
                ModalRouterApi.TaskExecWaitResponse r = routerUnary(h, TaskCommandRouterGrpc.getTaskExecWaitMethod(),
                        ModalRouterApi.TaskExecWaitRequest.newBuilder().setTaskId(h.taskId()).setExecId(execId).build(),
                        settings.requestTimeout);
                if (r.getExitStatusCase() != ModalRouterApi.TaskExecWaitResponse.ExitStatusCase.CODE || r.getCode() != 0) {
                    throw SandboxException.builder(what + " failed (" + exitText(r) + ")").provider(PROVIDER).build();
                }
            } catch (StatusRuntimeException e) {
                throw rpc.map(e, what, false);
            }
            off += n;
        } while (off < content.length);
    }

    private static String exitText(ModalRouterApi.TaskExecWaitResponse r) {
        switch (r.getExitStatusCase()) {
            case CODE:
                return "exit code " + r.getCode();
            case SIGNAL:
                return "signal " + r.getSignal();
            default:
                return "no exit status";
        }
    }

    // ---------------------------------------------------------------- files: Modal's filesystem tool

    /**
     * The tool Modal puts in every sandbox; the JS SDK 0.11.1's {@code sandbox.filesystem} runs it as an
     * exec with one JSON argument ({@code SANDBOX_FS_TOOLS_PATH}, {@code make*Command} in its dist/index.js).
     */
    static final String FS_TOOLS = "/__modal/.bin/modal-sandbox-fs-tools";
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Past this much stderr of the tool (its error JSON is one short line) the rest is not read. */
    private static final int TOOL_STDERR_CAP = 64 * 1024;

    /** What one run of the tool, or of a fixed command, gave back. */
    private static final class ToolRun {
        final ModalRouterApi.TaskExecWaitResponse exit;
        final byte[] stdout;
        final boolean capped;
        final byte[] stderr;

        ToolRun(ModalRouterApi.TaskExecWaitResponse exit, byte[] stdout, boolean capped, byte[] stderr) {
            this.exit = exit;
            this.stdout = stdout;
            this.capped = capped;
            this.stderr = stderr;
        }

        boolean ok() {
            return exit.getExitStatusCase() == ModalRouterApi.TaskExecWaitResponse.ExitStatusCase.CODE && exit.getCode() == 0;
        }
    }

    /**
     * One run as the SDK makes it: {@code TaskExecStart} (argv, both streams PIPE, nothing else),
     * {@code TaskExecWait}, then one stdio read: stdout when it exited 0 (kept up to {@code stdoutCap},
     * the call cancelled past it), stderr when it did not. Three router calls.
     */
    private ToolRun small(ModalHandle h, List<String> argv, long stdoutCap) throws InterruptedException {
        String execId = UUID.randomUUID().toString();
        ModalRouterApi.TaskExecStartRequest start = ModalRouterApi.TaskExecStartRequest.newBuilder()
                .setTaskId(h.taskId()).setExecId(execId).addAllCommandArgs(argv)
                .setStdoutConfig(ModalRouterApi.TaskExecStdoutConfig.TASK_EXEC_STDOUT_CONFIG_PIPE)
                .setStderrConfig(ModalRouterApi.TaskExecStderrConfig.TASK_EXEC_STDERR_CONFIG_PIPE)
                .build();
        String what = "modal: " + (argv.get(0).equals(FS_TOOLS) ? "the filesystem tool" : argv.get(0)) + " in sandbox " + h.id();
        long deadline = System.nanoTime() + settings.requestTimeout.toNanos();
        try {
            routerUnary(h, TaskCommandRouterGrpc.getTaskExecStartMethod(), start, settings.requestTimeout);
            ModalRouterApi.TaskExecWaitRequest wait = ModalRouterApi.TaskExecWaitRequest.newBuilder()
                    .setTaskId(h.taskId()).setExecId(execId).build();
            ModalRouterApi.TaskExecWaitResponse exit;
            while (true) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw SandboxException.builder(what + " did not end in " + settings.requestTimeout).provider(PROVIDER)
                            .retriable(true).build();
                }
                try {
                    exit = routerUnary(h, TaskCommandRouterGrpc.getTaskExecWaitMethod(), wait, Duration.ofNanos(left));
                    break;
                } catch (StatusRuntimeException e) {
                    if (e.getStatus().getCode() != Status.Code.DEADLINE_EXCEEDED) {
                        throw e;
                    }
                }
            }
            boolean ok = exit.getExitStatusCase() == ModalRouterApi.TaskExecWaitResponse.ExitStatusCase.CODE && exit.getCode() == 0;
            long cap = ok ? stdoutCap : TOOL_STDERR_CAP;
            java.io.ByteArrayOutputStream got = new java.io.ByteArrayOutputStream();
            boolean capped = readBounded(h, execId, ok ? ModalRouterApi.TaskExecStdioFileDescriptor.TASK_EXEC_STDIO_FILE_DESCRIPTOR_STDOUT
                    : ModalRouterApi.TaskExecStdioFileDescriptor.TASK_EXEC_STDIO_FILE_DESCRIPTOR_STDERR, cap, deadline, got);
            byte[] b = got.toByteArray();
            return ok ? new ToolRun(exit, b, capped, new byte[0]) : new ToolRun(exit, new byte[0], false, b);
        } catch (StatusRuntimeException e) {
            throw rpc.map(e, what, false);
        }
    }

    /** The language probe's run ({@link ModalDriver}): its stdout, up to 4 KiB; a failure or a non-zero exit throws. */
    String probe(ModalHandle h, List<String> argv) throws InterruptedException {
        ToolRun r = small(h, argv, 4096);
        if (!r.ok() || r.capped) {
            throw SandboxException.builder("modal: the language probe failed in sandbox " + h.id() + " ("
                    + (r.capped ? "too much output" : exitText(r.exit)) + ")").provider(PROVIDER).build();
        }
        return new String(r.stdout, StandardCharsets.UTF_8);
    }

    /**
     * Reads one stdio stream to its end, resuming by offset after a transient failure, keeping at most
     * {@code cap} bytes: past it the call is cancelled and true returned.
     */
    private boolean readBounded(ModalHandle h, String execId, ModalRouterApi.TaskExecStdioFileDescriptor fd, long cap,
            long deadline, java.io.ByteArrayOutputStream into) throws InterruptedException {
        int retries = 0;
        while (true) {
            ModalRouterApi.TaskExecStdioReadRequest req = ModalRouterApi.TaskExecStdioReadRequest.newBuilder()
                    .setTaskId(h.taskId()).setExecId(execId).setOffset(into.size()).setFileDescriptor(fd).build();
            routerCalls.incrementAndGet();
            Context.CancellableContext call = Context.current().withCancellation();
            Context previous = call.attach();
            try {
                Iterator<ModalRouterApi.TaskExecStdioReadResponse> it = ClientCalls.blockingServerStreamingCall(
                        router(h), TaskCommandRouterGrpc.getTaskExecStdioReadMethod(),
                        CallOptions.DEFAULT.withDeadlineAfter(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS), req);
                while (it.hasNext()) {
                    ByteString data = it.next().getData();
                    long room = cap - into.size();
                    if (data.size() > room) {
                        data.substring(0, (int) room).writeTo(into);
                        return true;
                    }
                    data.writeTo(into);
                }
                return false;
            } catch (StatusRuntimeException e) {
                ModalRpc.rethrowInterrupt(e);
                if (ModalRpc.RETRIABLE.contains(e.getStatus().getCode()) && e.getStatus().getCode() != Status.Code.DEADLINE_EXCEEDED
                        && retries < ModalDriver.STREAM_RETRIES) {
                    retries++;
                    streamBackoff.sleep(streamBackoff.delay(retries));
                    continue;
                }
                throw e;
            } catch (java.io.IOException e) {
                throw new IllegalStateException(e); // a ByteArrayOutputStream does not fail
            } finally {
                call.detach(previous);
                call.cancel(null);
            }
        }
    }

    /** One operation of the filesystem tool on an absolute path. */
    private ToolRun fsTool(ModalHandle h, String op, String absolute, long stdoutCap) throws InterruptedException {
        com.fasterxml.jackson.databind.node.ObjectNode cmd = JSON.createObjectNode();
        cmd.putObject(op).put("path", absolute);
        return small(h, List.of(FS_TOOLS, cmd.toString()), stdoutCap);
    }

    /** The tool's error ({@code {"error_kind","message"}} on stderr) as this library's exception. */
    private SandboxException toolFailure(ModalHandle h, ToolRun r, String shown, String what) {
        String kind = "";
        try {
            com.fasterxml.jackson.databind.JsonNode n = JSON.readTree(r.stderr);
            kind = n == null ? "" : n.path("error_kind").asText("");
        } catch (java.io.IOException e) {
            // unstructured: the kind stays unknown
        }
        if (kind.equals("NotFound")) {
            return SandboxException.builder(PROVIDER + ": " + shown + ": no such " + what + " in sandbox " + h.id())
                    .provider(PROVIDER).httpStatus(404).build();
        }
        return SandboxException.builder(PROVIDER + ": " + shown + ": the filesystem tool failed in sandbox " + h.id() + " ("
                + (kind.isEmpty() ? exitText(r.exit) : kind) + ")").provider(PROVIDER).build();
    }

    /** The working directory, absolute: the configured one, else the image's, asked once per sandbox ({@code pwd}). */
    private String workdir(ModalHandle h) throws InterruptedException {
        if (settings.workdir != null) {
            return settings.workdir;
        }
        String w = h.workdir();
        if (w != null) {
            return w;
        }
        ToolRun r = small(h, List.of("pwd"), 4096);
        String out = new String(r.stdout, StandardCharsets.UTF_8);
        if (out.endsWith("\n")) {
            out = out.substring(0, out.length() - 1);
        }
        if (!r.ok() || r.capped || !out.startsWith("/") || out.contains("\n")) {
            throw SandboxException.builder("modal: the working directory of sandbox " + h.id() + " could not be told")
                    .provider(PROVIDER).build();
        }
        h.workdir(out);
        return out;
    }

    private static String join(String root, String rel) {
        return rel.isEmpty() ? root : root.endsWith("/") ? root + rel : root + "/" + rel;
    }

    /**
     * The tool's {@code Stat} of each component of {@code rel} (which describes a link itself, not its
     * target): a link anywhere on the path is refused, every parent must be a directory. Returns the
     * last component's entry. The tool follows links when it reads, so this check is what keeps reads
     * off them; code still running in the sandbox could swap a component between the check and the
     * read, which only ever reaches files inside its own sandbox.
     */
    private com.fasterxml.jackson.databind.JsonNode statPath(ModalHandle h, String root, String rel, String shown, String what)
            throws InterruptedException {
        String[] parts = rel.split("/");
        com.fasterxml.jackson.databind.JsonNode last = null;
        StringBuilder p = new StringBuilder();
        for (int i = 0; i < parts.length; i++) {
            p.append(i == 0 ? "" : "/").append(parts[i]);
            ToolRun r = fsTool(h, "Stat", join(root, p.toString()), 1 << 20);
            if (!r.ok()) {
                throw toolFailure(h, r, shown, what);
            }
            try {
                last = JSON.readTree(r.stdout);
            } catch (java.io.IOException e) {
                last = null;
            }
            String type = last == null ? "" : last.path("type").asText("");
            if (r.capped || type.isEmpty()) {
                throw SandboxException.builder(PROVIDER + ": " + shown + ": the filesystem tool's Stat was not understood in sandbox "
                        + h.id()).provider(PROVIDER).build();
            }
            if (type.equals("symlink")) {
                throw SandboxException.builder(PROVIDER + ": " + shown + ": a symbolic link is on the path (links are not followed) in sandbox "
                        + h.id()).provider(PROVIDER).build();
            }
            if (i < parts.length - 1 && !type.equals("directory")) {
                throw SandboxException.builder(PROVIDER + ": " + shown + ": no such " + what + " in sandbox " + h.id())
                        .provider(PROVIDER).httpStatus(404).build();
            }
        }
        return last;
    }

    /**
     * Reads a file through the tool: a {@code Stat} per path component (no link, a regular file, its
     * size), then {@code ReadFile}, its stdout cut at {@code maxBytes} (the call cancelled past it).
     */
    dev.sandbox4j.api.SandboxFile readFile(ModalHandle h, String path, long maxBytes) throws InterruptedException {
        String root = workdir(h);
        com.fasterxml.jackson.databind.JsonNode st = statPath(h, root, path, path, "file");
        if (!st.path("type").asText().equals("file")) {
            throw SandboxException.builder(PROVIDER + ": " + path + ": not a regular file in sandbox " + h.id())
                    .provider(PROVIDER).build();
        }
        long size = st.path("size").asLong(-1);
        byte[] content = new byte[0];
        boolean capped = false;
        if (maxBytes > 0) {
            ToolRun r = fsTool(h, "ReadFile", join(root, path), maxBytes);
            if (!r.ok()) {
                throw toolFailure(h, r, path, "file");
            }
            content = r.stdout;
            capped = r.capped;
        }
        if (size < content.length) {
            size = content.length; // it grew since the Stat
        }
        return dev.sandbox4j.api.SandboxFile.builder(path).content(content).size(size)
                .truncated(capped || content.length < size).build();
    }

    /**
     * Lists a directory through the tool: a {@code Stat} per path component (no link, a directory), then
     * {@code ListFiles}, whose entries (an array of {@code name, type, size, ...}; a link is
     * {@code "symlink"} and not followed) become this library's, read up to
     * {@link dev.sandbox4j.spi.ListingScript#MAX_OUTPUT_BYTES} (past it the listing is refused).
     */
    List<dev.sandbox4j.api.FileEntry> listFiles(ModalHandle h, String directory) throws InterruptedException {
        String shown = directory.isEmpty() ? "." : directory;
        String root = workdir(h);
        if (!directory.isEmpty()) {
            com.fasterxml.jackson.databind.JsonNode st = statPath(h, root, directory, shown, "directory");
            if (!st.path("type").asText().equals("directory")) {
                throw SandboxException.builder(PROVIDER + ": " + shown + ": not a directory in sandbox " + h.id())
                        .provider(PROVIDER).httpStatus(404).build();
            }
        }
        ToolRun r = fsTool(h, "ListFiles", join(root, directory), dev.sandbox4j.spi.ListingScript.MAX_OUTPUT_BYTES);
        if (!r.ok()) {
            throw toolFailure(h, r, shown, "directory");
        }
        if (r.capped) {
            throw SandboxException.builder(PROVIDER + ": " + shown + " has more entries than a listing may hold ("
                    + dev.sandbox4j.spi.ListingScript.MAX_OUTPUT_BYTES + " bytes of output)").provider(PROVIDER).build();
        }
        com.fasterxml.jackson.databind.JsonNode all;
        try {
            all = JSON.readTree(r.stdout);
        } catch (java.io.IOException e) {
            all = null;
        }
        if (all == null || !all.isArray()) {
            throw SandboxException.builder(PROVIDER + ": the listing of " + shown + " in sandbox " + h.id() + " was not understood")
                    .provider(PROVIDER).build();
        }
        List<dev.sandbox4j.api.FileEntry> entries = new ArrayList<>();
        for (com.fasterxml.jackson.databind.JsonNode e : all) {
            String name = e.path("name").asText("");
            if (name.isEmpty() || name.contains("/") || name.equals(".") || name.equals("..")) {
                continue;
            }
            String type = e.path("type").asText("");
            dev.sandbox4j.api.FileEntry.Type t = type.equals("symlink") || !e.path("symlink_target").isNull()
                    && !e.path("symlink_target").isMissingNode() ? dev.sandbox4j.api.FileEntry.Type.SYMLINK
                    : type.equals("file") ? dev.sandbox4j.api.FileEntry.Type.FILE
                    : type.equals("directory") ? dev.sandbox4j.api.FileEntry.Type.DIRECTORY : dev.sandbox4j.api.FileEntry.Type.OTHER;
            try {
                entries.add(dev.sandbox4j.api.FileEntry.of(directory.isEmpty() ? name : directory + "/" + name, t,
                        t == dev.sandbox4j.api.FileEntry.Type.FILE ? Math.max(0, e.path("size").asLong(0)) : 0));
            } catch (IllegalArgumentException ex) {
                // a name the file API cannot address (a control character, a backslash): left out
            }
        }
        entries.sort(java.util.Comparator.comparing(dev.sandbox4j.api.FileEntry::path));
        return entries;
    }

    // ---------------------------------------------------------------- exec

    ExecOutcome exec(ModalHandle sandbox, Execution execution, OutputSink sink) throws InterruptedException {
        return run(sandbox, command(sandbox, execution), execution.budget(), sink);
    }

    /** argv for the interpreter; code with a NUL or longer than the argv limit goes by file. */
    private List<String> command(ModalHandle h, Execution execution) throws InterruptedException {
        CodeCommand command = CodeCommand.of(execution.language());
        String code = execution.code();
        byte[] bytes = code.getBytes(StandardCharsets.UTF_8);
        if (bytes.length <= settings.argvLimitBytes && command.fitsInline(code, ModalDriver.MAX_ARGS_BYTES)) {
            return command.inline(code);
        }
        // relative: the working directory outlives one exec where /tmp may not (a tmpfs per command)
        String path = ".sandbox4j/code-" + Long.toUnsignedString(RANDOM.nextLong(), 36) + command.extension();
        writeFile(h, path, bytes);
        return command.file(path);
    }

    private ExecOutcome run(ModalHandle h, List<String> argv, Duration budget, OutputSink sink) throws InterruptedException {
        String execId = UUID.randomUUID().toString();
        Map<String, String> env = new LinkedHashMap<>(h.env());
        env.put(ModalDriver.EXEC_MARKER, execId);
        ModalRouterApi.TaskExecStartRequest.Builder start = ModalRouterApi.TaskExecStartRequest.newBuilder()
                .setTaskId(h.taskId())
                .setExecId(execId)
                .addAllCommandArgs(argv)
                // the proto default DEVNULL would silently drop the output
                .setStdoutConfig(ModalRouterApi.TaskExecStdoutConfig.TASK_EXEC_STDOUT_CONFIG_PIPE)
                .setStderrConfig(ModalRouterApi.TaskExecStderrConfig.TASK_EXEC_STDERR_CONFIG_PIPE)
                .setTimeoutSecs(ModalPolicy.seconds(budget))
                .putAllEnv(env);
        if (settings.workdir != null) {
            start.setWorkdir(settings.workdir);
        }
        long t0 = System.nanoTime();
        try {
            // never retried after an ambiguous failure: the router's deduplication by exec_id is unverified
            routerUnary(h, TaskCommandRouterGrpc.getTaskExecStartMethod(), start.build(), settings.requestTimeout);
        } catch (StatusRuntimeException e) {
            // a throttle carrying Modal's retry policy is the server's refusal too (a bare RESOURCE_EXHAUSTED
            // may be gRPC's own message-size check on the answer, after the start)
            boolean refused = NEVER_STARTED.contains(e.getStatus().getCode())
                    || (e.getStatus().getCode() == Status.Code.RESOURCE_EXHAUSTED && ModalRpc.retryAfter(e).isPresent());
            SandboxException mapped = rpc.map(e, "modal: TaskExecStart in sandbox " + h.id(), !refused, !refused);
            if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
                throw new SandboxNotFoundException(mapped.toBuilder());
            }
            throw mapped;
        }
        long deadline = t0 + budget.toNanos() + settings.execGrace.toNanos();
        Exec x = new Exec(h, execId, deadline, sink);
        x.start();
        boolean finished;
        try {
            finished = x.event.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            // the lifecycle tears the sandbox down on an interrupt, which ends the command too
            x.cancel();
            throw e;
        }
        if (!finished) {
            x.cancel();
            kill(h, execId);
            return ExecOutcome.timedOut();
        }
        if (x.capped.get()) {
            x.cancel();
            kill(h, execId);
            return ExecOutcome.outputLimit();
        }
        if (x.failure.get() != null) {
            x.cancel();
            kill(h, execId);
            throw x.failure.get();
        }
        ModalRouterApi.TaskExecWaitResponse exit = x.exit.get();
        if (exit == null) {
            x.cancel();
            kill(h, execId);
            return ExecOutcome.timedOut();
        }
        x.drain(deadline);
        if (x.capped.get()) {
            return ExecOutcome.outputLimit();
        }
        if (x.failure.get() != null) {
            throw x.failure.get();
        }
        // Modal's exit status cannot tell its own timeout kill from the command's exit: decide by the clock
        boolean overBudget = System.nanoTime() - t0 >= budget.toNanos();
        if (exit.getExitStatusCase() == ModalRouterApi.TaskExecWaitResponse.ExitStatusCase.SIGNAL) {
            return overBudget ? ExecOutcome.timedOut() : ExecOutcome.killed(128 + exit.getSignal());
        }
        if (exit.getExitStatusCase() != ModalRouterApi.TaskExecWaitResponse.ExitStatusCase.CODE) {
            throw SandboxException.builder("modal: TaskExecWait in sandbox " + h.id() + " answered without an exit status")
                    .provider(PROVIDER).retriable(true).codeMayHaveRun(true).build();
        }
        if (overBudget && exit.getCode() != 0) {
            return ExecOutcome.timedOut();
        }
        return ExecOutcome.exited(exit.getCode());
    }

    /**
     * Best effort, in the background (a router may queue it behind the command it kills): SIGKILL to
     * every process carrying this exec's marker. Modal's timeout_secs kills the command anyway, and a
     * teardown ends everything.
     */
    private void kill(ModalHandle h, String execId) {
        try {
            io.submit(() -> killNow(h, execId));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            log.debug("modal sandbox {}: driver closed, exec {} not killed", h.id(), execId);
        }
    }

    private void killNow(ModalHandle h, String execId) {
        String killId = UUID.randomUUID().toString();
        ModalRouterApi.TaskExecStartRequest req = ModalRouterApi.TaskExecStartRequest.newBuilder()
                .setTaskId(h.taskId()).setExecId(killId)
                .addAllCommandArgs(List.of("/bin/sh", "-c", ModalDriver.KILL_SCRIPT, "sh", ModalDriver.EXEC_MARKER, execId))
                .setTimeoutSecs((int) ModalDriver.KILL_DEADLINE.getSeconds())
                .build();
        try {
            routerUnary(h, TaskCommandRouterGrpc.getTaskExecStartMethod(), req, ModalDriver.KILL_DEADLINE);
            routerUnary(h, TaskCommandRouterGrpc.getTaskExecWaitMethod(),
                    ModalRouterApi.TaskExecWaitRequest.newBuilder().setTaskId(h.taskId()).setExecId(killId).build(), ModalDriver.KILL_DEADLINE);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            // also when the sandbox was released (torn down) before the kill went out
            log.debug("modal sandbox {}: could not kill exec {}: {}", h.id(), execId, rpc.redact(String.valueOf(e.getMessage())));
        }
    }

    // ---------------------------------------------------------------- lock-down

    /** Router refusals after which the policy in force is the old one: the server never applied the call. */
    private static final Set<Status.Code> POLICY_REFUSED = Set.of(Status.Code.INVALID_ARGUMENT,
            Status.Code.FAILED_PRECONDITION, Status.Code.UNIMPLEMENTED, Status.Code.OUT_OF_RANGE);

    /**
     * {@code TaskSetNetworkAccess{task_id, network_access}} on the sandbox's router, one call within the
     * request timeout. Sent again only after UNAUTHENTICATED (a refused call, with fresh router access):
     * any other failure may have happened after the server applied it, and Modal has no call that reads
     * the policy back, so nothing is resent and the failure goes up (the lifecycle tears the sandbox down).
     * A refusal (INVALID_ARGUMENT, FAILED_PRECONDITION, UNIMPLEMENTED, OUT_OF_RANGE) is an
     * {@link UnsupportedPolicyException}.
     */
    void setNetworkAccess(ModalHandle h, ModalApi.NetworkAccess access, String shown) throws InterruptedException {
        ModalRouterApi.TaskSetNetworkAccessRequest req = ModalRouterApi.TaskSetNetworkAccessRequest.newBuilder()
                .setTaskId(h.taskId()).setNetworkAccess(access).build();
        try {
            routerUnary(h, TaskCommandRouterGrpc.getTaskSetNetworkAccessMethod(), req, settings.requestTimeout);
        } catch (StatusRuntimeException e) {
            Status.Code code = e.getStatus().getCode();
            if (POLICY_REFUSED.contains(code)) {
                String desc = e.getStatus().getDescription();
                throw new UnsupportedPolicyException(PROVIDER, List.of(ModalRpc.limit(rpc.redact("Modal refused the lock-down of sandbox "
                        + h.id() + " to " + shown + " (TaskSetNetworkAccess: " + code
                        + (desc == null || desc.isEmpty() ? "" : ": " + desc) + ")"))));
            }
            throw rpc.map(e, "modal: TaskSetNetworkAccess (lock-down) for sandbox " + h.id(), true);
        }
    }

    /**
     * Kills every process that carries an exec marker ({@link ModalDriver#KILL_MARKED_SCRIPT}: what the
     * setup commands left running, such as a daemon), as the local runner leaves nothing of one exec
     * for the next; one exec of a fixed script, waited for within the request timeout. It carries no
     * marker itself. Fails (SandboxException) when the script could not clear them or did not end.
     */
    void killMarked(ModalHandle h) throws InterruptedException {
        String what = "modal: killing the setup's processes in sandbox " + h.id();
        String execId = UUID.randomUUID().toString();
        ModalRouterApi.TaskExecStartRequest req = ModalRouterApi.TaskExecStartRequest.newBuilder()
                .setTaskId(h.taskId()).setExecId(execId)
                .addAllCommandArgs(List.of("/bin/sh", "-c", ModalDriver.KILL_MARKED_SCRIPT, "sh", ModalDriver.EXEC_MARKER))
                .setTimeoutSecs(ModalPolicy.seconds(settings.requestTimeout))
                .build();
        long deadline = System.nanoTime() + settings.requestTimeout.toNanos();
        try {
            routerUnary(h, TaskCommandRouterGrpc.getTaskExecStartMethod(), req, settings.requestTimeout);
            ModalRouterApi.TaskExecWaitRequest wait = ModalRouterApi.TaskExecWaitRequest.newBuilder()
                    .setTaskId(h.taskId()).setExecId(execId).build();
            ModalRouterApi.TaskExecWaitResponse exit = routerUnary(h, TaskCommandRouterGrpc.getTaskExecWaitMethod(), wait,
                    Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
            if (exit.getExitStatusCase() != ModalRouterApi.TaskExecWaitResponse.ExitStatusCase.CODE || exit.getCode() != 0) {
                throw SandboxException.builder(what + " failed (" + exitText(exit) + ")").provider(PROVIDER).build();
            }
        } catch (StatusRuntimeException e) {
            throw rpc.map(e, what, false);
        }
    }

    /** The two stdio streams and the wait of one exec, on the driver's I/O threads. */
    private final class Exec {
        final ModalHandle h;
        final String execId;
        final long deadline;
        final OutputSink sink;
        final CountDownLatch event = new CountDownLatch(1);
        final AtomicReference<ModalRouterApi.TaskExecWaitResponse> exit = new AtomicReference<>();
        final AtomicReference<SandboxException> failure = new AtomicReference<>();
        final java.util.concurrent.atomic.AtomicBoolean capped = new java.util.concurrent.atomic.AtomicBoolean();
        volatile boolean stopped;
        final List<Future<?>> readers = new ArrayList<>();
        Future<?> waiter;

        Exec(ModalHandle h, String execId, long deadline, OutputSink sink) {
            this.h = h;
            this.execId = execId;
            this.deadline = deadline;
            this.sink = sink;
        }

        void start() {
            readers.add(io.submit(() -> read(ModalRouterApi.TaskExecStdioFileDescriptor.TASK_EXEC_STDIO_FILE_DESCRIPTOR_STDOUT)));
            readers.add(io.submit(() -> read(ModalRouterApi.TaskExecStdioFileDescriptor.TASK_EXEC_STDIO_FILE_DESCRIPTOR_STDERR)));
            waiter = io.submit(this::waitExit);
        }

        void cancel() {
            stopped = true;
            readers.forEach(f -> f.cancel(true));
            if (waiter != null) {
                waiter.cancel(true);
            }
        }

        /** After the exit status: the streams end at EOF; wait for them until the deadline. */
        void drain(long until) throws InterruptedException {
            for (Future<?> f : readers) {
                try {
                    f.get(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (TimeoutException e) {
                    log.debug("modal sandbox {}: output of exec {} did not end by the deadline", h.id(), execId);
                    cancel();
                    return;
                } catch (ExecutionException e) {
                    fail(SandboxException.builder("modal: reading output failed: " + e.getCause())
                            .provider(PROVIDER).codeMayHaveRun(true).build());
                } catch (InterruptedException e) {
                    cancel();
                    throw e;
                }
            }
        }

        private void fail(SandboxException e) {
            failure.compareAndSet(null, e);
            event.countDown();
        }

        private void read(ModalRouterApi.TaskExecStdioFileDescriptor fd) {
            boolean stdout = fd == ModalRouterApi.TaskExecStdioFileDescriptor.TASK_EXEC_STDIO_FILE_DESCRIPTOR_STDOUT;
            long offset = 0;
            int retries = 0;
            boolean refreshed = false;
            while (!stopped) {
                ModalRouterApi.TaskExecStdioReadRequest req = ModalRouterApi.TaskExecStdioReadRequest.newBuilder()
                        .setTaskId(h.taskId()).setExecId(execId).setOffset(offset).setFileDescriptor(fd).build();
                routerCalls.incrementAndGet();
                try {
                    Iterator<ModalRouterApi.TaskExecStdioReadResponse> it = ClientCalls.blockingServerStreamingCall(
                            router(h), TaskCommandRouterGrpc.getTaskExecStdioReadMethod(),
                            CallOptions.DEFAULT.withDeadlineAfter(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS), req);
                    while (it.hasNext()) {
                        ByteString data = it.next().getData();
                        byte[] b = data.toByteArray();
                        offset += b.length;
                        boolean more = stdout ? sink.stdout(b, 0, b.length) : sink.stderr(b, 0, b.length);
                        if (!more) {
                            capped.set(true);
                            event.countDown();
                            return;
                        }
                    }
                    return; // EOF: the command's stream is closed
                } catch (StatusRuntimeException e) {
                    if (stopped || Thread.currentThread().isInterrupted()) {
                        return;
                    }
                    Status.Code code = e.getStatus().getCode();
                    if (code == Status.Code.DEADLINE_EXCEEDED) {
                        return; // our deadline: the caller decides the timeout
                    }
                    if (code == Status.Code.UNAUTHENTICATED && !refreshed) {
                        refreshed = true;
                        try {
                            refreshRouter(h);
                        } catch (InterruptedException ie) {
                            return;
                        } catch (SandboxException se) {
                            fail(se.toBuilder().codeMayHaveRun(true).build());
                            return;
                        }
                        continue;
                    }
                    if (ModalRpc.RETRIABLE.contains(code) && retries < ModalDriver.STREAM_RETRIES) {
                        retries++;
                        try {
                            streamBackoff.sleep(streamBackoff.delay(retries)); // then resume from the offset
                        } catch (InterruptedException ie) {
                            return;
                        }
                        continue;
                    }
                    fail(rpc.map(e, "modal: reading " + (stdout ? "stdout" : "stderr") + " of sandbox " + h.id(), false, true));
                    return;
                }
            }
        }

        /** {@code TaskExecWait} with a 60 s call deadline, re-issued until the exec deadline, as the JS SDK waits. */
        private void waitExit() {
            ModalRouterApi.TaskExecWaitRequest req = ModalRouterApi.TaskExecWaitRequest.newBuilder()
                    .setTaskId(h.taskId()).setExecId(execId).build();
            int retries = 0;
            while (!stopped) {
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    return;
                }
                try {
                    ModalRouterApi.TaskExecWaitResponse r = routerUnary(h, TaskCommandRouterGrpc.getTaskExecWaitMethod(), req,
                            Duration.ofNanos(Math.min(remaining, ModalDriver.WAIT_CALL.toNanos())));
                    exit.set(r);
                    event.countDown();
                    return;
                } catch (InterruptedException e) {
                    return;
                } catch (SandboxException e) {
                    fail(e.toBuilder().codeMayHaveRun(true).build());
                    return;
                } catch (StatusRuntimeException e) {
                    if (stopped) {
                        return;
                    }
                    Status.Code code = e.getStatus().getCode();
                    if (code == Status.Code.DEADLINE_EXCEEDED) {
                        continue; // a long poll that ran out: ask again
                    }
                    if (ModalRpc.RETRIABLE.contains(code) && retries < ModalDriver.STREAM_RETRIES) {
                        retries++;
                        try {
                            streamBackoff.sleep(streamBackoff.delay(retries));
                        } catch (InterruptedException ie) {
                            return;
                        }
                        continue;
                    }
                    fail(rpc.map(e, "modal: TaskExecWait in sandbox " + h.id(), false, true));
                    return;
                }
            }
        }
    }

    void close() {
        io.shutdownNow();
    }
}
