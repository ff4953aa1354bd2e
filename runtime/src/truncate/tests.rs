use super::*;

fn text(t: &str) -> FunctionCallOutputContentItem {
    FunctionCallOutputContentItem::InputText { text: t.to_owned() }
}

fn image(url: &str) -> FunctionCallOutputContentItem {
    FunctionCallOutputContentItem::InputImage {
        image_url: url.to_owned(),
        detail: Some("high".to_owned()),
    }
}

#[test]
fn token_estimate_rounds_bytes_up_to_whole_tokens() {
    assert_eq!(approx_token_count(""), 0);
    assert_eq!(approx_token_count("a"), 1);
    assert_eq!(approx_token_count("abcd"), 1);
    assert_eq!(approx_token_count("abcde"), 2);
    // Counted in bytes, not characters: "é" is two bytes, "€" three.
    assert_eq!(approx_token_count("ééé"), 2);
    assert_eq!(approx_bytes_for_tokens(usize::MAX), usize::MAX);
}

#[test]
fn text_within_budget_is_unchanged() {
    assert_eq!(truncate_text("0123456789", 3), "0123456789");
    assert_eq!(truncate_text("", 0), "");
    assert_eq!(formatted_truncate_text("short", 10), "short");
}

#[test]
fn middle_is_replaced_by_the_token_marker() {
    let input = "0123456789abcdefghij0123456789ABCDEFGHIJ";
    assert_eq!(
        truncate_text(input, 5),
        "0123456789…5 tokens truncated…ABCDEFGHIJ"
    );
}

#[test]
fn zero_budget_leaves_only_the_marker() {
    assert_eq!(truncate_text("0123456789", 0), "…3 tokens truncated…");
}

#[test]
fn cuts_fall_on_character_boundaries() {
    // 10 × "é" (2 bytes each) = 20 bytes; budget 2 tokens = 8 bytes, 4 per side.
    let input = "é".repeat(10);
    let out = truncate_text(&input, 2);
    assert_eq!(out, "éé…3 tokens truncated…éé");
    // An odd split must not cut a 3-byte character in half.
    assert_eq!(truncate_text("€€€€€€", 2), "€…3 tokens truncated…€");
    assert_eq!(truncate_text("€€€€€€", 1), "…4 tokens truncated…");
}

#[test]
fn bytes_variant_counts_removed_characters() {
    assert_eq!(
        truncate_text_bytes("0123456789", 4),
        "01…6 chars truncated…89"
    );
    assert_eq!(truncate_text_bytes("ééééé", 4), "é…3 chars truncated…é");
}

#[test]
fn formatted_truncation_golden() {
    let input = "0123456789".repeat(4);
    assert_eq!(
        formatted_truncate_text(&input, 5),
        "Warning: truncated output (original token count: 10)\nTotal output lines: 1\n\n0123456789…5 tokens truncated…0123456789"
    );
}

#[test]
fn formatted_truncation_counts_lines() {
    let input = "line one\nline two\nline three\n";
    let out = formatted_truncate_text(input, 2);
    assert!(
        out.starts_with(
            "Warning: truncated output (original token count: 8)\nTotal output lines: 3\n\n"
        ),
        "{out}"
    );
    assert!(out.ends_with("…6 tokens truncated…ree\n"), "{out}");
}

#[test]
fn all_text_items_are_merged_into_one_formatted_item_when_too_long() {
    let items = vec![text(&"a".repeat(30)), text(&"b".repeat(30))];
    let out = truncate_content_items(items, 6);
    assert_eq!(
        out,
        vec![text(&format!(
            "Warning: truncated output (original token count: 16)\nTotal output lines: 2\n\n{}…10 tokens truncated…{}",
            "a".repeat(12),
            "b".repeat(12)
        ))]
    );
}

#[test]
fn all_text_items_that_fit_stay_separate() {
    let items = vec![text("phase 1"), text("phase 2")];
    assert_eq!(truncate_content_items(items.clone(), 10_000), items);
    assert_eq!(truncate_content_items(Vec::new(), 0), Vec::new());
}

#[test]
fn code_mode_truncation_matches_the_e2e_pattern() {
    // e2e `code_mode_can_truncate_final_result_with_configured_budget`: budget 6 tokens.
    let items = vec![text(&"x".repeat(200))];
    let out = truncate_content_items(items, 6);
    let [FunctionCallOutputContentItem::InputText { text }] = out.as_slice() else {
        panic!("{out:?}")
    };
    let after_lines = text
        .split_once("Total output lines: 1\n\n")
        .map(|(_, rest)| rest)
        .unwrap();
    let (head, rest) = after_lines.split_once('…').unwrap();
    let (marker, tail) = rest.split_once('…').unwrap();
    assert_eq!(head, "x".repeat(12));
    assert_eq!(marker, "44 tokens truncated");
    assert_eq!(tail, "x".repeat(12));
}

#[test]
fn mixed_items_spend_the_budget_item_by_item_and_keep_images() {
    let items = vec![
        text("0123456789abcdef"), // 4 tokens, fits
        image("data:image/png;base64,AAAA"),
        text(&"z".repeat(40)), // 10 tokens, 2 left → truncated
        text("never shown"),
        text(""),
        text("also omitted"),
    ];
    let out = truncate_content_items(items, 6);
    assert_eq!(
        out,
        vec![
            text("0123456789abcdef"),
            image("data:image/png;base64,AAAA"),
            text("zzzz…8 tokens truncated…zzzz"),
            text("[omitted 2 text items ...]"),
        ]
    );
}

#[test]
fn mixed_items_within_budget_are_unchanged() {
    let items = vec![text("a"), image("data:x"), text("b")];
    assert_eq!(truncate_items_each(items.clone(), 100), items);
}
