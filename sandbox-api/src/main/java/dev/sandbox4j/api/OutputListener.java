package dev.sandbox4j.api;

/**
 * Receives an execution's output as it arrives, before the command ends. Each chunk is whole
 * characters (a UTF-8 sequence is never split across chunks), within the execution's output limit
 * (what the result keeps, and no more) and, when the execution strips control characters, stripped.
 * The text is untrusted, like the result's.
 *
 * <p>Called on the runner's reading threads, one call at a time per stream and in order: keep it
 * short (a slow listener slows reading). An exception it throws is logged and the run goes on.
 * Streams only on runners declaring {@code Capabilities.Feature.STREAMING}; elsewhere the whole output
 * arrives in one go when the command ends.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface OutputListener {
    /**
     * Which stream a chunk came from.
     *
     * @since 0.1.0
     */
    enum Stream {
        /** Standard output. */
        STDOUT,
        /** Standard error. */
        STDERR
    }

    /**
     * Receives one chunk of output.
     *
     * @param stream the stream it came from
     * @param text whole characters, untrusted; never empty
     */
    void onOutput(Stream stream, String text);
}
