/**
 * API: the Spring Boot starter's auto-configuration and {@code sandbox4j.*} properties. The runner,
 * caps and code-execution tool ({@link dev.sandbox4j.spring.Sandbox4jAutoConfiguration}), Micrometer
 * observations ({@link dev.sandbox4j.spring.Sandbox4jObservationAutoConfiguration}) and, in
 * {@code dev.sandbox4j.spring.ai}, the Spring AI tool callbacks. Targets Spring Boot 3.5 with Spring AI
 * 1.1. sandbox4j's own refusals at startup are {@link dev.sandbox4j.spring.Sandbox4jPropertyException}s,
 * reported by {@link dev.sandbox4j.spring.Sandbox4jPropertyFailureAnalyzer} with the property, its value
 * and the fix; the caps key of each call comes from the {@link dev.sandbox4j.spring.SandboxKeyResolver}
 * bean (default: {@code sandbox4j.caps.key}, one key for the application).
 */
package dev.sandbox4j.spring;
