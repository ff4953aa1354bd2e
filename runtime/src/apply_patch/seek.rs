//! Finding a chunk's lines in a file, from strict to lenient: exact, then ignoring trailing
//! whitespace, then ignoring surrounding whitespace, then after Unicode punctuation folding.

/// The first index at or after `start` where `pattern` occurs in `lines`. With `eof`, a match
/// that ends exactly at the end of the file is tried first.
pub(crate) fn seek_sequence(
    lines: &[String],
    pattern: &[String],
    start: usize,
    eof: bool,
) -> Option<usize> {
    if pattern.is_empty() {
        return Some(start);
    }
    if pattern.len() > lines.len() {
        return None;
    }
    let last_start = lines.len() - pattern.len();
    if eof
        && last_start >= start
        && let Some(found) = seek_from(lines, pattern, last_start, last_start)
    {
        return Some(found);
    }
    seek_from(lines, pattern, start, last_start)
}

fn seek_from(lines: &[String], pattern: &[String], from: usize, to: usize) -> Option<usize> {
    if from > to {
        return None;
    }
    let passes: [fn(&str, &str) -> bool; 4] = [
        |a, b| a == b,
        |a, b| a.trim_end() == b.trim_end(),
        |a, b| a.trim() == b.trim(),
        |a, b| normalize(a.trim()) == normalize(b.trim()),
    ];
    passes.iter().find_map(|same| {
        (from..=to).find(|&i| {
            pattern
                .iter()
                .enumerate()
                .all(|(j, p)| same(&lines[i + j], p))
        })
    })
}

/// Folds typographic punctuation models often emit into its ASCII form.
fn normalize(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
            | '\u{2212}' => '-',
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::seek_sequence;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn exact_match_finds_sequence() {
        assert_eq!(
            seek_sequence(&v(&["a", "b", "c"]), &v(&["b", "c"]), 0, false),
            Some(1)
        );
    }

    #[test]
    fn rstrip_match_ignores_trailing_whitespace() {
        assert_eq!(
            seek_sequence(&v(&["a  ", "b\t"]), &v(&["a", "b"]), 0, false),
            Some(0)
        );
    }

    #[test]
    fn trim_match_ignores_leading_and_trailing_whitespace() {
        assert_eq!(
            seek_sequence(&v(&["x", "   a  "]), &v(&["a"]), 0, false),
            Some(1)
        );
    }

    #[test]
    fn unicode_punctuation_is_folded() {
        assert_eq!(
            seek_sequence(
                &v(&["let s = \u{201C}hi\u{201D} \u{2014} x"]),
                &v(&["let s = \"hi\" - x"]),
                0,
                false
            ),
            Some(0)
        );
    }

    #[test]
    fn pattern_longer_than_input_returns_none() {
        assert_eq!(seek_sequence(&v(&["a"]), &v(&["a", "b"]), 0, false), None);
    }

    #[test]
    fn search_starts_at_cursor_and_eof_prefers_the_end() {
        let lines = v(&["x", "y", "x"]);
        assert_eq!(seek_sequence(&lines, &v(&["x"]), 1, false), Some(2));
        assert_eq!(seek_sequence(&lines, &v(&["x"]), 0, true), Some(2));
        assert_eq!(seek_sequence(&lines, &v(&["x"]), 0, false), Some(0));
    }
}
