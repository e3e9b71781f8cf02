package dev.sandbox4j.modal.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.netty.shaded.io.netty.util.internal.logging.InternalLogLevel;
import io.grpc.netty.shaded.io.netty.util.internal.logging.InternalLoggerFactory;
import io.grpc.netty.shaded.io.netty.util.internal.logging.Slf4JLoggerFactory;
import org.junit.jupiter.api.Test;

/** This module's tests log everything at DEBUG: the frame logger stays off anyway, every other Netty logger on. */
class FrameLogGuardTest {
    @Test
    void theFrameLoggerIsNeverEnabledAndOthersKeepTheirLevel() {
        assertTrue(org.slf4j.LoggerFactory.getLogger(FrameLogGuard.FRAME_LOGGER).isDebugEnabled(), "slf4j has it at DEBUG");
        FrameLogGuard.install();
        for (InternalLogLevel level : InternalLogLevel.values()) {
            assertFalse(InternalLoggerFactory.getInstance(FrameLogGuard.FRAME_LOGGER).isEnabled(level), level.name());
        }
        assertTrue(InternalLoggerFactory.getInstance("io.grpc.netty.shaded.io.netty.Other").isDebugEnabled());
    }

    @Test
    void aFactoryInstalledLaterIsWrappedAgainAtTheNextChannel() {
        InternalLoggerFactory.setDefaultFactory(Slf4JLoggerFactory.INSTANCE);
        assertTrue(InternalLoggerFactory.getInstance(FrameLogGuard.FRAME_LOGGER).isDebugEnabled(), "replaced: frames would log");
        FrameLogGuard.install();
        assertInstanceOf(FrameLogGuard.class, InternalLoggerFactory.getDefaultFactory());
        assertFalse(InternalLoggerFactory.getInstance(FrameLogGuard.FRAME_LOGGER).isDebugEnabled());
    }
}
