/**
 * API: the Spring Boot starter's auto-configuration and {@code sandbox4j.*} properties. The runner,
 * caps and code-execution tool ({@link dev.sandbox4j.spring.Sandbox4jAutoConfiguration}), Micrometer
 * observations ({@link dev.sandbox4j.spring.Sandbox4jObservationAutoConfiguration}) and, in
 * {@code dev.sandbox4j.spring.ai}, the Spring AI tool callbacks. Targets Spring Boot 3.5 with Spring AI
 * 1.1.
 */
package dev.sandbox4j.spring;
