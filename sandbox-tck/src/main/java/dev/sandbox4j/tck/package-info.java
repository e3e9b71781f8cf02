/**
 * API for runner authors: the contract suite every runner passes, skipping only by declared
 * capabilities, and its egress canary.
 */
package dev.sandbox4j.tck;
