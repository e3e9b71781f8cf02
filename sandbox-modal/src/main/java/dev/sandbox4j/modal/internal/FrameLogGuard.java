package dev.sandbox4j.modal.internal;

import io.grpc.netty.shaded.io.netty.util.internal.logging.AbstractInternalLogger;
import io.grpc.netty.shaded.io.netty.util.internal.logging.CommonsLoggerFactory;
import io.grpc.netty.shaded.io.netty.util.internal.logging.InternalLogger;
import io.grpc.netty.shaded.io.netty.util.internal.logging.InternalLoggerFactory;
import io.grpc.netty.shaded.io.netty.util.internal.logging.JdkLoggerFactory;
import io.grpc.netty.shaded.io.netty.util.internal.logging.Log4J2LoggerFactory;
import io.grpc.netty.shaded.io.netty.util.internal.logging.Log4JLoggerFactory;
import io.grpc.netty.shaded.io.netty.util.internal.logging.Slf4JLoggerFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps gRPC's HTTP/2 frame log from printing Modal's credentials, whatever the logging configuration.
 *
 * <p>grpc-netty gives every client connection an {@code Http2FrameLogger} at DEBUG under the logger
 * {@value #FRAME_LOGGER}, obtained from (shaded) Netty's {@link InternalLoggerFactory} when the
 * connection is made. At DEBUG it prints every {@code OUTBOUND HEADERS} frame whole (the token id
 * and secret, the {@code x-modal-auth-token} JWT, the router's {@code authorization: Bearer} JWT) and
 * hex-dumps {@code DATA} frames (an {@code AuthTokenGet} or {@code SandboxCreateV2} answer carries a
 * JWT). The credentials cannot be kept out of the headers: they must be sent. grpc-netty has no
 * switch for the frame logger, and a level set in slf4j, Logback, Log4j or JUL is the user's to
 * change, so a level is no guarantee.
 *
 * <p>So, before every channel is built, the shaded Netty's default logger factory is wrapped: the
 * wrapper answers {@value #FRAME_LOGGER} with a logger that is never enabled and every other name
 * with the factory that was there (slf4j, Log4j 2, Log4j, commons-logging or JUL, as Netty chose),
 * so the rest of Netty logs as configured. No user logging setting re-enables the frame log.
 *
 * <p>Limits, said plainly: the wrapper is JVM-wide for grpc-netty-shaded (other gRPC clients in the
 * JVM lose their client frame log too; unshaded grpc-netty is not touched); code that later calls
 * {@code InternalLoggerFactory.setDefaultFactory} replaces it, and a connection made after that
 * (a reconnect of an existing channel included) logs frames again until the next channel is built
 * here; a factory of the application's own making (not one of Netty's five) cannot be wrapped, since
 * its {@code newInstance} is not reachable, and then a WARN line says that frames may be logged. It
 * relies on grpc-netty naming the frame logger after {@code NettyClientHandler}: the TRACE-level test
 * in sandbox-emulators-modal fails if a grpc upgrade renames it.
 */
@SuppressWarnings("deprecation") // Log4JLoggerFactory and CommonsLoggerFactory: Netty may still choose them
final class FrameLogGuard extends InternalLoggerFactory {
    /** The logger name grpc-netty-shaded gives the client's HTTP/2 frame logger. */
    static final String FRAME_LOGGER = "io.grpc.netty.shaded.io.grpc.netty.NettyClientHandler";
    private static final Logger log = LoggerFactory.getLogger(FrameLogGuard.class);
    private static boolean warned;

    private final InternalLoggerFactory delegate;

    private FrameLogGuard(InternalLoggerFactory delegate) {
        this.delegate = delegate;
    }

    /** Wraps the current default factory unless it is wrapped already; called before each channel is built. */
    static synchronized void install() {
        InternalLoggerFactory current = InternalLoggerFactory.getDefaultFactory();
        if (current instanceof FrameLogGuard) {
            return;
        }
        if (!wrappable(current)) {
            if (!warned) {
                warned = true;
                log.warn("modal: Netty's logger factory is {}, which sandbox4j cannot wrap: keep {} below DEBUG,"
                        + " or its frame log prints the Modal credentials", current.getClass().getName(), FRAME_LOGGER);
            }
            return;
        }
        InternalLoggerFactory.setDefaultFactory(new FrameLogGuard(current));
    }

    private static boolean wrappable(InternalLoggerFactory f) {
        return f instanceof Slf4JLoggerFactory || f instanceof JdkLoggerFactory || f instanceof Log4J2LoggerFactory
                || f instanceof Log4JLoggerFactory || f instanceof CommonsLoggerFactory;
    }

    @Override
    protected InternalLogger newInstance(String name) {
        if (FRAME_LOGGER.equals(name)) {
            return new Silent(name);
        }
        // each of Netty's own factories makes newInstance public; install() wraps no other kind
        if (delegate instanceof Slf4JLoggerFactory) {
            return ((Slf4JLoggerFactory) delegate).newInstance(name);
        }
        if (delegate instanceof Log4J2LoggerFactory) {
            return ((Log4J2LoggerFactory) delegate).newInstance(name);
        }
        if (delegate instanceof Log4JLoggerFactory) {
            return ((Log4JLoggerFactory) delegate).newInstance(name);
        }
        if (delegate instanceof CommonsLoggerFactory) {
            return ((CommonsLoggerFactory) delegate).newInstance(name);
        }
        return ((JdkLoggerFactory) delegate).newInstance(name);
    }

    /** A logger that is never enabled and drops everything. */
    static final class Silent extends AbstractInternalLogger {
        private static final long serialVersionUID = 1L;

        Silent(String name) {
            super(name);
        }

        @Override public boolean isTraceEnabled() { return false; }
        @Override public void trace(String msg) { }
        @Override public void trace(String format, Object arg) { }
        @Override public void trace(String format, Object argA, Object argB) { }
        @Override public void trace(String format, Object... arguments) { }
        @Override public void trace(String msg, Throwable t) { }
        @Override public boolean isDebugEnabled() { return false; }
        @Override public void debug(String msg) { }
        @Override public void debug(String format, Object arg) { }
        @Override public void debug(String format, Object argA, Object argB) { }
        @Override public void debug(String format, Object... arguments) { }
        @Override public void debug(String msg, Throwable t) { }
        @Override public boolean isInfoEnabled() { return false; }
        @Override public void info(String msg) { }
        @Override public void info(String format, Object arg) { }
        @Override public void info(String format, Object argA, Object argB) { }
        @Override public void info(String format, Object... arguments) { }
        @Override public void info(String msg, Throwable t) { }
        @Override public boolean isWarnEnabled() { return false; }
        @Override public void warn(String msg) { }
        @Override public void warn(String format, Object arg) { }
        @Override public void warn(String format, Object... arguments) { }
        @Override public void warn(String format, Object argA, Object argB) { }
        @Override public void warn(String msg, Throwable t) { }
        @Override public boolean isErrorEnabled() { return false; }
        @Override public void error(String msg) { }
        @Override public void error(String format, Object arg) { }
        @Override public void error(String format, Object argA, Object argB) { }
        @Override public void error(String format, Object... arguments) { }
        @Override public void error(String msg, Throwable t) { }
    }
}
