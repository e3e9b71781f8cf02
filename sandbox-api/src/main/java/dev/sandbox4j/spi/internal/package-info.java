/**
 * Internal to sandbox-api: not API, not exported by the module, may change in any release. The
 * policy label's format, written by {@link dev.sandbox4j.spi.CreateRequest} and read by the
 * lifecycle's attach.
 */
package dev.sandbox4j.spi.internal;
