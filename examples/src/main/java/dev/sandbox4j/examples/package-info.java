/**
 * Example applications; not published.
 */
package dev.sandbox4j.examples;
