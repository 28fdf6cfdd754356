package stackbench.jetty;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;

/** The parameters of one request, with the validation rules of docs/contracts.md section 1. */
final class Query {
    private static final Pattern DECIMAL = Pattern.compile("[0-9]{1,18}");

    private final UnaryOperator<String> lookup;

    Query(UnaryOperator<String> lookup) {
        this.lookup = lookup;
    }

    /** Parses a raw query string such as {@code n=1000&x=y} (script mode); the first value of a name wins. */
    static Query parse(String queryString) {
        Map<String, String> values = new HashMap<>();
        for (String pair : queryString.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String name = decode(eq < 0 ? pair : pair.substring(0, eq));
            String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
            values.putIfAbsent(name, value);
        }
        return new Query(values::get);
    }

    /** The same query with one extra parameter, e.g. {@code n} taken from the path of /data/{n}. */
    Query with(String name, String value) {
        return new Query(key -> key.equals(name) ? value : lookup.apply(key));
    }

    /** A decimal integer in min..max; absent means the default; anything else is a 400. */
    long number(String name, long defaultValue, long min, long max) {
        String value = lookup.apply(name);
        return value == null ? defaultValue : parseInRange(name, value, min, max);
    }

    /** Like {@link #number} but the parameter must be present. */
    long requiredNumber(String name, long min, long max) {
        String value = lookup.apply(name);
        if (value == null) {
            throw new BadRequestException(name + " is required (a decimal integer in " + min + ".." + max + ")");
        }
        return parseInRange(name, value, min, max);
    }

    /** TechEmpower's rule for queries/updates: clamp to 1..500, missing or not a number means 1. */
    int techEmpowerCount(String name) {
        String value = lookup.apply(name);
        if (value == null || !DECIMAL.matcher(value).matches()) {
            return 1;
        }
        return (int) Math.max(1, Math.min(500, Long.parseLong(value)));
    }

    private static long parseInRange(String name, String value, long min, long max) {
        if (DECIMAL.matcher(value).matches()) {
            long parsed = Long.parseLong(value);
            if (parsed >= min && parsed <= max) {
                return parsed;
            }
        }
        throw new BadRequestException(name + " must be a decimal integer in " + min + ".." + max + ", got '" + value + "'");
    }

    private static String decode(String text) {
        return URLDecoder.decode(text, StandardCharsets.UTF_8);
    }
}
