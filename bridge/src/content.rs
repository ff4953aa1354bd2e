//! Content items a cell emits with `text()` / `image()`: the Responses API shapes.

use serde::{Deserialize, Serialize};

use crate::BridgeError;

/// How much detail an image is to be looked at with. Defaults to `high` (spec §3.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ImageDetail {
    /// Let the model decide.
    Auto,
    /// Low resolution.
    Low,
    /// High resolution (the default).
    #[default]
    High,
    /// The original resolution.
    Original,
}

impl ImageDetail {
    /// Parses a detail name case-insensitively.
    pub fn parse(raw: &str) -> Result<Self, BridgeError> {
        match raw.to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "low" => Ok(Self::Low),
            "high" => Ok(Self::High),
            "original" => Ok(Self::Original),
            _ => Err(BridgeError::InvalidImageDetail(raw.to_owned())),
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Low => "low",
            Self::High => "high",
            Self::Original => "original",
        }
    }
}

/// One output item of a cell, in the shape of a Responses API function-call output item.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentItem {
    /// Text.
    InputText {
        /// The text.
        text: String,
    },
    /// An image, always a `data:` URL.
    InputImage {
        /// The `data:` URL.
        image_url: String,
        /// The requested detail.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<ImageDetail>,
    },
}

impl ContentItem {
    /// A text item.
    pub fn text(text: impl Into<String>) -> Self {
        Self::InputText { text: text.into() }
    }
}
