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
 * <p>The command ends each stream with an end frame ({@link EndFrame}: a nonce, the exit code, a
 * newline; {@link DaytonaDriver#command}), after all of its output: once both streams' frames arrived
 * the stream ends {@link End#EXITED}, without waiting for the daemon's close (v0.190 checks for the
 * exit code only after a second of silence, {@code internal/util/log_reader.go}).
 *
 * <p>Output is untrusted: code that prints a marker's bytes only loses those three bytes (every
 * client of this protocol reads them as a marker); code that learns the nonce can end its own
 * output early, with an exit code of its choosing, as exiting would. Nothing is buffered beyond two
 * marker bytes and, per stream, a frame's length.
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

    /** How the stream ended: both end frames seen, the daemon's close (without them), the output cap, a failure. */
    enum End { EXITED, CLOSED, CAPPED, FAILED }

    private final Demux demux;
    private final EndFrame stdout;
    private final EndFrame stderr;
    private final CountDownLatch done = new CountDownLatch(1);
    private final AtomicReference<End> end = new AtomicReference<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final AtomicReference<Integer> httpStatus = new AtomicReference<>();
    private volatile WebSocket socket;

    private SessionLogStream(Sink sink, byte[] nonce) {
        this.stdout = new EndFrame(nonce, false, sink);
        this.stderr = new EndFrame(nonce, true, sink);
        this.demux = new Demux((err, b, off, len) -> (err ? stderr : stdout).accept(b, off, len));
    }

    /**
     * Opens the WebSocket; frames start arriving on OkHttp's thread.
     *
     * @param nonce the end frames' nonce, as the command prints it before the exit code
     */
    static SessionLogStream open(OkHttpClient client, Request request, Sink sink, String nonce) {
        SessionLogStream s = new SessionLogStream(sink, nonce.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        s.socket = client.newWebSocket(request, s.new Listener());
        return s;
    }

    /** The exit code both end frames carried (stdout's), or null (not ended so, or no code in the frame). */
    Integer exitCode() {
        return stdout.code;
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
            } else if (stdout.ended && stderr.ended) {
                finish(End.EXITED);
                webSocket.cancel();
            }
        }

        @Override
        public void onClosing(WebSocket webSocket, int code, String reason) {
            if (end.get() == null && !(demux.flush() && stdout.flush() && stderr.flush())) {
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

    /**
     * One stream's end frame: {@code nonce} (which holds {@code 0x1f} only as its first byte), the exit
     * code's digits, a newline, printed by the command after all of the stream's output; every other
     * byte goes on to the sink. A frame's first bytes are held until the next bytes show whether it is
     * one (a lone {@code 0x1f} in the output waits for the byte after it); after the frame the stream's
     * bytes are dropped.
     */
    static final class EndFrame {
        private static final int MAX_DIGITS = 4;
        private final byte[] nonce;
        private final boolean stderr;
        private final Sink sink;
        private final byte[] held;
        private int heldLength;
        /** Nonce bytes matched so far; nonce.length once all are, then digits follow. */
        private int matched;
        private int digits;
        volatile boolean ended;
        volatile Integer code;

        EndFrame(byte[] nonce, boolean stderr, Sink sink) {
            if (nonce.length < 2 || nonce[0] != 0x1f) {
                throw new IllegalArgumentException("the nonce must start with 0x1f");
            }
            for (int i = 1; i < nonce.length; i++) {
                if (nonce[i] == 0x1f || nonce[i] == '\n') {
                    throw new IllegalArgumentException("0x1f and newlines only at the nonce's start");
                }
            }
            this.nonce = nonce;
            this.stderr = stderr;
            this.sink = sink;
            this.held = new byte[nonce.length + MAX_DIGITS];
        }

        /** False once the sink refused more. */
        synchronized boolean accept(byte[] b, int off, int len) {
            int end = off + len;
            int start = off; // payload not yet handed on starts here
            for (int i = off; i < end; i++) {
                if (ended) {
                    return true;
                }
                byte v = b[i];
                if (heldLength == 0) {
                    if (v != 0x1f) {
                        continue;
                    }
                    if (i > start && !sink.accept(stderr, b, start, i - start)) {
                        return false;
                    }
                    held[heldLength++] = v;
                    matched = 1;
                    start = i + 1;
                    continue;
                }
                if (matched < nonce.length && v == nonce[matched]) {
                    held[heldLength++] = v;
                    matched++;
                    start = i + 1;
                    continue;
                }
                if (matched == nonce.length && v >= '0' && v <= '9' && digits < MAX_DIGITS) {
                    held[heldLength++] = v;
                    digits++;
                    start = i + 1;
                    continue;
                }
                if (matched == nonce.length && v == '\n') {
                    code = digits == 0 ? null : Integer.valueOf(new String(held, nonce.length, digits,
                            java.nio.charset.StandardCharsets.US_ASCII));
                    ended = true;
                    heldLength = 0;
                    return true;
                }
                // not a frame after all: what was held is payload, and this byte is looked at again
                if (!release()) {
                    return false;
                }
                start = i;
                i--;
            }
            return ended || start >= end || sink.accept(stderr, b, start, end - start);
        }

        /** At the end of the stream: a partial frame is payload. */
        synchronized boolean flush() {
            return ended || heldLength == 0 || release();
        }

        private boolean release() {
            int n = heldLength;
            heldLength = 0;
            matched = 0;
            digits = 0;
            return sink.accept(stderr, java.util.Arrays.copyOf(held, n), 0, n);
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
