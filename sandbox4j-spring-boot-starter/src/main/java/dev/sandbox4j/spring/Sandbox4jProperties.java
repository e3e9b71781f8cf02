package dev.sandbox4j.spring;

import dev.sandbox4j.policy.Language;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code sandbox4j.*} properties: the provider, the policy and the limits, fixed when the
 * application starts; nothing here can be chosen by a model. Credentials are never properties: each
 * provider reads its own environment variables ({@code E2B_API_KEY}, {@code DAYTONA_API_KEY},
 * {@code VERCEL_TOKEN}, {@code MODAL_TOKEN_ID}...). An unknown {@code sandbox4j.*} key fails startup, so
 * a misspelt limit or a key pasted into a properties file is never silently ignored.
 *
 * @since 0.1.0
 */
@ConfigurationProperties(prefix = "sandbox4j", ignoreUnknownFields = false)
public class Sandbox4jProperties {
    /**
     * The provider: local, e2b, daytona, vercel or modal (its module must be on the classpath, its
     * credentials in its own environment variables).
     */
    private String provider = "local";

    /**
     * Providers to open a sandbox on, in this order, when the provider cannot (a retriable failure
     * that ran no code); untrusted code never runs twice.
     */
    private List<String> failover = new ArrayList<>();

    /** Whether a provider that cannot enforce the policy hands over to the next failover provider instead of failing. */
    private boolean failoverOnUnsupportedPolicy = false;

    /** The time limit of a run when the model asks for none. */
    private Duration budget = Duration.ofSeconds(30);

    /** The most time a run gets, whatever the model asks for. */
    private Duration maxBudget = Duration.ofSeconds(120);

    /** Characters of stdout and of stderr shown to the model, each. */
    private int outputLimit = 8_000;

    /** How long a session's sandbox may live (a session spans several tool calls of one task). */
    private Duration sessionLifetime = Duration.ofMinutes(10);

    /** Languages the model may use (python, javascript, bash); empty: every language the provider runs. */
    private List<Language> languages = new ArrayList<>();

    /** The language of code sent without one; default: Python when allowed, else the first allowed. */
    private Language defaultLanguage;

    private final Egress egress = new Egress();
    private final Limits limits = new Limits();
    private final Caps caps = new Caps();
    private final Observations observations = new Observations();

    /** @return the provider name */
    public String getProvider() {
        return provider;
    }

    /** @param provider the provider name */
    public void setProvider(String provider) {
        this.provider = provider;
    }

    /** @return the failover providers, in order */
    public List<String> getFailover() {
        return failover;
    }

    /** @param failover the failover providers, in order */
    public void setFailover(List<String> failover) {
        this.failover = failover;
    }

    /** @return whether an unsupported policy hands over to the next provider */
    public boolean isFailoverOnUnsupportedPolicy() {
        return failoverOnUnsupportedPolicy;
    }

    /** @param failover whether an unsupported policy hands over to the next provider */
    public void setFailoverOnUnsupportedPolicy(boolean failover) {
        this.failoverOnUnsupportedPolicy = failover;
    }

    /** @return the default budget */
    public Duration getBudget() {
        return budget;
    }

    /** @param budget the default budget */
    public void setBudget(Duration budget) {
        this.budget = budget;
    }

    /** @return the maximum budget */
    public Duration getMaxBudget() {
        return maxBudget;
    }

    /** @param maxBudget the maximum budget */
    public void setMaxBudget(Duration maxBudget) {
        this.maxBudget = maxBudget;
    }

    /** @return characters per stream shown to the model */
    public int getOutputLimit() {
        return outputLimit;
    }

    /** @param outputLimit characters per stream shown to the model */
    public void setOutputLimit(int outputLimit) {
        this.outputLimit = outputLimit;
    }

    /** @return a session's lifetime */
    public Duration getSessionLifetime() {
        return sessionLifetime;
    }

    /** @param sessionLifetime a session's lifetime */
    public void setSessionLifetime(Duration sessionLifetime) {
        this.sessionLifetime = sessionLifetime;
    }

    /** @return the languages allowed (empty: all the provider runs) */
    public List<Language> getLanguages() {
        return languages;
    }

    /** @param languages the languages allowed */
    public void setLanguages(List<Language> languages) {
        this.languages = languages;
    }

    /** @return the default language, or null */
    public Language getDefaultLanguage() {
        return defaultLanguage;
    }

    /** @param defaultLanguage the default language */
    public void setDefaultLanguage(Language defaultLanguage) {
        this.defaultLanguage = defaultLanguage;
    }

    /** @return {@code sandbox4j.egress.*} */
    public Egress getEgress() {
        return egress;
    }

    /** @return {@code sandbox4j.limits.*} */
    public Limits getLimits() {
        return limits;
    }

    /** @return {@code sandbox4j.caps.*} */
    public Caps getCaps() {
        return caps;
    }

