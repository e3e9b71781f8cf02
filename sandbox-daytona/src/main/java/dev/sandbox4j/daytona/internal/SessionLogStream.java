package dev.sandbox4j.daytona.internal;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.WebSocket;
import okhttp3.WebSocketListener;
import okio.ByteString;

/**
 * One session command's log, followed over the toolbox's WebSocket
 * ({@code GET process/session/{sessionId}/command/{commandId}/logs?follow=true}, what the official
 * SDKs' {@code getSessionCommandLogs(..., onStdout, onStderr)} opens: daytona/clients
 * {@code sdk-typescript/src/Process.ts}, {@code sdk-java/.../Process.java}). The daemon sends the raw
 * bytes of the command's log file as binary frames, in whatever pieces it read them, and closes with
 * 1000 once the exit code is written (daytonaio/daytona v0.190 {@code apps/daemon/pkg/session/log.go},
 * {@code internal/util/log_reader.go}). In the file each line of the command's stdout follows the
 * marker {@code 01 01 01} and each line of its stderr {@code 02 02 02} (the shell labelers of
 * {@code pkg/session/execute.go}); the markers are removed here, as the SDKs remove them, and a marker
 * split across two frames is held until it is whole. Bytes before the first marker belong to no
 * stream and are dropped, as the SDKs drop them (the daemon writes none).
 *
 * <p>Output is untrusted: code that prints a marker's bytes only loses those three bytes (every
 * client of this protocol reads them as a marker). Nothing is buffered beyond two marker bytes.
 */
final class SessionLogStream {
    static final byte STDOUT_MARK = 0x01;
    static final byte STDERR_MARK = 0x02;
    private static final int MARK_LENGTH = 3;

    /** Where the payload goes, by stream; false stops the stream (the output cap). */
    @FunctionalInterface
    interface Sink {
        boolean accept(boolean stderr, byte[] b, int off, int len);
    }

    /** How the stream ended. */
    enum End { CLOSED, CAPPED, FAILED }

    private final Demux demux;
    private final CountDownLatch done = new CountDownLatch(1);
    private final AtomicReference<End> end = new AtomicReference<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final AtomicReference<Integer> httpStatus = new AtomicReference<>();
    private volatile WebSocket socket;

    private SessionLogStream(Sink sink) {
        this.demux = new Demux(sink);
    }

    /** Opens the WebSocket; frames start arriving on OkHttp's thread. */
    static SessionLogStream open(OkHttpClient client, Request request, Sink sink) {
        SessionLogStream s = new SessionLogStream(sink);
        s.socket = client.newWebSocket(request, s.new Listener());
        return s;
    }

    /**
     * Waits for the end, at most {@code millis}.
     *
     * @return how it ended, or null when the time ran out (the stream is still open)
     */
    End await(long millis) throws InterruptedException {
        return done.await(Math.max(0, millis), TimeUnit.MILLISECONDS) ? end.get() : null;
    }

    /** Drops the connection at once (idempotent). */
    void cancel() {
        WebSocket ws = socket;
        if (ws != null) {
            ws.cancel();
        }
    }

    /** Why it failed (FAILED), else null. */
    Throwable failure() {
        return failure.get();
    }

    /** The HTTP status of a refused upgrade, else null. */
    Integer httpStatus() {
        return httpStatus.get();
    }

    private void finish(End how) {
        if (end.compareAndSet(null, how)) {
            done.countDown();
        }
    }

    private final class Listener extends WebSocketListener {
        @Override
        public void onMessage(WebSocket webSocket, ByteString bytes) {
            feed(webSocket, bytes.toByteArray());
        }

        @Override
        public void onMessage(WebSocket webSocket, String text) {
            feed(webSocket, text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }

        private void feed(WebSocket webSocket, byte[] data) {
            if (end.get() != null) {
                return;
            }
            if (!demux.accept(data, 0, data.length)) {
                finish(End.CAPPED);
                webSocket.cancel();
            }
        }

        @Override
        public void onClosing(WebSocket webSocket, int code, String reason) {
            if (end.get() == null && !demux.flush()) {
                finish(End.CAPPED);
            }
            webSocket.close(1000, null);
            if (code == 1000) {
                finish(End.CLOSED);
            } else {
                failure.compareAndSet(null, new IOException("the log stream closed with code " + code
                        + (reason == null || reason.isEmpty() ? "" : " (" + reason + ")")));
                finish(End.FAILED);
            }
        }

        @Override
        public void onFailure(WebSocket webSocket, Throwable t, Response response) {
            if (response != null) {
                httpStatus.compareAndSet(null, response.code());
                response.close();
            }
            failure.compareAndSet(null, t);
            finish(End.FAILED);
        }
    }

    /** Removes the stream markers, holding at most a marker's first bytes until the next frame. */
    static final class Demux {
        private final Sink sink;
        private byte pendingMark;
        private int pending;
        /** The stream of the payload now: 0 none yet, else the marker byte. */
        private byte current;

        Demux(Sink sink) {
            this.sink = sink;
        }

        /** False once the sink refused more. */
        synchronized boolean accept(byte[] b, int off, int len) {
            int end = off + len;
            int start = off; // payload not yet handed on starts here
            for (int i = off; i < end; i++) {
                byte v = b[i];
                boolean mark = v == STDOUT_MARK || v == STDERR_MARK;
                if (mark && (pending == 0 || v == pendingMark)) {
                    if (pending == 0 && i > start && !emit(b, start, i - start)) {
                        return false;
                    }
                    if (pending == 0) {
                        pendingMark = v;
                    }
                    pending++;
                    start = i + 1;
                    if (pending == MARK_LENGTH) {
                        pending = 0;
                        current = pendingMark;
                    }
                    continue;
                }
                if (pending > 0) {
                    // not a marker after all: its bytes are payload
                    if (!releasePending()) {
                        return false;
                    }
                    if (mark) {
                        pendingMark = v;
                        pending = 1;
                        start = i + 1;
                        continue;
                    }
                    start = i;
                }
            }
            return start >= end || emit(b, start, end - start);
        }

        private boolean emit(byte[] b, int off, int len) {
            return current == 0 || sink.accept(current == STDERR_MARK, b, off, len);
        }

        /** At the end of the stream: a partial marker is payload. */
        synchronized boolean flush() {
            return pending == 0 || releasePending();
        }

        private boolean releasePending() {
            byte[] held = new byte[pending];
            java.util.Arrays.fill(held, pendingMark);
            pending = 0;
            return emit(held, 0, held.length);
        }
    }
}
