//! `tool_search`: client-executed BM25 search over Deferred tools, returning loadable specs
//! that the Responses API makes callable on the next request (spec runtime §10).

mod bm25;
mod executor;
mod output;
mod search_text;

pub use executor::{TOOL_SEARCH_DEFAULT_LIMIT, TOOL_SEARCH_TOOL_NAME, ToolSearchExecutor};
pub use output::ToolSearchOutput;

#[cfg(test)]
mod tests;
