package dev.sandbox4j.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.env.Environment;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.support.SpringFactoriesLoader;

class UnknownPropertyFailureAnalyzerTest {
    private static final String KEY = "e2b_not_a_real_key_0123456789";

    @Test
    void namesTheUnknownPropertyButNeverItsValue() {
        UnboundConfigurationPropertiesException e = new UnboundConfigurationPropertiesException(Set.of(
                new ConfigurationProperty(ConfigurationPropertyName.of("sandbox4j.api-key"), KEY, null)));
        FailureAnalysis a = new UnknownPropertyFailureAnalyzer().analyze(e);
        assertThat(a).isNotNull();
        assertThat(a.getDescription()).contains("sandbox4j.api-key").doesNotContain(KEY);
        assertThat(a.getAction()).contains("E2B_API_KEY").doesNotContain(KEY);
    }

    @Test
    void leavesOtherPrefixesToBoot() {
        UnboundConfigurationPropertiesException e = new UnboundConfigurationPropertiesException(Set.of(
                new ConfigurationProperty(ConfigurationPropertyName.of("other.thing"), "x", null)));
        assertThat(new UnknownPropertyFailureAnalyzer().analyze(e)).isNull();
    }

    @Test
    void comesBeforeBootsOwnAnalyzers() {
        // SpringApplication takes the first analysis in this order: ours must come before Boot's
        // UnboundConfigurationPropertyFailureAnalyzer, which prints each property's value
        var analyzers = SpringFactoriesLoader.forDefaultResourceLocation(getClass().getClassLoader())
                .load(FailureAnalyzer.class, SpringFactoriesLoader.ArgumentResolver.of(Environment.class, new StandardEnvironment()),
                        SpringFactoriesLoader.FailureHandler.handleMessage((message, failure) -> { })); // some need a context
        assertThat(analyzers).isNotEmpty();
        assertThat(analyzers.get(0)).isInstanceOf(UnknownPropertyFailureAnalyzer.class);
    }
}
