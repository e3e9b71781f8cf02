/**
 * API. The Daytona adapter: {@link dev.sandbox4j.daytona.DaytonaSandboxRunner}.
 */
package dev.sandbox4j.daytona;
