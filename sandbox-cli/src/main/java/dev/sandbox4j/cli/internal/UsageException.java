package dev.sandbox4j.cli.internal;

/** The command line is wrong: the CLI prints the message on one line and exits with status 2. */
public final class UsageException extends IllegalArgumentException {
    public UsageException(String message) {
        super(message);
    }
}
