package dev.sandbox4j.api.exception;

/**
 * The runner cannot attach to a sandbox by id (it does not declare
 * {@code Capabilities.Feature.ATTACH}): the local runner's sandboxes live and die with the process
 * that made them.
 *
 * @since 0.1.0
 */
public final class AttachUnsupportedException extends UnsupportedOperationException {
    private static final long serialVersionUID = 1L;

    /**
     * @param runner the runner's name
     * @param why why it cannot attach
     */
    public AttachUnsupportedException(String runner, String why) {
        super(runner + " cannot attach to a sandbox by id: " + why);
    }
}
