/**
 * The adapter benchmark: each Java adapter beside its provider's official npm SDK, against the same
 * emulator process in its instant mode, interleaved; and the output flood (heap and bytes read past
 * the cap). Internal tooling, not published; see {@code benchmarks/README.md} for the commands.
 */
package dev.sandbox4j.benchmarks.adapters;
