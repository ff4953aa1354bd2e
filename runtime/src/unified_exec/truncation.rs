//! Token-budget truncation of exec output for the model (spec §4.5): unchanged when it fits,
//! otherwise a warning header and a middle-truncated body. Written here, privately, because the
//! shared `truncate` module was still a stub when this area was built.

/// Approximate tokens of `text` (4 bytes per token, rounded up).
pub(crate) fn approx_token_count(text: &str) -> usize {
    text.len().div_ceil(4)
}

/// `text` if it fits `max_tokens`, else `Warning: truncated output …` + middle-truncated body.
pub(crate) fn formatted_truncate_text(text: &str, max_tokens: usize) -> String {
    if text.len() <= max_tokens.saturating_mul(4) {
        return text.to_owned();
    }
    format!(
        "Warning: truncated output (original token count: {})\nTotal output lines: {}\n\n{}",
        approx_token_count(text),
        text.lines().count(),
        truncate_middle(text, max_tokens)
    )
}

/// Keeps the first and last halves of the byte budget on char boundaries and puts
/// `…N tokens truncated…` between them.
fn truncate_middle(text: &str, max_tokens: usize) -> String {
    let budget = max_tokens.saturating_mul(4);
    let removed = approx_token_count(text).saturating_sub(max_tokens);
    let marker = format!("…{removed} tokens truncated…");
    let keep = budget.saturating_sub(marker.len());
    let mut head_end = keep / 2;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - (keep - keep / 2);
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    format!("{}{marker}{}", &text[..head_end], &text[tail_start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_unchanged_and_long_text_is_middle_truncated() {
        assert_eq!(formatted_truncate_text("short", 10), "short");
        let long: String = (0..200).map(|i| format!("line {i}\n")).collect();
        let out = formatted_truncate_text(&long, 20);
        assert!(out.starts_with(&format!(
            "Warning: truncated output (original token count: {})\nTotal output lines: 200\n\nline 0\n",
            approx_token_count(&long)
        )), "{out}");
        assert!(out.contains("tokens truncated…"));
        assert!(out.ends_with("line 199\n"));
        let multibyte = "é".repeat(100);
        assert!(formatted_truncate_text(&multibyte, 5).contains("truncated"));
    }
}
