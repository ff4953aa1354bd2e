//! The optional first-line pragma of an `exec` input (spec code-mode §1.3):
//! `// @exec: {"yield_time_ms": N, "max_output_tokens": N}`.
//!
//! Raw JSON becomes a validated [`ExecLimits`] here, once; everything downstream trusts it.

use serde::Deserialize;

use super::messages;

/// The literal that marks a pragma line (after leading whitespace).
pub const PRAGMA_PREFIX: &str = "// @exec:";

/// Largest integer JavaScript represents exactly (2^53 − 1).
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// The validated per-call limits an exec pragma may set; `None` means "use the default".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExecLimits {
    /// How long the first observation waits before yielding (0 = yield immediately).
    pub yield_time_ms: Option<u64>,
    /// Token budget of this exec call's direct result (no upper clamp, as in the reference).
    pub max_output_tokens: Option<u64>,
}

/// Why an exec input was refused; `Display` is the exact model-visible text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PragmaError {
    /// The input was empty or only whitespace.
    #[error("{}", messages::EXEC_EMPTY_SOURCE)]
    EmptySource,
    /// A pragma line with no JavaScript after it.
    #[error("{}", messages::PRAGMA_WITHOUT_SOURCE)]
    MissingSource,
    /// The directive was empty or its JSON was not an object.
    #[error("{}", messages::PRAGMA_NOT_AN_OBJECT)]
    NotAnObject,
    /// The directive was not valid JSON; carries the parser's message.
    #[error("{}", messages::pragma_invalid_json(.0))]
    InvalidJson(String),
    /// A key other than the two supported ones.
    #[error("{}", messages::pragma_unsupported_key(.0))]
    UnsupportedKey(String),
    /// A supported key with a value that is not a non-negative integer (or null).
    #[error("{}", messages::pragma_invalid_field_types(.0))]
    InvalidFieldTypes(String),
    /// A value above 2^53 − 1; carries the field name.
    #[error("{}", messages::pragma_unsafe_integer(.0))]
    UnsafeInteger(&'static str),
}

/// The pragma as written, before range checks.
#[derive(Debug, Deserialize)]
struct RawPragma {
    #[serde(default)]
    yield_time_ms: Option<u64>,
    #[serde(default)]
    max_output_tokens: Option<u64>,
}

impl RawPragma {
    fn validate(self) -> Result<ExecLimits, PragmaError> {
        if self.yield_time_ms.is_some_and(|v| v > MAX_SAFE_INTEGER) {
            return Err(PragmaError::UnsafeInteger("yield_time_ms"));
        }
        if self.max_output_tokens.is_some_and(|v| v > MAX_SAFE_INTEGER) {
            return Err(PragmaError::UnsafeInteger("max_output_tokens"));
        }
        Ok(ExecLimits {
            yield_time_ms: self.yield_time_ms,
            max_output_tokens: self.max_output_tokens,
        })
    }
}

