/**
 * Example (internal, not published): a Spring Boot application with Spring AI whose chat client may run code, through
 * sandbox4j-spring-boot-starter.
 */
package dev.sandbox4j.examples.springai;
