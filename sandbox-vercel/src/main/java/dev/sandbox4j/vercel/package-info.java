/**
 * API. The Vercel Sandbox adapter: {@link dev.sandbox4j.vercel.VercelSandboxRunner}. A session's stop
 * answers 200 even when the session had already ended; the teardown reports
 * {@link dev.sandbox4j.api.Teardown#ALREADY_GONE} when the answer shows it failed, was aborted, or
 * stopped at its timeout (server timestamps compared with each other), else
 * {@link dev.sandbox4j.api.Teardown#DESTROYED}.
 */
package dev.sandbox4j.vercel;