/// Splits an exec input into its JavaScript and its limits. Without a pragma the whole input
/// is the code; with one, the code is everything after the first `\n`.
pub fn parse_exec_source(input: &str) -> Result<(String, ExecLimits), PragmaError> {
    if input.trim().is_empty() {
        return Err(PragmaError::EmptySource);
    }
    let (first_line, rest) = input.split_once('\n').unwrap_or((input, ""));
    let Some(directive) = first_line.trim_start().strip_prefix(PRAGMA_PREFIX) else {
        return Ok((input.to_owned(), ExecLimits::default()));
    };
    if rest.trim().is_empty() {
        return Err(PragmaError::MissingSource);
    }
    let directive = directive.trim();
    if directive.is_empty() {
        return Err(PragmaError::NotAnObject);
    }
    let value: serde_json::Value =
        serde_json::from_str(directive).map_err(|err| PragmaError::InvalidJson(err.to_string()))?;
    let Some(object) = value.as_object() else {
        return Err(PragmaError::NotAnObject);
    };
    if let Some(key) = object
        .keys()
        .find(|key| !matches!(key.as_str(), "yield_time_ms" | "max_output_tokens"))
    {
        return Err(PragmaError::UnsupportedKey(key.clone()));
    }
    let raw: RawPragma = serde_json::from_value(value)
        .map_err(|err| PragmaError::InvalidFieldTypes(err.to_string()))?;
    Ok((rest.to_owned(), raw.validate()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(input: &str) -> String {
        parse_exec_source(input).unwrap_err().to_string()
    }

    #[test]
    fn parse_exec_source_without_pragma() {
        assert_eq!(
            parse_exec_source("text('hi')").unwrap(),
            ("text('hi')".to_owned(), ExecLimits::default())
        );
    }

    #[test]
    fn parse_exec_source_with_pragma() {
        let (code, limits) =
            parse_exec_source("// @exec: {\"yield_time_ms\": 10}\ntext('hi')").unwrap();
        assert_eq!(code, "text('hi')");
        assert_eq!(
            limits,
            ExecLimits {
                yield_time_ms: Some(10),
                max_output_tokens: None
            }
        );
    }

    #[test]
    fn pragma_with_both_fields_leading_whitespace_and_crlf() {
        let (code, limits) = parse_exec_source(
            "  \t// @exec: {\"yield_time_ms\": 0, \"max_output_tokens\": 6}\r\nlet a = 1;\ntext(a)",
        )
        .unwrap();
        assert_eq!(code, "let a = 1;\ntext(a)");
        assert_eq!(
            limits,
            ExecLimits {
                yield_time_ms: Some(0),
                max_output_tokens: Some(6)
            }
        );
    }

    #[test]
    fn null_fields_mean_absent() {
        let (_, limits) = parse_exec_source(
            "// @exec: {\"yield_time_ms\": null, \"max_output_tokens\": null}\nx",
        )
        .unwrap();
        assert_eq!(limits, ExecLimits::default());
    }

    #[test]
    fn a_pragma_later_in_the_source_is_just_a_comment() {
        let input = "text(1)\n// @exec: {\"bogus\": true}";
        assert_eq!(parse_exec_source(input).unwrap().0, input);
    }

    #[test]
    fn empty_input_golden() {
        let expected = "exec expects raw JavaScript source text (non-empty). Provide JS only, optionally with first-line `// @exec: {\"yield_time_ms\": 10000, \"max_output_tokens\": 1000}`.";
        assert_eq!(err(""), expected);
        assert_eq!(err(" \n\t "), expected);
    }

    #[test]
    fn pragma_without_source_golden() {
        let expected = "exec pragma must be followed by JavaScript source on subsequent lines";
        assert_eq!(err("// @exec: {\"yield_time_ms\": 10}"), expected);
        assert_eq!(err("// @exec: {\"yield_time_ms\": 10}\n   \n"), expected);
    }

    #[test]
    fn empty_directive_and_non_object_golden() {
        let expected = "exec pragma must be a JSON object with supported fields `yield_time_ms` and `max_output_tokens`";
        assert_eq!(err("// @exec:   \ntext(1)"), expected);
        assert_eq!(err("// @exec: [1]\ntext(1)"), expected);
        assert_eq!(err("// @exec: 5\ntext(1)"), expected);
    }

    #[test]
    fn invalid_json_golden() {
        assert_eq!(
            err("// @exec: {yield_time_ms: 1}\ntext(1)"),
            "exec pragma must be valid JSON with supported fields `yield_time_ms` and `max_output_tokens`: key must be a string at line 1 column 2"
        );
    }

    #[test]
    fn unsupported_key_golden() {
        assert_eq!(
            err("// @exec: {\"yield_time_ms\": 1, \"timeout\": 5}\ntext(1)"),
            "exec pragma only supports `yield_time_ms` and `max_output_tokens`; got `timeout`"
        );
    }

    #[test]
    fn wrong_types_golden() {
        assert_eq!(
            err("// @exec: {\"yield_time_ms\": -1}\ntext(1)"),
            "exec pragma fields `yield_time_ms` and `max_output_tokens` must be non-negative safe integers: invalid value: integer `-1`, expected u64"
        );
        assert_eq!(
            err("// @exec: {\"max_output_tokens\": \"10\"}\ntext(1)"),
            "exec pragma fields `yield_time_ms` and `max_output_tokens` must be non-negative safe integers: invalid type: string \"10\", expected u64"
        );
        assert!(err("// @exec: {\"max_output_tokens\": 1.5}\ntext(1)").starts_with(
            "exec pragma fields `yield_time_ms` and `max_output_tokens` must be non-negative safe integers: "
        ));
    }

    #[test]
    fn unsafe_integer_golden() {
        assert_eq!(
            err("// @exec: {\"yield_time_ms\": 9007199254740992}\ntext(1)"),
            "exec pragma field `yield_time_ms` must be a non-negative safe integer"
        );
        assert_eq!(
            err("// @exec: {\"max_output_tokens\": 9007199254740992}\ntext(1)"),
            "exec pragma field `max_output_tokens` must be a non-negative safe integer"
        );
        let (_, limits) =
            parse_exec_source("// @exec: {\"max_output_tokens\": 9007199254740991}\nx").unwrap();
        assert_eq!(limits.max_output_tokens, Some(9_007_199_254_740_991));
    }
}
