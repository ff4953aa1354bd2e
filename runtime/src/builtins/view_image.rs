//! `view_image`: attach a local image to the conversation as a `data:` URL.
//!
//! The bytes are sent as they are (no resizing here); the format is taken from the magic
//! bytes, never from the file name.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};

use super::parse_function_arguments;
use crate::sandbox::SandboxPolicy;
use crate::tool::{
    ContentItemsToolOutput, FunctionCallError, FunctionCallOutputContentItem, ResponseInputItem,
    ToolExecutor, ToolInvocation, ToolName, ToolOutput, ToolPayload, ToolSpec, messages,
};

const DESCRIPTION: &str = "View a local image from the filesystem (only use if given a full filepath by the user, and the image isn't already attached to the thread context within <image ...> tags).";

/// The only `detail` value the tool accepts (spec code-mode §5.3).
const DETAIL_ORIGINAL: &str = "original";

/// Default cap on the image size, so one call cannot put hundreds of MiB into the context.
const DEFAULT_MAX_BYTES: u64 = 20 * 1024 * 1024;

/// An extra check on top of the session's sandbox read policy (embedders). Gets the absolute
/// path; false refuses the call.
pub type ReadPermission = Arc<dyn Fn(&Path) -> bool + Send + Sync>;

#[derive(Deserialize)]
struct ViewImageArgs {
    path: String,
    #[serde(default)]
    detail: Option<String>,
}

/// The `view_image` tool.
#[derive(Clone)]
pub struct ViewImageTool {
    read_permission: Option<ReadPermission>,
    max_bytes: u64,
}

impl Default for ViewImageTool {
    fn default() -> Self {
        Self {
            read_permission: None,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

impl ViewImageTool {
    /// The tool reading any path the process can read, except what the invocation's
    /// `ToolContext.sandbox_policy.deny_read` hides.
    pub fn new() -> Self {
        Self::default()
    }

    /// The tool also asking `permission` before every read (the sandbox read policy still
    /// applies).
    pub fn with_read_permission(mut self, permission: ReadPermission) -> Self {
        self.read_permission = Some(permission);
        self
    }

    /// The tool refusing images above `max_bytes`.
    pub fn with_max_bytes(mut self, max_bytes: u64) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    async fn load(&self, path: &Path, policy: &SandboxPolicy) -> Result<String, FunctionCallError> {
        let respond = FunctionCallError::RespondToModel;
        // The image lands in the model's context: never read what sandboxed commands may not.
        let permitted = self
            .read_permission
            .as_ref()
            .is_none_or(|permission| permission(path));
        if !policy.can_read(path) || !permitted {
            return Err(respond(messages::image_read_denied(path)));
        }
        let metadata = tokio::fs::metadata(path)
            .await
            .map_err(|error| respond(messages::image_unreadable(path, &error.to_string())))?;
        if !metadata.is_file() {
            return Err(respond(messages::image_not_a_file(path)));
        }
        if metadata.len() > self.max_bytes {
            return Err(respond(messages::image_too_large(
                path,
                metadata.len(),
                self.max_bytes,
            )));
        }
        let bytes = tokio::fs::read(path)
            .await
            .map_err(|error| respond(messages::image_unreadable(path, &error.to_string())))?;
        let Some(mime) = sniff_image_mime(&bytes) else {
            return Err(respond(messages::image_unknown_format(path)));
        };
        let encoded = base64::engine::general_purpose::STANDARD.encode(&bytes);
        Ok(format!("data:{mime};base64,{encoded}"))
    }
}

/// The image's MIME type from its first bytes.
pub(crate) fn sniff_image_mime(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// One image as an `input_image` content item; code mode gets `{image_url, detail}` with
/// detail `"original"` or `null`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewImageOutput {
    /// The `data:` URL.
    pub image_url: String,
    /// `Some("original")` when requested.
    pub detail: Option<String>,
}

impl ViewImageOutput {
    fn items(&self) -> ContentItemsToolOutput {
        ContentItemsToolOutput::ok(vec![FunctionCallOutputContentItem::InputImage {
            image_url: self.image_url.clone(),
            detail: self.detail.clone(),
        }])
    }
}

impl ToolOutput for ViewImageOutput {
    fn success(&self) -> Option<bool> {
        Some(true)
    }

    fn model_text(&self) -> String {
        self.image_url.clone()
    }

    fn to_response_item(&self, call_id: &str, payload: &ToolPayload) -> ResponseInputItem {
        self.items().to_response_item(call_id, payload)
    }

    fn code_mode_result(&self) -> Value {
        json!({ "image_url": self.image_url, "detail": self.detail })
    }

    fn hook_response(&self) -> Option<Value> {
        Some(self.code_mode_result())
    }
}

impl ToolExecutor for ViewImageTool {
    fn tool_name(&self) -> ToolName {
        ToolName::plain("view_image")
    }

    fn spec(&self) -> ToolSpec {
        let parameters = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Local filesystem path to an image file"},
                "detail": {
                    "type": "string",
                    "description": "Optional detail override. The only supported value is `original`; omit this field for default resized behavior."
                }
            },
            "required": ["path"],
            "additionalProperties": false
        });
        ToolSpec::function("view_image", DESCRIPTION, parameters)
    }

    fn supports_parallel_tool_calls(&self) -> bool {
        true
    }

    fn handle(
        &self,
        invocation: ToolInvocation,
    ) -> BoxFuture<'_, Result<Box<dyn ToolOutput>, FunctionCallError>> {
        Box::pin(async move {
            let args: ViewImageArgs = parse_function_arguments(&invocation.payload)?;
            let detail = match args.detail.as_deref() {
                None => None,
                Some(DETAIL_ORIGINAL) => Some(DETAIL_ORIGINAL.to_owned()),
                Some(other) => {
                    return Err(FunctionCallError::RespondToModel(
                        messages::image_detail_unsupported(other),
                    ));
                }
            };
            let path: PathBuf = invocation.context.cwd.join(&args.path);
            let image_url = self.load(&path, &invocation.context.sandbox_policy).await?;
            Ok(Box::new(ViewImageOutput { image_url, detail }) as Box<dyn ToolOutput>)
        })
    }
}
