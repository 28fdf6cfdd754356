package stackbench.jetty;

import java.util.Map;
import java.util.Optional;

/** Typed reads of environment variables; every error names the variable at fault. */
final class Env {
    private final Map<String, String> vars;

    Env(Map<String, String> vars) {
        this.vars = vars;
    }

    /** The value, or empty when the variable is unset or blank (the orchestrator may pass "" for "none"). */
    Optional<String> optional(String name) {
        String value = vars.get(name);
        return value == null || value.isBlank() ? Optional.empty() : Optional.of(value.trim());
    }

    String required(String name) {
        return optional(name).orElseThrow(() -> new IllegalArgumentException(
                "environment variable " + name + " is not set (the stackbench orchestrator sets it; see docs/contracts.md section 3)"));
    }

    String orDefault(String name, String fallback) {
        return optional(name).orElse(fallback);
    }

    int requiredInt(String name, int min) {
        return parseInt(name, required(name), min);
    }

    int intOrDefault(String name, int fallback, int min) {
        return optional(name).map(value -> parseInt(name, value, min)).orElse(fallback);
    }

    private static int parseInt(String name, String value, int min) {
        try {
            int parsed = Integer.parseInt(value);
            if (parsed >= min) {
                return parsed;
            }
        } catch (NumberFormatException ignored) {
            // reported below with the variable's name
        }
        throw new IllegalArgumentException("environment variable " + name + "=" + value + " must be an integer >= " + min);
    }
}
