package dev.sandbox4j.testlogging;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/** The child of {@link TraceJvmTest}: plants the canaries, then leaks the secret it is given where it is told to. */
public final class TraceJvmChild {
    private TraceJvmChild() {
    }

    public static void main(String[] args) {
        TraceJvm.plantCanaries();
        String secret = System.getenv("TRACE_TEST_SECRET");
        switch (args[0]) {
            case "clean":
                org.slf4j.LoggerFactory.getLogger("io.grpc.netty.shaded.Test").trace("nothing secret here");
                break;
            case "jul":
                // as gRPC's own loggers write: java.util.logging at FINEST
                java.util.logging.Logger.getLogger("io.grpc.internal.Test").finest("metadata " + secret);
                break;
            case "slf4j-hex":
                // as Netty's frame logger writes a DATA frame
                org.slf4j.LoggerFactory.getLogger("io.grpc.netty.shaded.Test").debug("bytes={}",
                        HexFormat.of().formatHex(("\u0000\n" + secret).getBytes(StandardCharsets.UTF_8)));
                break;
            case "jwt":
                System.out.println("authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ0YXNrIn0.c2lnbmF0dXJlLWJ5dGVz");
                break;
            case "exit":
                System.exit(3);
                break;
            default:
                throw new IllegalArgumentException(args[0]);
        }
    }
}
