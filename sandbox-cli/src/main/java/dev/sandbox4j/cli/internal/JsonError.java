package dev.sandbox4j.cli.internal;

/**
 * The one JSON object the CLI prints on stdout under {@code --json} when there is no result:
 * {@code {"error":{"kind":...,"message":...,"exitStatus":...}}} plus, for provider errors, the provider,
 * its HTTP status, and whether a retry may help or the code may have run. ASCII only, like
 * {@link JsonOutput}.
 */
public final class JsonError {
    private final StringBuilder sb = new StringBuilder("{\"error\":{");

    private JsonError(String kind, String message, int exitStatus) {
        sb.append("\"kind\":").append(JsonOutput.quote(kind))
                .append(",\"message\":").append(JsonOutput.quote(message))
                .append(",\"exitStatus\":").append(exitStatus);
    }

    /** {@code kind} is one of usage, policy, configuration, provider, interrupted, unexpected. */
    public static JsonError of(String kind, String message, int exitStatus) {
        return new JsonError(kind, message, exitStatus);
    }

    public JsonError field(String name, String value) {
        sb.append(',').append(JsonOutput.quote(name)).append(':').append(value == null ? "null" : JsonOutput.quote(value));
        return this;
    }

    public JsonError field(String name, long value) {
        sb.append(',').append(JsonOutput.quote(name)).append(':').append(value);
        return this;
    }

    public JsonError field(String name, boolean value) {
        sb.append(',').append(JsonOutput.quote(name)).append(':').append(value);
        return this;
    }

    @Override
    public String toString() {
        return sb + "}}";
    }
}
