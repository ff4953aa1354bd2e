//! How a tool call fails.

/// A failed tool call. `RespondToModel` is shown to the model as a failed output;
/// `Fatal` ends the turn and is never shown as a normal tool failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FunctionCallError {
    /// The model sees this text with `success: false`.
    #[error("{0}")]
    RespondToModel(String),
    /// A runtime fault (for example a payload kind the tool cannot take).
    #[error("fatal tool error: {0}")]
    Fatal(String),
}
