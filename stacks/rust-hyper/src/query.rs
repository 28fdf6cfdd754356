//! Query-string parameter parsing with the contract's validation rules.

/// The raw value of parameter `name` (first occurrence), or None when absent.
pub fn param<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (key == name).then_some(value)
    })
}

/// A strict decimal integer (digits only, no sign) within min..=max.
pub fn parse_bounded(text: &str, min: u64, max: u64) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<u64>().ok().filter(|v| (min..=max).contains(v))
}

/// Parameter `n`: its default when absent, None (answer 400) when invalid.
pub fn param_n(query: &str, default: u64, min: u64, max: u64) -> Option<u64> {
    match param(query, "n") {
        None => Some(default),
        Some(raw) => parse_bounded(raw, min, max),
    }
}

/// TechEmpower rule for queries/updates: missing or garbage -> 1, then clamp to 1..=500.
pub fn tfb_query_count(query: &str) -> usize {
    match param(query, "queries") {
        Some(raw) if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) => {
            raw.parse::<u64>().unwrap_or(u64::MAX).clamp(1, 500) as usize
        }
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_validates() {
        assert_eq!(param("a=1&n=5", "n"), Some("5"));
        assert_eq!(param("a=1", "n"), None);
        assert_eq!(param_n("", 1000, 0, 10), Some(1000));
        assert_eq!(param_n("n=10", 1000, 0, 10), Some(10));
        assert_eq!(param_n("n=11", 1000, 0, 10), None);
        assert_eq!(param_n("n=-1", 1000, 0, 10), None);
        assert_eq!(param_n("n=", 1000, 0, 10), None);
        assert_eq!(param_n("n=+1", 1000, 0, 10), None);
    }

    #[test]
    fn clamps_tfb_queries() {
        assert_eq!(tfb_query_count(""), 1);
        assert_eq!(tfb_query_count("queries=abc"), 1);
        assert_eq!(tfb_query_count("queries=0"), 1);
        assert_eq!(tfb_query_count("queries=20"), 20);
        assert_eq!(tfb_query_count("queries=501"), 500);
        assert_eq!(tfb_query_count("queries=99999999999999999999999"), 500);
    }
}
