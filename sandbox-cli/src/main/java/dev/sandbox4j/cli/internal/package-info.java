/**
 * Internal to the command line.
 */
package dev.sandbox4j.cli.internal;
