package dev.sandbox4j.emulators.e2b;

/** An E2B API error answer: {@code {"code":status,"message":...,"error_code"?:...}}. */
final class ApiException extends Exception {
    final int status;
    final String errorCode;

    ApiException(int status, String message, String errorCode) {
        super(message, null, false, false);
        this.status = status;
        this.errorCode = errorCode;
    }

    static ApiException badRequest(String message) {
        return new ApiException(400, message, null);
    }

    static ApiException notFound(String sandboxId) {
        return new ApiException(404, "Sandbox \"" + sandboxId + "\" doesn't exist or you don't have access to it", null);
    }
}
