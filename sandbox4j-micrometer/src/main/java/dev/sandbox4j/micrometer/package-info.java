/**
 * API: Micrometer observations of sandbox4j's lifecycle. {@link
 * dev.sandbox4j.micrometer.MicrometerLifecycleListener} is a {@link dev.sandbox4j.api.LifecycleListener}
 * that makes one observation per create ({@code sandbox4j.create}), exec ({@code sandbox4j.exec}) and
 * teardown ({@code sandbox4j.teardown}), tagged by provider, outcome and exception type, never by code
 * or output, and counts suspected leaks ({@code sandbox4j.leaks.suspected}). Usable without Spring; the
 * Spring Boot starter configures it when an {@code ObservationRegistry} bean exists.
 */
package dev.sandbox4j.micrometer;
