/**
 * Internal. The command line of the runnable jar: option parsing and the stdio main class. Not API.
 */
package dev.sandbox4j.mcp.internal;
