package dev.sandbox4j.emulators.modal;

import dev.sandbox4j.emulators.modal.internal.proto.ModalApi;
import dev.sandbox4j.emulators.modal.internal.proto.ModalClientGrpc;
import dev.sandbox4j.emulators.modal.internal.proto.RouterApi;
import dev.sandbox4j.emulators.modal.internal.proto.TaskCommandRouterGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.util.Iterator;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A bare wire client for the tests, written from the reference's call sequence (modal.md 9) on the
 * emulator's own stubs: it is not the adapter and adds no retries, so each test sees the server's answers.
 */
final class WireClient implements AutoCloseable {
    static final Metadata.Key<String> TOKEN_ID = Metadata.Key.of("x-modal-token-id", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> TOKEN_SECRET = Metadata.Key.of("x-modal-token-secret", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> AUTH_TOKEN = Metadata.Key.of("x-modal-auth-token", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> IDEMPOTENCY = Metadata.Key.of("x-idempotency-key", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    final ManagedChannel control;
    ManagedChannel router;
    final String tokenId;
    final String tokenSecret;
    String authToken;

    WireClient(ModalEmulator emulator) {
        this(emulator, emulator.tokenId(), emulator.tokenSecret());
    }

    WireClient(ModalEmulator emulator, String tokenId, String tokenSecret) {
        this.control = NettyChannelBuilder.forAddress("127.0.0.1", emulator.port()).usePlaintext().build();
        this.tokenId = tokenId;
        this.tokenSecret = tokenSecret;
    }

    ModalClientGrpc.ModalClientBlockingStub cp() {
        return cp(UUID.randomUUID().toString());
    }

    ModalClientGrpc.ModalClientBlockingStub cp(String idempotencyKey) {
        Metadata h = new Metadata();
        h.put(TOKEN_ID, tokenId);
        h.put(TOKEN_SECRET, tokenSecret);
        if (authToken != null) {
            h.put(AUTH_TOKEN, authToken);
        }
        h.put(IDEMPOTENCY, idempotencyKey);
        return ModalClientGrpc.newBlockingStub(control).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(h))
                .withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    TaskCommandRouterGrpc.TaskCommandRouterBlockingStub router(String url, String jwt) {
        if (router == null) {
            URI u = URI.create(url);
            router = NettyChannelBuilder.forAddress(u.getHost(), u.getPort()).usePlaintext().build();
        }
        Metadata h = new Metadata();
        h.put(AUTHORIZATION, "Bearer " + jwt);
        return TaskCommandRouterGrpc.newBlockingStub(router).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(h))
                .withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    /** AuthTokenGet, AppGetOrCreate, EnvironmentGetOrCreate, ImageGetOrCreate (+ join): an app id and image id. */
    String[] prepare() {
        authToken = cp().authTokenGet(ModalApi.AuthTokenGetRequest.getDefaultInstance()).getToken();
        String app = cp().appGetOrCreate(ModalApi.AppGetOrCreateRequest.newBuilder().setAppName("emulator-test")
                .setObjectCreationType(ModalApi.ObjectCreationType.OBJECT_CREATION_TYPE_CREATE_IF_MISSING).build()).getAppId();
        String builder = cp().environmentGetOrCreate(ModalApi.EnvironmentGetOrCreateRequest.getDefaultInstance())
                .getMetadata().getSettings().getImageBuilderVersion();
        ModalApi.ImageGetOrCreateResponse image = cp().imageGetOrCreate(ModalApi.ImageGetOrCreateRequest.newBuilder()
                .setAppId(app).setBuilderVersion(builder)
                .setImage(ModalApi.Image.newBuilder().addDockerfileCommands("FROM python:3.13-slim")).build());
        if (image.getResult().getStatusValue() == 0) {
            Iterator<ModalApi.ImageJoinStreamingResponse> it = cp().imageJoinStreaming(ModalApi.ImageJoinStreamingRequest
                    .newBuilder().setImageId(image.getImageId()).setTimeout(55).build());
            while (it.hasNext()) {
                it.next();
            }
        }
        return new String[] {app, image.getImageId()};
    }

    static ModalApi.Sandbox.Builder definition(String image, ModalApi.NetworkAccess.NetworkAccessType type, String... cidrs) {
        return ModalApi.Sandbox.newBuilder().setImageId(image).setTimeoutSecs(120)
                .addEntrypointArgs("sleep").addEntrypointArgs("infinity")
                .setResources(ModalApi.Resources.newBuilder().setMilliCpu(500).setMemoryMb(512))
                .setNetworkAccess(ModalApi.NetworkAccess.newBuilder().setNetworkAccessType(type).addAllAllowedCidrs(java.util.List.of(cidrs)));
    }

    /** Reads one descriptor from offset 0 to the end of its stream. */
    static byte[] readAll(TaskCommandRouterGrpc.TaskCommandRouterBlockingStub r, String task, String exec, int fd, long offset) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Iterator<RouterApi.TaskExecStdioReadResponse> it = r.taskExecStdioRead(RouterApi.TaskExecStdioReadRequest.newBuilder()
                .setTaskId(task).setExecId(exec).setOffset(offset)
                .setFileDescriptorValue(fd).build());
        while (it.hasNext()) {
            out.writeBytes(it.next().getData().toByteArray());
        }
        return out.toByteArray();
    }

    static StatusRuntimeException fails(Runnable call) {
        try {
            call.run();
        } catch (StatusRuntimeException e) {
            return e;
        }
        throw new AssertionError("the call succeeded");
    }

    @Override
    public void close() {
        control.shutdownNow();
        if (router != null) {
            router.shutdownNow();
        }
    }
}
