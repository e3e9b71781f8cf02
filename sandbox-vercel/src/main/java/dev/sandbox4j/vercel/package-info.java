/**
 * API. The Vercel Sandbox adapter: {@link dev.sandbox4j.vercel.VercelSandboxRunner}. A session's stop
 * answers 200 even when the session had already ended; the teardown reports
 * {@link dev.sandbox4j.api.Teardown#ALREADY_GONE} when the answer shows it failed, was aborted, or
 * stopped at its timeout (server timestamps compared with each other), else
 * {@link dev.sandbox4j.api.Teardown#DESTROYED}.
 *
 * <p>Header rules become transforms at Vercel's firewall, one rule list per host. A scoped rule
 * ({@code HeaderRule.builder(...).methods(...).pathPrefix(...)}) becomes the rule's {@code match}
 * ({@code {"method":[...], "path":{"startsWith":...}}}). Vercel applies only the first rule of a host
 * that matches, so rules with the same scope share one transform, every overlap of two scopes is a rule
 * of its own carrying the headers of both, and the most specific go first: each request gets exactly
 * the headers whose scope holds it, as on the local runner. Outside a scope Vercel passes on a header the
 * sandbox sent itself, where the local runner's proxy removes it. Refused before any call: two rules
 * setting one header on one host whose scopes overlap (which value Vercel sends would depend on order),
 * and more than 32 rules for one host.
 */
package dev.sandbox4j.vercel;
