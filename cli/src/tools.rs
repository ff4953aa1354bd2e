//! `codemode tools`: the nested tools (`ALL_TOOLS`) a cell sees with this config.

use crate::args::ToolsArgs;
use crate::output;
use crate::setup::{Mode, start_session};

/// Lists the nested tools; returns the exit code.
pub(crate) async fn run(args: ToolsArgs) -> anyhow::Result<u8> {
    let session = start_session(&args.common, Mode::Tools).await?;
    let tools = session.nested_tools();
    if args.json {
        output::tools_json(&tools);
    } else {
        output::tools_text(&tools);
    }
    session.shutdown().await;
    Ok(0)
}
