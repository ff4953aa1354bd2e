use std::path::{Path, PathBuf};
use std::sync::Arc;

use codemode_bridge::{BridgeError, CellChannels, CellEngine, CellId, CellStart};

use super::*;
use crate::approval::GranularApproval;
use crate::hooks::HooksConfig;

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::from_toml(text, Path::new("/etc/project/codemode.toml"))
}

fn error_text(text: &str) -> String {
    match parse(text) {
        Ok(config) => panic!("expected an error, parsed {config:?}"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn empty_file_is_the_embedded_default() {
    let config = parse("").unwrap();
    assert_eq!(config.approval_policy, None);
    assert_eq!(config.sandbox_policy(), SandboxPolicy::workspace_write());
    assert_eq!(config.code_mode_options(), CodeModeOptions::default());
    assert_eq!(config.code_mode.host, HostKind::Process);
    assert!(config.mcp_servers.is_empty());
    assert_eq!(config.hooks.to_hooks_config(), HooksConfig::default());
    assert_eq!(
        config.path.as_deref(),
        Some(Path::new("/etc/project/codemode.toml"))
    );
}

#[test]
fn unknown_top_level_key_names_key_and_file() {
    let text = error_text("approval_polcy = \"never\"\n");
    assert!(text.contains("approval_polcy"), "{text}");
    assert!(text.contains("/etc/project/codemode.toml"), "{text}");
}

#[test]
fn unknown_key_in_each_section_names_key_and_file() {
    for (section, body) in [
        ("[sandbox]", "netwrk = true"),
        ("[code_mode]", "yield_ms = 5"),
        ("[mcp_servers.docs]", "command = \"x\"\nargz = []"),
        (
            "[[hooks.PreToolUse]]",
            "command = [\"true\"]\nmatch = \"x\"",
        ),
        ("[hooks]", "Pre = []"),
    ] {
        let text = error_text(&format!("{section}\n{body}\n"));
        let key = body.lines().last().unwrap().split(' ').next().unwrap();
        assert!(text.contains(key), "{section}: {text}");
        assert!(
            text.contains("/etc/project/codemode.toml"),
            "{section}: {text}"
        );
    }
}

#[test]
fn bad_values_name_the_key() {
    let text = error_text("approval_policy = \"sometimes\"\n");
    assert!(
        text.contains("approval_policy") && text.contains("sometimes"),
        "{text}"
    );
    let text = error_text("[sandbox]\nmode = \"wide-open\"\n");
    assert!(
        text.contains("mode") && text.contains("wide-open"),
        "{text}"
    );
    let text = error_text("[code_mode]\nhost = \"remote\"\n");
    assert!(text.contains("host") && text.contains("remote"), "{text}");
    let text = error_text("[code_mode]\nmax_output_tokens = \"many\"\n");
    assert!(text.contains("max_output_tokens"), "{text}");
    let text = error_text("[code_mode]\nmax_concurrent_tool_calls = 0\n");
    assert!(
        text.contains("`code_mode.max_concurrent_tool_calls` must be at least 1"),
        "{text}"
    );
    let text = error_text("[mcp_servers.docs]\ncommand = \"x\"\ntool_timeout_sec = -1\n");
    assert!(
        text.contains("`tool_timeout_sec`") && text.contains("docs"),
        "{text}"
    );
    let text = error_text("[sandbox]\nmode = \"read-only\"\nwritable_roots = [\"/x\"]\n");
    assert!(text.contains("sandbox.writable_roots"), "{text}");
    let text = error_text("[[hooks.PostToolUse]]\ncommand = []\n");
    assert!(text.contains("hooks.PostToolUse.command"), "{text}");
}

#[test]
fn approval_policy_values() {
    for (raw, expected) in [
        ("never", AskForApproval::Never),
        ("on-request", AskForApproval::OnRequest),
        ("on-failure", AskForApproval::OnRequest),
        ("untrusted", AskForApproval::Untrusted),
    ] {
        let config = parse(&format!("approval_policy = \"{raw}\"\n")).unwrap();
        assert_eq!(config.approval_policy, Some(expected), "{raw}");
    }
    let config = parse(
        "[approval_policy.granular]\nsandbox_approval = false\nrules = true\nmcp_tools = false\n",
    )
    .unwrap();
    assert_eq!(
        config.approval_policy,
        Some(AskForApproval::Granular(GranularApproval {
            sandbox_approval: false,
            rules: true,
            mcp_tools: false,
        }))
    );
}

#[test]
fn sandbox_section() {
    let config = parse(
        "[sandbox]\nmode = \"workspace-write\"\nnetwork = true\nwritable_roots = [\"/data\", \"out\"]\ndeny_read = [\"secrets\"]\n",
    )
    .unwrap();
    let policy = config.sandbox_policy();
    assert!(policy.network_access);
    assert_eq!(
        policy.mode,
        SandboxMode::WorkspaceWrite {
            writable_roots: vec![PathBuf::from("/data"), PathBuf::from("/etc/project/out")],
            exclude_tmpdir_env_var: false,
            exclude_slash_tmp: false,
        }
    );
    assert_eq!(
        policy.deny_read,
        vec![PathBuf::from("/etc/project/secrets")]
    );

    assert_eq!(
        parse("[sandbox]\nmode = \"read-only\"\n")
            .unwrap()
            .sandbox_policy(),
        SandboxPolicy::read_only()
    );
    let full = parse("[sandbox]\nmode = \"danger-full-access\"\n").unwrap();
    assert_eq!(full.sandbox_policy(), SandboxPolicy::danger_full_access());
    let offline = parse("[sandbox]\nmode = \"danger-full-access\"\nnetwork = false\n").unwrap();
    assert!(!offline.sandbox_policy().network_access);
}

#[test]
fn code_mode_section() {
    let config = parse(
        r#"[code_mode]
default_exec_yield_time_ms = 50
max_output_tokens = 7
heap_limit_mib = 64
max_concurrent_tool_calls = 3
excluded_tool_namespaces = ["mcp__a"]
direct_only_tool_namespaces = ["mcp__b"]
host = "in-process"
host_path = "bin/code-mode-host"
"#,
    )
    .unwrap();
    let options = config.code_mode_options();
    assert_eq!(options.default_exec_yield_time_ms, 50);
    assert_eq!(options.max_output_tokens, 7);
    assert_eq!(options.heap_limit_mib, 64);
    assert_eq!(options.max_concurrent_tool_calls, 3);
    assert!(options.excluded_tool_namespaces.contains("mcp__a"));
    assert!(options.direct_only_tool_namespaces.contains("mcp__b"));
    assert_eq!(config.code_mode.host, HostKind::InProcess);
    assert_eq!(
        config.code_mode.host_path.as_deref(),
        Some(Path::new("/etc/project/bin/code-mode-host"))
    );
}

#[test]
fn mcp_servers_section_accepts_codex_keys_and_resolves_relative_commands() {
    let config = parse(
        r#"[mcp_servers.everything]
command = "node_modules/.bin/mcp-server-everything"
args = ["stdio"]
env = { A = "1" }
env_vars = ["HOME"]
cwd = "work"
startup_timeout_sec = 20
tool_timeout_sec = 5.5
enabled_tools = ["echo"]
disabled_tools = ["add"]
enabled = true
supports_parallel_tool_calls = true

[mcp_servers.docs]
command = "npx"
"#,
    )
    .unwrap();
    let everything = &config.mcp_servers["everything"];
    assert_eq!(
        everything.command,
        "/etc/project/node_modules/.bin/mcp-server-everything"
    );
    assert_eq!(everything.args, vec!["stdio"]);
    assert_eq!(everything.env["A"], "1");
    assert_eq!(
        everything.cwd.as_deref(),
        Some(Path::new("/etc/project/work"))
    );
    assert_eq!(everything.tool_timeout_sec, 5.5);
    assert!(everything.supports_parallel_tool_calls);
    // A bare program name stays a PATH lookup.
    assert_eq!(config.mcp_servers["docs"].command, "npx");
}

#[test]
fn hooks_section() {
    let config = parse(
        r#"[[hooks.PreToolUse]]
matcher = "Bash"
command = ["sh", "-c", "exit 0"]
timeout_ms = 500

[[hooks.post_tool_use]]
command = ["true"]
"#,
    )
    .unwrap();
    let hooks = config.hooks.to_hooks_config();
    assert_eq!(hooks.pre_tool_use.len(), 1);
    assert_eq!(hooks.pre_tool_use[0].matcher.as_deref(), Some("Bash"));
    assert_eq!(hooks.pre_tool_use[0].timeout_ms, Some(500));
    assert_eq!(hooks.post_tool_use[0].command, vec!["true"]);
}

#[test]
fn session_options_apply_every_section() {
    let config = parse(
        "approval_policy = \"untrusted\"\n[sandbox]\nmode = \"read-only\"\n[code_mode]\nmax_output_tokens = 9\n[mcp_servers.a]\ncommand = \"x\"\n",
    )
    .unwrap();
    let backend = CellBackend::HostProcess {
        program: PathBuf::from("/bin/true"),
    };
    let options = config.session_options(PathBuf::from("/w"), backend, AskForApproval::Never);
    assert_eq!(options.cwd, PathBuf::from("/w"));
    assert_eq!(options.approval_policy, AskForApproval::Untrusted);
    assert_eq!(options.sandbox, SandboxPolicy::read_only());
    assert_eq!(options.code_mode.max_output_tokens, 9);
    assert!(options.mcp.servers.contains_key("a"));

    let defaults = Config::default().session_options(
        PathBuf::from("/w"),
        CellBackend::HostProcess {
            program: PathBuf::from("/bin/true"),
        },
        AskForApproval::Never,
    );
    assert_eq!(defaults.approval_policy, AskForApproval::Never);
    assert_eq!(defaults.sandbox, SandboxPolicy::workspace_write());
}

#[test]
fn discover_prefers_explicit_then_cwd_then_home() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("cwd");
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".config/codemode")).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();

    let none = Config::discover(None, &cwd, Some(&home)).unwrap();
    assert_eq!(none, Config::default());

    std::fs::write(
        home.join(USER_CONFIG_PATH),
        "approval_policy = \"untrusted\"\n",
    )
    .unwrap();
    let user = Config::discover(None, &cwd, Some(&home)).unwrap();
    assert_eq!(user.approval_policy, Some(AskForApproval::Untrusted));

    std::fs::write(cwd.join(CONFIG_FILE_NAME), "approval_policy = \"never\"\n").unwrap();
    let local = Config::discover(None, &cwd, Some(&home)).unwrap();
    assert_eq!(local.approval_policy, Some(AskForApproval::Never));

    let explicit = dir.path().join("other.toml");
    std::fs::write(&explicit, "approval_policy = \"on-request\"\n").unwrap();
    let chosen = Config::discover(Some(&explicit), &cwd, Some(&home)).unwrap();
    assert_eq!(chosen.approval_policy, Some(AskForApproval::OnRequest));

    let missing = dir.path().join("missing.toml");
    let error = Config::discover(Some(&missing), &cwd, Some(&home)).unwrap_err();
    assert!(error.to_string().contains("missing.toml"), "{error}");
}

