#include "query.hpp"

#include <algorithm>

namespace stackbench {

std::optional<std::string_view> query_param(std::string_view query, std::string_view name) {
    while (!query.empty()) {
        const auto amp = query.find('&');
        const std::string_view pair = query.substr(0, amp);
        const auto eq = pair.find('=');
        if (pair.substr(0, eq) == name) return eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
        if (amp == std::string_view::npos) break;
        query.remove_prefix(amp + 1);
    }
    return std::nullopt;
}

std::optional<std::int64_t> parse_bounded(std::string_view text, std::int64_t min, std::int64_t max) {
    if (text.empty() || text.size() > 18) return std::nullopt;  // 18 digits cannot overflow int64
    std::int64_t value = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        value = value * 10 + (c - '0');
    }
    if (value < min || value > max) return std::nullopt;
    return value;
}

int tfb_query_count(std::string_view query) {
    const auto raw = query_param(query, "queries");
    if (!raw) return 1;
    // Any integer, however large, is clamped; only non-numbers fall back to 1.
    const bool numeric = !raw->empty() && std::all_of(raw->begin(), raw->end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!numeric) return 1;
    std::string_view digits = *raw;
    while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
    if (digits.size() > 3) return 500;
    return std::clamp(static_cast<int>(*parse_bounded(digits, 0, 999)), 1, 500);
}

}  // namespace stackbench
