// Query-string parameter parsing with the contract's validation rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace stackbench {

// The raw value of parameter `name` (first occurrence), or nullopt when absent.
std::optional<std::string_view> query_param(std::string_view query, std::string_view name);

// A strict decimal integer (digits only, no sign, no spaces) within [min, max], else nullopt.
std::optional<std::int64_t> parse_bounded(std::string_view text, std::int64_t min, std::int64_t max);

// TechEmpower rule for queries/updates: missing or garbage -> 1, then clamp to 1..500.
int tfb_query_count(std::string_view query);

}  // namespace stackbench
