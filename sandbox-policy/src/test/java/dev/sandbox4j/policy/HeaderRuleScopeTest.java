package dev.sandbox4j.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import org.junit.jupiter.api.Test;

/** A header rule's scope (method and path prefix, as Vercel's match), added compatibly to HeaderRule. */
class HeaderRuleScopeTest {
    private static final SecretRef KEY = SecretRef.of("key", () -> "value-never-shown");

    @Test
    void anUnscopedRuleAppliesToEveryRequest() {
        HeaderRule r = HeaderRule.of("api.example.com", "Authorization", KEY, "Bearer ");
        assertFalse(r.isScoped());
        assertEquals(Set.of(), r.methods());
        assertEquals("/", r.pathPrefix());
        assertTrue(r.appliesTo("DELETE", "/anything"));
        assertEquals(r, HeaderRule.builder("api.example.com", "authorization", KEY).valuePrefix("Bearer ").build());
    }

    @Test
    void methodsAreAnyOfAndThePathIsAPrefixCaseSensitive() {
        HeaderRule r = HeaderRule.builder("api.example.com", "X-Api-Key", KEY).methods("get", "POST").pathPrefix("/v1/").build();
        assertTrue(r.isScoped());
        assertEquals(Set.of("GET", "POST"), r.methods());
        assertTrue(r.appliesTo("GET", "/v1/models"));
        assertTrue(r.appliesTo("POST", "/v1/"));
        assertFalse(r.appliesTo("PUT", "/v1/models"));
        assertFalse(r.appliesTo("GET", "/v1"));
        assertFalse(r.appliesTo("GET", "/V1/models"));
        assertNotEquals(r, HeaderRule.of("api.example.com", "X-Api-Key", KEY));
        assertEquals("HeaderRule[api.example.com X-Api-Key: SecretRef[key] methods=[GET, POST] path=/v1/*]", r.toString());
        assertFalse(r.toString().contains("value-never-shown"));
    }

    @Test
    void aBadScopeIsRefusedWithASentence() {
        InvalidPolicyException e = assertThrows(InvalidPolicyException.class,
                () -> HeaderRule.builder("api.example.com", "X-Api-Key", KEY).pathPrefix("v1/").build());
        assertEquals("header rule for 'api.example.com': the path prefix 'v1/' must start with '/' and hold no query,"
                + " fragment, space or control character", e.problems().get(0));
        assertThrows(InvalidPolicyException.class, () -> HeaderRule.builder("api.example.com", "X-Api-Key", KEY).pathPrefix("/a?b").build());
        e = assertThrows(InvalidPolicyException.class, () -> HeaderRule.builder("api.example.com", "X-Api-Key", KEY).methods("GE T").build());
        assertEquals("header rule for 'api.example.com': 'GE T' is not a valid HTTP method", e.problems().get(0));
    }
}
