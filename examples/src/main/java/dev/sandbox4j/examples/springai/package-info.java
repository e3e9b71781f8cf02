/**
 * Example: a Spring AI tool.
 */
package dev.sandbox4j.examples.springai;
