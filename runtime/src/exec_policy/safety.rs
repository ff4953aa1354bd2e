//! Built-in judgements for commands no rule matched: known-safe read-only commands (run without
//! asking) and dangerous ones (forced `rm`, always asked for or forbidden).

use super::shell::{lenient_command_words, parse_plain_commands, shell_script};

/// Whether `argv` only reads: a known-safe command, or a plain `bash -lc` script whose every
/// command is known-safe.
pub fn is_known_safe_command(argv: &[String]) -> bool {
    if let Some(script) = shell_script(argv) {
        return parse_plain_commands(script)
            .is_some_and(|commands| commands.iter().all(|c| is_safe_single(c)));
    }
    is_safe_single(argv)
}

const ALWAYS_SAFE: [&str; 26] = [
    "cat", "cd", "cut", "echo", "expr", "false", "grep", "head", "id", "ls", "nl", "paste", "pwd",
    "rev", "seq", "stat", "tail", "tr", "true", "uname", "uniq", "wc", "which", "whoami", "numfmt",
    "tac",
];

const UNSAFE_FIND_OPTIONS: [&str; 9] = [
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0", "-fprintf",
];

fn is_safe_single(argv: &[String]) -> bool {
    let Some(program) = argv.first() else {
        return false;
    };
    let args = &argv[1..];
    match program.as_str() {
        p if ALWAYS_SAFE.contains(&p) => true,
        "base64" => !args.iter().any(|a| {
            a == "-o"
                || a == "--output"
                || a.starts_with("--output=")
                || (a.starts_with("-o") && !a.starts_with("--"))
        }),
        "find" => !args
            .iter()
            .any(|a| UNSAFE_FIND_OPTIONS.contains(&a.as_str())),
        "rg" => !args.iter().any(|a| {
            a == "--pre"
                || a.starts_with("--pre=")
                || a == "--hostname-bin"
                || a.starts_with("--hostname-bin=")
                || a == "--search-zip"
                || a == "-z"
        }),
        "sed" => is_safe_sed(args),
        _ => false,
    }
}

/// `sed -n {N|M,N}p [file]`.
fn is_safe_sed(args: &[String]) -> bool {
    if args.len() > 3 || args.first().map(String::as_str) != Some("-n") {
        return false;
    }
    let Some(script) = args.get(1).and_then(|s| s.strip_suffix('p')) else {
        return false;
    };
    let is_number = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    match script.split_once(',') {
        Some((from, to)) => is_number(from) && is_number(to),
        None => is_number(script),
    }
}

/// Whether `argv` deletes by force: `rm` with `-…f…` or `--force` before `--`, directly, after
/// `sudo`, or as any literal command inside a shell script.
pub fn is_dangerous_command(argv: &[String]) -> bool {
    if let Some(script) = shell_script(argv) {
        return lenient_command_words(script)
            .iter()
            .any(|words| is_forced_rm(words));
    }
    is_forced_rm(argv)
}

fn is_forced_rm(words: &[String]) -> bool {
    let mut rest = words;
    // Skip prefixes that run the next word as the command.
    while let Some(first) = rest.first() {
        match first.as_str() {
            "sudo" | "if" | "then" | "else" | "elif" | "do" | "while" | "until" | "!" | "time"
            | "exec" | "command" | "nohup" => rest = &rest[1..],
            _ => break,
        }
    }
    let Some(program) = rest.first() else {
        return false;
    };
    if program.rsplit('/').next() != Some("rm") {
        return false;
    }
    rest[1..]
        .iter()
        .take_while(|a| a.as_str() != "--")
        .any(|a| a == "--force" || (a.starts_with('-') && !a.starts_with("--") && a.contains('f')))
}
