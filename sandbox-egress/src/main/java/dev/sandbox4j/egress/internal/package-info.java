/**
 * Internal, not API: the connection handler, HTTP/1.1 framing, the ClientHello reader, the TLS
 * engine streams, address checks and the small DER/X.509 encoder of the per-proxy CA. May change
 * in any release.
 */
package dev.sandbox4j.egress.internal;
