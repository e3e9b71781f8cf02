/**
 * API. The Vercel Sandbox adapter: {@link dev.sandbox4j.vercel.VercelSandboxRunner}.
 */
package dev.sandbox4j.vercel;
