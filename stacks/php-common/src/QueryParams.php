<?php
declare(strict_types=1);

namespace Stackbench;

/** Parses the loop-count parameters of docs/contracts.md section 1. */
final class QueryParams
{
    /**
     * The decimal integer `$name` of `$query`, `$default` when absent.
     * Anything else (sign, spaces, hex, arrays, out of range) is a BadRequest.
     */
    public static function int(array $query, string $name, int $default, int $min, int $max): int
    {
        if (!array_key_exists($name, $query)) {
            return $default;
        }
        return self::decimal($query[$name], $name, $min, $max);
    }

    /** `$raw` as an integer in `$min..$max`, or a BadRequest naming `$name`. */
    public static function decimal(mixed $raw, string $name, int $min, int $max): int
    {
        // At most 10 digits: every range we accept fits, and intval() cannot overflow.
        if (!is_string($raw) || preg_match('/^[0-9]{1,10}$/D', $raw) !== 1) {
            throw new BadRequest("$name must be a decimal integer in $min..$max");
        }
        $value = (int) $raw;
        if ($value < $min || $value > $max) {
            throw new BadRequest("$name must be a decimal integer in $min..$max, got $value");
        }
        return $value;
    }

    /**
     * TechEmpower's `queries` rule: missing, garbage or < 1 means 1, > 500 means 500.
     */
    public static function tfbQueries(array $query): int
    {
        $raw = $query['queries'] ?? null;
        if (!is_string($raw) || preg_match('/^-?[0-9]+$/D', $raw) !== 1) {
            return 1;
        }
        // A long digit string saturates to PHP_INT_MAX in the cast, which still clamps to 500.
        return max(1, min(500, (int) $raw));
    }
}
