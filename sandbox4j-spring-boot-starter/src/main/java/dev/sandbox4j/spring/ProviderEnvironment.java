package dev.sandbox4j.spring;

import java.util.Map;

/**
 * Where the providers' own environment variables are read from: the process environment by default.
 * Declare a bean of this type to read them elsewhere (a test pointing {@code E2B_API_URL} at an
 * emulator); keys still never come from {@code sandbox4j.*} properties.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface ProviderEnvironment {
    /** The process environment. */
    ProviderEnvironment SYSTEM = System::getenv;

    /** @return the variables, e.g. {@code E2B_API_KEY} */
    Map<String, String> variables();
}
