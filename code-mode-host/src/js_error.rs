//! A thrown JavaScript value, captured once at the V8 edge.

/// A JavaScript exception as text: what the model sees after `Script error:`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text}")]
pub struct JsError {
    /// The `stack` string when the thrown value had one, else `String(value)`.
    pub text: String,
}