/// An engine that never runs a cell: backend selection only needs one to exist.
struct NoEngine;

impl CellEngine for NoEngine {
    fn start_cell(&self, _: CellId, _: CellStart) -> Result<CellChannels, BridgeError> {
        Err(BridgeError::CellStartFailed("no engine".to_owned()))
    }
}

fn scripted() -> Result<Arc<dyn CellEngine>, std::convert::Infallible> {
    Ok(Arc::new(NoEngine))
}

#[test]
fn cell_backend_in_process_and_missing_host_fallback() {
    let in_process = parse("[code_mode]\nhost = \"in-process\"\n").unwrap();
    let (backend, warning) = in_process.cell_backend(scripted).unwrap();
    assert!(matches!(backend, CellBackend::InProcess(_)));
    assert_eq!(warning, None);

    let missing = parse("[code_mode]\nhost_path = \"/nonexistent/code-mode-host\"\n").unwrap();
    let (backend, warning) = missing.cell_backend(scripted).unwrap();
    assert!(matches!(backend, CellBackend::InProcess(_)));
    assert!(warning.unwrap().contains("/nonexistent/code-mode-host"));

    let present = parse("[code_mode]\nhost_path = \"/bin/sh\"\n").unwrap();
    let (backend, warning) = present.cell_backend(scripted).unwrap();
    assert!(
        matches!(&backend, CellBackend::HostProcess { program } if program == Path::new("/bin/sh"))
    );
    assert_eq!(warning, None);
}
