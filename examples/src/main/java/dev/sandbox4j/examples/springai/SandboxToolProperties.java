package dev.sandbox4j.examples.springai;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code sandbox4j.*} settings. Everything the model must not choose is here, fixed at startup.
 *
 * <pre>
 * sandbox4j.provider=local                 # or e2b, daytona, vercel, modal (their keys from the environment)
 * sandbox4j.budget=10s                     # when the model asks for no time limit
 * sandbox4j.max-budget=30s                 # the most the model gets, whatever it asks
 * sandbox4j.output-limit=4000              # characters of stdout and of stderr shown to the model
 * sandbox4j.egress.allowed-domains=pypi.org,files.pythonhosted.org   # empty: no network
 * </pre>
 */
@ConfigurationProperties("sandbox4j")
public class SandboxToolProperties {
    private String provider = "local";
    private Duration budget = Duration.ofSeconds(10);
    private Duration maxBudget = Duration.ofSeconds(30);
    private int outputLimit = 4_000;
    private final Egress egress = new Egress();

    public String getProvider() {
        return provider;
    }

    public void setProvider(String provider) {
        this.provider = provider;
    }

    public Duration getBudget() {
        return budget;
    }

    public void setBudget(Duration budget) {
        this.budget = budget;
    }

    public Duration getMaxBudget() {
        return maxBudget;
    }

    public void setMaxBudget(Duration maxBudget) {
        this.maxBudget = maxBudget;
    }

    public int getOutputLimit() {
        return outputLimit;
    }

    public void setOutputLimit(int outputLimit) {
        this.outputLimit = outputLimit;
    }

    public Egress getEgress() {
        return egress;
    }

    /** {@code sandbox4j.egress.*}: deny-all unless domains are listed or allow-all is set. */
    public static class Egress {
        private boolean allowAll;
        private List<String> allowedDomains = new ArrayList<>();

        public boolean isAllowAll() {
            return allowAll;
        }

        public void setAllowAll(boolean allowAll) {
            this.allowAll = allowAll;
        }

        public List<String> getAllowedDomains() {
            return allowedDomains;
        }

        public void setAllowedDomains(List<String> allowedDomains) {
            this.allowedDomains = allowedDomains;
        }
    }
}
