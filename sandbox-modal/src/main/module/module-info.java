/**
 * The dev.sandbox4j.modal module.
 *
 * <p>Its generated protobuf messages ({@code dev.sandbox4j.modal.internal.proto}) are opened to
 * protobuf alone: protobuf reads a generated message's accessors reflectively (its descriptors,
 * {@code toString}, {@code equals}), which a package that is only encapsulated refuses on the
 * module path.
 *
 * <p>It requires {@code com.google.common.util.concurrent.internal} (Guava's {@code failureaccess})
 * without using it: gRPC's Guava, an automatic module, needs it at run time, and an automatic module
 * pulls in no named module, so an application that requires only this module would fail at its first
 * call with a {@code NoClassDefFoundError}.
 *
 * @since 0.1.0
 */
module dev.sandbox4j.modal {
    requires transitive dev.sandbox4j.api;
    requires io.grpc;
    requires io.grpc.stub;
    requires io.grpc.protobuf;
    requires io.grpc.netty.shaded;
    requires com.google.protobuf;
    requires com.google.common.util.concurrent.internal;
    requires com.fasterxml.jackson.databind;
    requires org.slf4j;

    exports dev.sandbox4j.modal;
    opens dev.sandbox4j.modal.internal.proto to com.google.protobuf;

    provides dev.sandbox4j.api.SandboxRunnerProvider with dev.sandbox4j.modal.internal.ModalSandboxRunnerProvider;
}
