/** Internals of the Kubernetes runner: the driver, the policy translation, the exec scripts. Not API. */
package dev.sandbox4j.kubernetes.internal;
