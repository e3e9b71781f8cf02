/**
 * API. The local bubblewrap runner, the embedded default on Linux.
 */
package dev.sandbox4j.local;
