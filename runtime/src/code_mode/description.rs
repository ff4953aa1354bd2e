//! The model-facing descriptions of `exec` and `wait` (spec code-mode §1.2, §2.1).

use std::collections::BTreeMap;

use codemode_bridge::ToolDefinition;

use super::naming::code_mode_name;
use crate::declarations::{SHARED_MCP_TYPES, has_mcp_output};

/// Shown when some nested tools are deferred (callable, in `ALL_TOOLS`, but not described).
pub const DEFERRED_TOOLS_GUIDANCE: &str = "Some deferred nested tools may be omitted from this description. They are still available on the global `tools` object and listed in `ALL_TOOLS`.\nTo find one, filter `ALL_TOOLS` by `name` and `description`.";

/// The first line of the `wait` description.
const WAIT_SUMMARY: &str = "Waits on a yielded `exec` cell and returns new output or completion.";

/// A namespace's heading and guidance in code-mode-only descriptions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamespaceDescription {
    /// The heading (`## <name>`), e.g. `mcp__sample`.
    pub name: String,
    /// The guidance under the heading; a blank one omits the section.
    pub description: String,
}

/// Everything the `exec` description depends on.
#[derive(Debug, Clone, Copy)]
pub struct ExecDescription<'a> {
    /// Nested tools described to the model (exposure Direct), augmented, in catalog order.
    pub enabled_tools: &'a [ToolDefinition],
    /// Nested tools reachable only through `ALL_TOOLS` (exposure Deferred), augmented.
    pub deferred_tools: &'a [ToolDefinition],
    /// Namespace headings, keyed by the registry namespace (e.g. `mcp__sample__`).
    pub namespaces: &'a BTreeMap<String, NamespaceDescription>,
    /// Whether `exec`/`wait` are the only tools the model sees: then every enabled tool is
    /// described inline.
    pub code_mode_only: bool,
    /// The yield time used when a pragma gives none.
    pub default_yield_time_ms: u64,
    /// The output budget used when a pragma gives none.
    pub default_max_output_tokens: u64,
}

impl ExecDescription<'_> {
    /// The full description: the template, the deferred-tools guidance when some are
    /// deferred, and in code-mode-only mode the shared MCP types (once) and a section per tool.
    pub fn render(&self) -> String {
        let mut sections = vec![self.template()];
        if !self.deferred_tools.is_empty() {
            sections.push(DEFERRED_TOOLS_GUIDANCE.to_owned());
        }
        if !self.code_mode_only {
            return sections.join("\n\n");
        }
        if self
            .enabled_tools
            .iter()
            .chain(self.deferred_tools)
            .any(has_mcp_output)
        {
            sections.push(format!("Shared MCP Types:\n```ts\n{SHARED_MCP_TYPES}\n```"));
        }
        if !self.enabled_tools.is_empty() {
            sections.push(self.tool_reference());
        }
        sections.join("\n\n")
    }

    fn tool_reference(&self) -> String {
        let mut parts = Vec::with_capacity(self.enabled_tools.len());
        let mut current: Option<&str> = None;
        for tool in self.enabled_tools {
            let namespace = tool
                .tool_name
                .namespace
                .as_deref()
                .and_then(|ns| self.namespaces.get(ns));
            let heading = namespace.map(|ns| ns.name.as_str());
            if heading != current {
                if let Some(ns) = namespace.filter(|ns| !ns.description.trim().is_empty()) {
                    parts.push(format!("## {}\n{}", ns.name, ns.description.trim()));
                }
                current = heading;
            }
            let raw_name = code_mode_name(&tool.tool_name);
            let title = if raw_name == tool.name {
                format!("### `{}`", tool.name)
            } else {
                format!("### `{}` (`{raw_name}`)", tool.name)
            };
            match tool.description.trim() {
                "" => parts.push(title),
                body => parts.push(format!("{title}\n{body}")),
            }
        }
        parts.join("\n\n")
    }

    fn template(&self) -> String {
        let yield_ms = self.default_yield_time_ms;
        let max_tokens = self.default_max_output_tokens;
        format!(
            r#"Run JavaScript code to orchestrate/compose tool calls
- The code runs in a fresh V8 isolate as an async ES module, so top-level `await` works.
- Every nested tool is a function on the global `tools` object, for example `await tools.exec_command(...)`. Tool names are normalized to JavaScript identifiers, for example `await tools.mcp__ologs__get_profile(...)`.
- A nested tool takes one argument, a string or an object, and resolves to an object or a string, as its declaration says. A failed call rejects its promise.
- Runs raw JavaScript -- no Node, no file system, no network access, no console.
- The input is raw JavaScript source text: not JSON, not a quoted string, not markdown code fences.
- The first line may be a pragma such as `// @exec: {{"yield_time_ms": 10000, "max_output_tokens": 1000}}`.
- `yield_time_ms` makes `exec` return early while the script keeps running. Defaults to {yield_ms} ms.
- `max_output_tokens` is the token budget of the direct `exec` result. Defaults to {max_tokens} tokens.
- When the module has been fully evaluated the isolate ends and unawaited promises are silently discarded, so await every `tools.*` call (for example with `await Promise.all([...])`).

- Global helpers:
- `exit()`: ends the script at once, successfully, like a return from the top level.
- `text(value: string | number | boolean | undefined | null)`: appends a text item. Other values are serialized with `JSON.stringify(...)` when possible.
- `image(imageUrlOrItem: string | {{ image_url: string; detail?: "auto" | "low" | "high" | "original" | null }} | ImageContent, detail?: "auto" | "low" | "high" | "original" | null)`: appends an image item. The URL must be a base64 `data:` URL. To forward an MCP image, pass one `ImageContent` block from `result.content`, for example `image(result.content[0])`. A second `detail` argument overrides any detail in the first.
- `generatedImage(result: {{ image_url: string; output_hint?: string }})`: appends an image-generation result and its optional output hint. HTTP(S) URLs are not supported.
- `store(key: string, value: any)`: keeps a JSON-serializable value under a string key for later `exec` calls in this session.
- `load(key: string)`: returns a fresh copy of the value stored under a key, or `undefined` if there is none.
- `notify(value: string | number | boolean | undefined | null)`: immediately sends an extra `custom_tool_call_output` for the current `exec` call. Values are stringified like `text(...)`.
- `setTimeout(callback: () => void, delayMs?: number)`: runs a callback later and returns a timeout id. Pending timeouts do not keep `exec` alive; await a promise if you need one to fire.
- `clearTimeout(timeoutId?: number)`: cancels a timeout created by `setTimeout`.
- `ALL_TOOLS`: `{{ name, description }}` for every enabled nested tool, deferred ones included.
- `yield_control()`: hands the output so far to the model right away while the script keeps running."#
        )
    }
}

/// The `wait` description: a summary line, then what the parameters do.
pub fn wait_tool_description() -> String {
    format!(
        "{WAIT_SUMMARY}\n{}",
        "- Use `wait` only after `exec` returned `Script running with cell ID ...`.
- `cell_id` names the running `exec` cell to resume.
- `yield_time_ms` is how long to wait for more output before yielding again. Defaults to 10000 ms.
- `max_tokens` is the token budget for the new output this call returns. Defaults to 10000 tokens.
- `terminate: true` stops the running cell; false or omitted waits for output.
- `wait` returns only the output produced since the last yield, or the final completion or termination result of the cell.
- A cell that is still running may yield again with the same `cell_id`.
- A cell that has already finished returns its completed result, and the cell is closed."
    )
}

#[cfg(test)]
mod tests;
