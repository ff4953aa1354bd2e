//! Token-estimate truncation shared by every tool that bounds its model-visible output.
//!
//! Tokens are estimated as `ceil(bytes / 4)` (spec tool-runtime §4.4). Oversized text keeps a
//! head and a tail, each half of the byte budget, cut on UTF-8 character boundaries, with the
//! middle replaced by `…N tokens truncated…` (spec tool-runtime §4.5). N is the estimate of
//! the bytes beyond the budget, so `head + tail` always spends exactly the budget and the
//! marker is not charged against it (this matches the reference's pinned example
//! `0123456789…5 tokens truncated…0123456789` for 40 bytes at 5 tokens).

use crate::tool::FunctionCallOutputContentItem;

/// Bytes per estimated token.
pub const APPROX_BYTES_PER_TOKEN: usize = 4;

/// The estimated token count of `text`: `ceil(bytes / 4)`.
pub fn approx_token_count(text: &str) -> usize {
    approx_tokens_for_bytes(text.len())
}

/// The estimated token count of `bytes` bytes: `ceil(bytes / 4)`.
pub fn approx_tokens_for_bytes(bytes: usize) -> usize {
    bytes.div_ceil(APPROX_BYTES_PER_TOKEN)
}

/// The byte budget of `tokens` estimated tokens.
pub fn approx_bytes_for_tokens(tokens: usize) -> usize {
    tokens.saturating_mul(APPROX_BYTES_PER_TOKEN)
}

/// Truncates the middle of `text` to about `max_tokens` tokens, keeping the head and tail.
/// Text that fits is returned unchanged; with a budget of 0 only the marker remains.
pub fn truncate_text(text: &str, max_tokens: usize) -> String {
    middle_truncate(text, approx_bytes_for_tokens(max_tokens), Unit::Tokens)
}

/// Truncates the middle of `text` to `max_bytes` bytes, marking the cut with
/// `…N chars truncated…` (the bytes-policy variant).
pub fn truncate_text_bytes(text: &str, max_bytes: usize) -> String {
    middle_truncate(text, max_bytes, Unit::Chars)
}

/// Like [`truncate_text`], but an oversized text is prefixed with
/// `Warning: truncated output (original token count: T)\nTotal output lines: L\n\n` so the
/// model knows how much it did not see (spec code-mode §3.6, tool-runtime §4.5).
pub fn formatted_truncate_text(text: &str, max_tokens: usize) -> String {
    if text.len() <= approx_bytes_for_tokens(max_tokens) {
        return text.to_owned();
    }
    let original_tokens = approx_token_count(text);
    let total_lines = text.lines().count();
    let body = truncate_text(text, max_tokens);
    format!(
        "Warning: truncated output (original token count: {original_tokens})\nTotal output lines: {total_lines}\n\n{body}"
    )
}

/// Bounds a list of output items to `max_tokens` the way code mode does: when every item is
/// text, the texts are joined with `\n` and, if too long, replaced by one
/// [`formatted_truncate_text`] item; otherwise [`truncate_items_each`] spends the budget item by
/// item.
pub fn truncate_content_items(
    items: Vec<FunctionCallOutputContentItem>,
    max_tokens: usize,
) -> Vec<FunctionCallOutputContentItem> {
    let all_text = items
        .iter()
        .all(|item| matches!(item, FunctionCallOutputContentItem::InputText { .. }));
    if !all_text {
        return truncate_items_each(items, max_tokens);
    }
    if items.is_empty() {
        return items;
    }
    let combined = items
        .iter()
        .filter_map(|item| match item {
            FunctionCallOutputContentItem::InputText { text } => Some(text.as_str()),
            FunctionCallOutputContentItem::InputImage { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    if combined.len() <= approx_bytes_for_tokens(max_tokens) {
        return items;
    }
    vec![FunctionCallOutputContentItem::InputText {
        text: formatted_truncate_text(&combined, max_tokens),
    }]
}

/// Spends `max_tokens` over the items in order: texts that fit are kept, the first one that
/// does not is middle-truncated to what is left, later texts are counted into a trailing
/// `[omitted N text items ...]` item. Images are always kept whole; empty texts are dropped.
pub fn truncate_items_each(
    items: Vec<FunctionCallOutputContentItem>,
    max_tokens: usize,
) -> Vec<FunctionCallOutputContentItem> {
    let mut out = Vec::with_capacity(items.len());
    let mut remaining = max_tokens;
    let mut omitted_texts = 0usize;
    for item in items {
        match item {
            FunctionCallOutputContentItem::InputText { text } => {
                if text.is_empty() {
                    continue;
                }
                if remaining == 0 {
                    omitted_texts += 1;
                    continue;
                }
                let cost = approx_token_count(&text);
                if cost <= remaining {
                    remaining -= cost;
                    out.push(FunctionCallOutputContentItem::InputText { text });
                } else {
                    let snippet = truncate_text(&text, remaining);
                    remaining = 0;
                    out.push(FunctionCallOutputContentItem::InputText { text: snippet });
                }
            }
            image @ FunctionCallOutputContentItem::InputImage { .. } => out.push(image),
        }
    }
    if omitted_texts > 0 {
        out.push(FunctionCallOutputContentItem::InputText {
            text: format!("[omitted {omitted_texts} text items ...]"),
        });
    }
    out
}

/// What the truncation marker counts.
#[derive(Clone, Copy)]
enum Unit {
    /// `…N tokens truncated…`, N estimated from the bytes beyond the budget.
    Tokens,
    /// `…N chars truncated…`, N the characters actually removed.
    Chars,
}

fn middle_truncate(text: &str, max_bytes: usize, unit: Unit) -> String {
    if text.len() <= max_bytes {
        return text.to_owned();
    }
    let head_budget = max_bytes / 2;
    let tail_budget = max_bytes - head_budget;
    let (head, tail, removed_chars) = split_head_tail(text, head_budget, tail_budget);
    let removed = match unit {
        Unit::Tokens => approx_tokens_for_bytes(text.len() - max_bytes),
        Unit::Chars => removed_chars,
    };
    let label = match unit {
        Unit::Tokens => "tokens",
        Unit::Chars => "chars",
    };
    format!("{head}…{removed} {label} truncated…{tail}")
}

/// The longest head of at most `head_bytes` and the longest tail of at most `tail_bytes`, both
/// on character boundaries, plus how many characters lie between them.
fn split_head_tail(text: &str, head_bytes: usize, tail_bytes: usize) -> (&str, &str, usize) {
    let tail_target = text.len().saturating_sub(tail_bytes);
    let mut head_end = 0;
    let mut tail_start = text.len();
    let mut removed = 0;
    for (index, ch) in text.char_indices() {
        let end = index + ch.len_utf8();
        if end <= head_bytes {
            head_end = end;
        } else if index >= tail_target {
            tail_start = index;
            break;
        } else {
            removed += 1;
        }
    }
    let tail_start = tail_start.max(head_end);
    (&text[..head_end], &text[tail_start..], removed)
}

#[cfg(test)]
mod tests;
