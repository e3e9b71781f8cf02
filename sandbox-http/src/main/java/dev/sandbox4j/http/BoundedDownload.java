package dev.sandbox4j.http;

import dev.sandbox4j.api.exception.SandboxException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import okhttp3.Request;
import okhttp3.ResponseBody;

/**
 * Downloads a file body keeping at most {@code maxBytes}: memory stays bounded whatever the server
 * sends. The size is the body's Content-Length when it states one (the rest is not read: the call is
 * cancelled); without one, the rest is counted and dropped up to {@link #MAX_COUNTED} bytes, past
 * which the size reported is a lower bound.
 *
 * @since 0.1.0
 */
public final class BoundedDownload {
    /** Bytes counted past the cap when the server states no length. */
    public static final long MAX_COUNTED = 256L * 1024 * 1024;

    private final byte[] content;
    private final long size;

    private BoundedDownload(byte[] content, long size) {
        this.content = content;
        this.size = size;
    }

    /** {@return the bytes kept (at most the cap): this object's own array, not a copy} */
    public byte[] content() {
        return content;
    }

    /**
     * {@return the file's size as far as the answer tells} That is its Content-Length when it stated one
     * (or the bytes kept, if more), else the bytes counted: a lower bound when counting stopped some
     * {@link #MAX_COUNTED} bytes past the cap.
     */
    public long size() {
        return size;
    }

    /** {@return whether the file is larger than the bytes kept, {@code size() > content().length}} */
    public boolean truncated() {
        return size > content.length;
    }

    /**
     * One GET (idempotent, not retried: the caller decides), bounded by {@code deadline} as a whole. The
     * request is sent once as it is, whatever its method.
     *
     * @param transport the provider's transport: its client, error mapping and redaction
     * @param request the request, usually from {@link HttpTransport#request}
     * @param maxBytes the most bytes kept (never more than {@code Integer.MAX_VALUE - 16}); zero keeps
     *                 none and only sizes the file; a negative value fails with
     *                 {@link IllegalArgumentException}
     * @param deadline the whole call's client deadline, as for {@link HttpTransport#execute}
     * @return the bytes kept and the file's size
     * @throws SandboxException for a non-2xx answer ({@link HttpTransport#errorFor}), an IO failure
     *         ({@link HttpTransport#ioError}: retriable, not flagged requestMayHaveSucceeded) or the deadline
     *         passing (retriable)
     * @throws InterruptedException when the caller is interrupted (the call is cancelled)
     */
    public static BoundedDownload get(HttpTransport transport, Request request, long maxBytes, Duration deadline)
            throws InterruptedException {
        try {
            return transport.execute(request, deadline, r -> read(r.body(), maxBytes));
        } catch (ClientDeadlineException e) {
            throw SandboxException.builder(transport.provider() + ": download passed its deadline of "
                    + deadline.toMillis() + " ms").provider(transport.provider()).retriable(true).build();
        } catch (IOException e) {
            throw transport.ioError(request, e, false);
        }
    }

    private static BoundedDownload read(ResponseBody body, long maxBytes) throws IOException {
        long stated = body.contentLength();
        int cap = (int) Math.min(maxBytes, Integer.MAX_VALUE - 16);
        ByteArrayOutputStream out = new ByteArrayOutputStream((int) Math.min(cap, stated >= 0 ? Math.min(stated, 1 << 20) : 8192));
        byte[] buf = new byte[64 * 1024];
        long kept = 0;
        try (InputStream in = body.byteStream()) {
            while (kept < cap) {
                int n = in.read(buf, 0, (int) Math.min(buf.length, cap - kept));
                if (n < 0) {
                    return new BoundedDownload(out.toByteArray(), Math.max(kept, stated));
                }
                out.write(buf, 0, n);
                kept += n;
            }
            if (stated >= 0) {
                return new BoundedDownload(out.toByteArray(), Math.max(kept, stated));
            }
            long counted = kept;
            while (counted - kept < MAX_COUNTED) {
                int n = in.read(buf);
                if (n < 0) {
                    break;
                }
                counted += n;
            }
            return new BoundedDownload(out.toByteArray(), counted);
        }
    }
}
