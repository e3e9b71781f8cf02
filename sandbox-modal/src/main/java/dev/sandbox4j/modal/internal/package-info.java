/**
 * Internal to sandbox-modal: not API, may change in any release.
 */
package dev.sandbox4j.modal.internal;
