//! How a model takes thinking. Claude models up to 4.5 take a token budget
//! (`thinking: {"type": "enabled", "budget_tokens": N}`); from 4.6 on they
//! think adaptively and take an effort level instead
//! (`thinking: {"type": "adaptive"}` with `output_config: {"effort": …}`),
//! and Sonnet 5.5 refuses a budget with HTTP 400. The style is read off the
//! model id, so a new model works without a catalogue entry: an id that is
//! not a recognisable older Claude model is taken to be a new one.

/// The thinking request a model takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A token budget (Claude 3.x and 4.0–4.5).
    Budget,
    /// Adaptive thinking steered by an effort level (4.6 and later).
    Adaptive,
}

/// The style for a model id such as `claude-sonnet-4-5-20250929`,
/// `claude-3-7-sonnet-latest` or `anthropic.claude-opus-4-1-v1:0`.
pub fn style(model: &str) -> Style {
    match version(model) {
        Some((major, minor)) if major < 4 || (major == 4 && minor < 6) => Style::Budget,
        _ => Style::Adaptive,
    }
}

/// `(major, minor)` of a Claude model id: the first one- or two-digit
/// numbers after `claude-`; a date (`20250514`) or nothing counts as minor 0.
fn version(model: &str) -> Option<(u32, u32)> {
    let rest = &model[model.find("claude-")? + "claude-".len()..];
    let mut numbers = rest
        .split(['-', '.', '@', ':'])
        .skip_while(|part| part.parse::<u32>().is_err())
        .map_while(|part| part.parse::<u32>().ok());
    let major = numbers.next()?;
    let minor = numbers.next().filter(|n| *n < 100).unwrap_or(0);
    Some((major, minor))
}

/// The effort level the API takes for uji's effort; `None` sends none.
pub fn effort(effort: Option<&str>) -> Option<&'static str> {
    match effort? {
        "" | "off" | "none" => None,
        "minimal" | "low" => Some("low"),
        "medium" => Some("medium"),
        "high" => Some("high"),
        "xhigh" => Some("xhigh"),
        "max" => Some("max"),
        _ => Some("medium"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn older_models_take_a_budget_newer_ones_adapt() {
        for old in [
            "claude-3-7-sonnet-latest",
            "claude-3-5-haiku-20241022",
            "claude-sonnet-4-20250514",
            "claude-opus-4-1",
            "claude-opus-4-5",
            "claude-sonnet-4-5-20250929",
            "claude-haiku-4-5",
            "anthropic.claude-sonnet-4-5-20250929-v1:0",
            "claude-opus-4@20250514",
        ] {
            assert_eq!(style(old), Style::Budget, "{old}");
        }
        for new in [
            "claude-sonnet-4-6",
            "claude-opus-4-7",
            "claude-sonnet-5",
            "claude-sonnet-5-5",
            "claude-haiku-5-5",
            "claude-opus-5-5",
            "claude-next",
            "my-proxy-model",
        ] {
            assert_eq!(style(new), Style::Adaptive, "{new}");
        }
    }

    #[test]
    fn efforts_map_to_the_api_levels() {
        assert_eq!(effort(None), None);
        assert_eq!(effort(Some("off")), None);
        assert_eq!(effort(Some("minimal")), Some("low"));
        assert_eq!(effort(Some("xhigh")), Some("xhigh"));
        assert_eq!(effort(Some("max")), Some("max"));
    }
}
