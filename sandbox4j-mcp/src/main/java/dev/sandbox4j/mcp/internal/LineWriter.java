package dev.sandbox4j.mcp.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The server's stdout, shared by the SDK's transport and the {@link FrameGate}'s own answers: bytes are
 * written a whole line at a time under one lock, so two writers never interleave inside a frame.
 */
public final class LineWriter extends OutputStream {
    private final OutputStream out;
    private final ThreadLocal<ByteArrayOutputStream> pending = ThreadLocal.withInitial(ByteArrayOutputStream::new);

    public LineWriter(OutputStream out) {
        this.out = out;
    }

    /** Writes {@code frame} and a newline as one line. */
    public void writeLine(String frame) throws IOException {
        byte[] b = (frame + "\n").getBytes(StandardCharsets.UTF_8);
        synchronized (out) {
            out.write(b);
            out.flush();
        }
    }

    @Override
    public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        ByteArrayOutputStream buf = pending.get();
        int start = off;
        for (int i = off; i < off + len; i++) {
            if (b[i] == '\n') {
                buf.write(b, start, i + 1 - start);
                synchronized (out) {
                    buf.writeTo(out);
                    out.flush();
                }
                buf.reset();
                start = i + 1;
            }
        }
        buf.write(b, start, off + len - start);
    }

    @Override
    public void flush() {
        // a line is flushed when it is complete; half a frame is never written
    }

    @Override
    public void close() throws IOException {
        synchronized (out) {
            out.close();
        }
    }
}
