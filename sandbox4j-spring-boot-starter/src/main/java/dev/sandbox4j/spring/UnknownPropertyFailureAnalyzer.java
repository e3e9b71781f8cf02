package dev.sandbox4j.spring;

import java.util.List;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * Reports unknown {@code sandbox4j.*} properties by name only. Spring Boot's own report of unbound
 * properties prints each one's value, and the likeliest unknown property here is an API key pasted into
 * the configuration ({@code sandbox4j.api-key}): its value must not reach the startup log.
 *
 * @since 0.1.0
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
public final class UnknownPropertyFailureAnalyzer extends AbstractFailureAnalyzer<UnboundConfigurationPropertiesException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, UnboundConfigurationPropertiesException cause) {
        List<String> ours = cause.getUnboundProperties().stream().map(ConfigurationProperty::getName)
                .map(Object::toString).filter(n -> n.startsWith("sandbox4j.")).sorted().toList();
        if (ours.isEmpty()) {
            return null; // not ours: Boot's analyzer reports it
        }
        return new FailureAnalysis("sandbox4j does not know these properties: " + String.join(", ", ours)
                + " (their values are not shown: one may be a credential)",
                "Remove or correct them. Credentials are never read from properties: set the provider's own"
                        + " environment variable (E2B_API_KEY, DAYTONA_API_KEY, VERCEL_TOKEN, MODAL_TOKEN_ID and"
                        + " MODAL_TOKEN_SECRET).", cause);
    }
}
