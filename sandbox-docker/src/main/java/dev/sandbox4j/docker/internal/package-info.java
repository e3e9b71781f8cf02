/**
 * Internal to sandbox-docker: not API, may change in any release.
 */
package dev.sandbox4j.docker.internal;
