package dev.sandbox4j.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * Turns a {@link Sandbox4jPropertyException} into Spring Boot's startup report: the property, its
 * value, what sandbox4j refused, and the fix.
 *
 * @since 0.1.0
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
public final class Sandbox4jPropertyFailureAnalyzer extends AbstractFailureAnalyzer<Sandbox4jPropertyException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, Sandbox4jPropertyException cause) {
        String problem = cause.getCause() == null ? "" : cause.getCause().getMessage();
        return new FailureAnalysis("sandbox4j cannot start with " + cause.property()
                + (cause.value() == null ? " unset" : "=" + cause.value()) + ": " + problem, cause.fix(), cause);
    }
}