    /** @return {@code sandbox4j.observations.*} */
    public Observations getObservations() {
        return observations;
    }

    /**
     * {@code sandbox4j.egress.*}: deny-all unless something is allowed.
     *
     * @since 0.1.0
     */
    public static class Egress {
        /** Whether the sandbox may reach anything (then no allowed-* list may be set; denied-cidrs still apply). */
        private boolean allowAll = false;

        /** Domains the sandbox may reach over TCP 80/443 (exact, or *.example.com for subdomains). */
        private List<String> allowedDomains = new ArrayList<>();

        /** Address ranges the sandbox may reach, e.g. 203.0.113.0/24. */
        private List<String> allowedCidrs = new ArrayList<>();

        /** Address ranges the sandbox may never reach; deny wins over allow. */
        private List<String> deniedCidrs = new ArrayList<>();

        /** @return whether everything is allowed */
        public boolean isAllowAll() {
            return allowAll;
        }

        /** @param allowAll whether everything is allowed */
        public void setAllowAll(boolean allowAll) {
            this.allowAll = allowAll;
        }

        /** @return the allowed domains */
        public List<String> getAllowedDomains() {
            return allowedDomains;
        }

        /** @param allowedDomains the allowed domains */
        public void setAllowedDomains(List<String> allowedDomains) {
            this.allowedDomains = allowedDomains;
        }

        /** @return the allowed address ranges */
        public List<String> getAllowedCidrs() {
            return allowedCidrs;
        }

        /** @param allowedCidrs the allowed address ranges */
        public void setAllowedCidrs(List<String> allowedCidrs) {
            this.allowedCidrs = allowedCidrs;
        }

        /** @return the denied address ranges */
        public List<String> getDeniedCidrs() {
            return deniedCidrs;
        }

        /** @param deniedCidrs the denied address ranges */
        public void setDeniedCidrs(List<String> deniedCidrs) {
            this.deniedCidrs = deniedCidrs;
        }
    }

    /**
     * {@code sandbox4j.limits.*}: the sandbox's size; unset means the provider's default.
     *
     * @since 0.1.0
     */
    public static class Limits {
        /** Memory of the whole sandbox, in MiB. */
        private Integer memoryMib;

        /** Virtual CPUs of the sandbox. */
        private Integer vcpus;

        /** Disk of the sandbox, in MiB. */
        private Integer diskMib;

        /** @return memory in MiB, or null */
        public Integer getMemoryMib() {
            return memoryMib;
        }

        /** @param memoryMib memory in MiB */
        public void setMemoryMib(Integer memoryMib) {
            this.memoryMib = memoryMib;
        }

        /** @return vCPUs, or null */
        public Integer getVcpus() {
            return vcpus;
        }

        /** @param vcpus vCPUs */
        public void setVcpus(Integer vcpus) {
            this.vcpus = vcpus;
        }

        /** @return disk in MiB, or null */
        public Integer getDiskMib() {
            return diskMib;
        }

        /** @param diskMib disk in MiB */
        public void setDiskMib(Integer diskMib) {
            this.diskMib = diskMib;
        }
    }

    /**
     * {@code sandbox4j.caps.*}: how many sandboxes may be open at once. Off unless per-key is set.
     *
     * @since 0.1.0
     */
    public static class Caps {
        /** Sandboxes open at once per key; setting it turns the caps on (a ConcurrencyLimiter bean). */
        private Integer perKey;

        /** Sandboxes open at once over all keys; unset: no global cap. */
        private Integer global;

        /** How long opening a sandbox waits for a permit before it fails (retriable, nothing created). */
        private Duration maxWait = Duration.ofSeconds(30);

        /** The key the auto-configured tool's sandboxes count against (use the limiter bean for per-user keys). */
        private String key = "application";

        /** @return sandboxes per key, or null (caps off) */
        public Integer getPerKey() {
            return perKey;
        }

        /** @param perKey sandboxes per key */
        public void setPerKey(Integer perKey) {
            this.perKey = perKey;
        }

        /** @return sandboxes over all keys, or null */
        public Integer getGlobal() {
            return global;
        }

        /** @param global sandboxes over all keys */
        public void setGlobal(Integer global) {
            this.global = global;
        }

        /** @return the longest wait for a permit */
        public Duration getMaxWait() {
            return maxWait;
        }

        /** @param maxWait the longest wait for a permit */
        public void setMaxWait(Duration maxWait) {
            this.maxWait = maxWait;
        }

        /** @return the tool's key */
        public String getKey() {
            return key;
        }

        /** @param key the tool's key */
        public void setKey(String key) {
            this.key = key;
        }
    }

    /**
     * {@code sandbox4j.observations.*}.
     *
     * @since 0.1.0
     */
    public static class Observations {
        /** Whether creates, execs and teardowns are observed when an ObservationRegistry bean exists. */
        private boolean enabled = true;

        /** @return whether observations are on */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether observations are on */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }
}
