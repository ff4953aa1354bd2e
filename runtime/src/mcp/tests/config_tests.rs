//! `[mcp_servers]` parsing and validation.

use std::time::Duration;

use crate::mcp::{McpError, McpServerConfig, parse_mcp_servers};

#[test]
fn parses_codex_style_tables_with_defaults() {
    let servers = parse_mcp_servers(
        r#"
        [docs]
        command = "npx"
        args = ["-y", "docs-server"]
        env = { TOKEN = "t" }

        [slow]
        command = "slow-server"
        startup_timeout_sec = 30
        tool_timeout_sec = 1.5
        enabled_tools = ["a", "b"]
        disabled_tools = ["b"]
        enabled = false
        supports_parallel_tool_calls = true
        "#,
    )
    .unwrap();
    let docs = &servers["docs"];
    assert_eq!(docs.args, ["-y", "docs-server"]);
    assert_eq!(docs.env["TOKEN"], "t");
    assert_eq!(docs.startup_timeout(), Duration::from_secs(10));
    assert_eq!(docs.tool_timeout(), Duration::from_secs(60));
    assert!(docs.enabled && !docs.supports_parallel_tool_calls);
    assert!(docs.allows_tool("anything"));

    let slow = &servers["slow"];
    assert_eq!(slow.startup_timeout(), Duration::from_secs(30));
    assert_eq!(slow.tool_timeout(), Duration::from_millis(1500));
    assert!(slow.allows_tool("a"));
    assert!(!slow.allows_tool("b"), "disabled wins over enabled");
    assert!(!slow.allows_tool("c"), "not in enabled_tools");
    assert!(!slow.enabled);
}

#[test]
fn unknown_keys_are_named() {
    let error = parse_mcp_servers("[x]\ncommand = \"a\"\nstartup_timeout = 5\n").unwrap_err();
    let text = error.to_string();
    assert!(text.starts_with("invalid mcp_servers config: "), "{text}");
    assert!(text.contains("unknown field `startup_timeout`"), "{text}");
}

#[test]
fn bad_values_are_named() {
    let error = parse_mcp_servers("[x]\ncommand = \"a\"\ntool_timeout_sec = -1\n").unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid config for MCP server `x`: `tool_timeout_sec` must be a positive number of seconds, got -1"
    );
    let error = parse_mcp_servers("[x]\ncommand = \" \"\n").unwrap_err();
    assert!(
        matches!(error, McpError::InvalidConfig { ref key, .. } if key == "command"),
        "{error}"
    );
}

#[test]
fn round_trips_through_toml() {
    let mut config = McpServerConfig::new("srv", ["--flag"]);
    config.cwd = Some("/tmp".into());
    let text = toml::to_string(&config).unwrap();
    let back: McpServerConfig = toml::from_str(&text).unwrap();
    assert_eq!(back, config);
}
