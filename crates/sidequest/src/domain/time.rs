//! Times on the wire: the store keeps epoch milliseconds ([`super::Millis`]); every MCP result
//! and REST body shows them as ISO 8601 UTC with milliseconds and `Z`
//! (`2026-12-01T18:15:02.784Z`), which keeps all the stored precision. The web pages and the
//! reports word times their own way.

use super::Millis;

/// `ms` as ISO 8601 UTC with exactly three fractional digits and `Z`. A value outside the
/// representable range (no stored time is) saturates at jiff's bounds rather than failing.
pub fn iso8601(ms: Millis) -> String {
    let t = jiff::Timestamp::from_millisecond(ms).unwrap_or(if ms < 0 {
        jiff::Timestamp::MIN
    } else {
        jiff::Timestamp::MAX
    });
    format!("{t:.3}")
}

/// An optional time: `None` stays `None` (JSON `null`).
pub fn iso8601_opt(ms: Option<Millis>) -> Option<String> {
    ms.map(iso8601)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milliseconds_and_z_always() {
        assert_eq!(iso8601(1_796_148_902_784), "2026-12-01T18:15:02.784Z");
        // whole seconds keep their three digits, so every time has one shape
        assert_eq!(iso8601(1_767_225_600_000), "2026-01-01T00:00:00.000Z");
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601_opt(None), None);
        assert_eq!(
            iso8601_opt(Some(1)),
            Some("1970-01-01T00:00:00.001Z".to_owned())
        );
    }

    #[test]
    fn out_of_range_saturates() {
        assert_eq!(iso8601(i64::MAX), "9999-12-30T22:00:00.999Z");
        assert_eq!(iso8601(i64::MIN), "-009999-01-02T01:59:59.000Z");
    }
}
