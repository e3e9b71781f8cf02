/**
 * Internal to sandbox-emulators-modal: not API, may change in any release.
 */
package dev.sandbox4j.emulators.modal.internal;
