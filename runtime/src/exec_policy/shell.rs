//! Splitting `bash -lc "a && b | c"` into the plain commands it runs. Only a small, safe subset
//! of shell syntax is understood (words, quotes without expansions, `&&`, `||`, `;`, `|`,
//! newlines); anything else makes the script one opaque command.

/// Splits a plain script into argvs in source order, or `None` if it uses anything beyond the
/// safe subset (subshells, redirections, `&`, expansions, assignments, keywords, comments).
pub fn parse_plain_commands(script: &str) -> Option<Vec<Vec<String>>> {
    let tokens = tokenize(script)?;
    let mut commands = Vec::new();
    let mut current: Vec<String> = Vec::new();
    // Whether the last separator demands a command after it (all but newline do).
    let mut need_command = false;
    for token in tokens {
        match token {
            Token::Word(word) => current.push(word),
            Token::Newline => {
                if !current.is_empty() {
                    commands.push(std::mem::take(&mut current));
                    need_command = false;
                } else if need_command {
                    // `ls &&` followed by a newline: bash continues the list on the next line.
                    continue;
                }
            }
            Token::Operator => {
                if current.is_empty() {
                    return None;
                }
                commands.push(std::mem::take(&mut current));
                need_command = true;
            }
        }
    }
    if !current.is_empty() {
        commands.push(current);
    } else if need_command {
        return None;
    }
    if commands.is_empty() || !commands.iter().all(|c| is_plain_command(c)) {
        return None;
    }
    Some(commands)
}

/// The commands exec policy evaluates for `argv`, and whether they came from the lenient
/// heredoc fallback (rules still apply, but the known-safe shortcut and amendments do not).
pub fn commands_for_policy(argv: &[String]) -> (Vec<Vec<String>>, bool) {
    let Some(script) = shell_script(argv) else {
        return (vec![argv.to_vec()], false);
    };
    if script.trim().is_empty() {
        return (vec![argv.to_vec()], false);
    }
    if let Some(commands) = parse_plain_commands(script) {
        return (commands, false);
    }
    if let Some(words) = heredoc_command(script) {
        return (vec![words], true);
    }
    (vec![argv.to_vec()], false)
}

/// The script of `[bash|zsh|sh, -c|-lc, script]`.
pub(crate) fn shell_script(argv: &[String]) -> Option<&str> {
    match argv {
        [shell, flag, script] if is_posix_shell(shell) && (flag == "-c" || flag == "-lc") => {
            Some(script)
        }
        _ => None,
    }
}

fn is_posix_shell(program: &str) -> bool {
    let base = program.rsplit('/').next().unwrap_or(program);
    matches!(base, "bash" | "zsh" | "sh")
}

const RESERVED_WORDS: [&str; 20] = [
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "function", "select", "in", "!", "[[", "]]", "{", "}",
];

fn is_plain_command(words: &[String]) -> bool {
    let Some(first) = words.first() else {
        return false;
    };
    if RESERVED_WORDS.contains(&first.as_str()) || first == "time" || first == "coproc" {
        return false;
    }
    // `VAR=x cmd` changes the environment of the command; treat it as opaque.
    let is_assignment = first.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    });
    !is_assignment
}

enum Token {
    Word(String),
    Operator,
    Newline,
}

fn tokenize(script: &str) -> Option<Vec<Token>> {
    let mut tokens = Vec::new();
    let mut word = String::new();
    // Distinguishes an empty quoted word (`''`) from no word at all.
    let mut in_word = false;
    let mut chars = script.chars().peekable();
    let flush = |word: &mut String, in_word: &mut bool, tokens: &mut Vec<Token>| {
        if *in_word {
            tokens.push(Token::Word(std::mem::take(word)));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => flush(&mut word, &mut in_word, &mut tokens),
            '\n' => {
                flush(&mut word, &mut in_word, &mut tokens);
                tokens.push(Token::Newline);
            }
            '&' => {
                flush(&mut word, &mut in_word, &mut tokens);
                chars.next_if_eq(&'&')?;
                tokens.push(Token::Operator);
            }
            '|' => {
                flush(&mut word, &mut in_word, &mut tokens);
                chars.next_if_eq(&'|');
                if chars.peek() == Some(&'&') {
                    return None;
                }
                tokens.push(Token::Operator);
            }
            ';' => {
                flush(&mut word, &mut in_word, &mut tokens);
                tokens.push(Token::Operator);
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        other => word.push(other),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '$' | '`' | '\\' => return None,
                        other => word.push(other),
                    }
                }
            }
            '#' if !in_word => return None,
            '(' | ')' | '<' | '>' | '$' | '`' | '\\' | '{' | '}' => return None,
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    flush(&mut word, &mut in_word, &mut tokens);
    Some(tokens)
}

/// `cmd args <<DELIM` + body + `DELIM`: exactly one command fed by a heredoc, no file
/// redirections. Returns the command's words.
fn heredoc_command(script: &str) -> Option<Vec<String>> {
    let script = script.trim();
    let (first_line, body) = script.split_once('\n')?;
    let (command, redirect) = first_line.split_once("<<")?;
    let delimiter = redirect.trim().trim_start_matches('-');
    let delimiter = delimiter.trim_matches(|c| c == '\'' || c == '"');
    if delimiter.is_empty() || delimiter.contains(|c: char| !(c.is_alphanumeric() || c == '_')) {
        return None;
    }
    let commands = parse_plain_commands(command)?;
    let [words] = <[Vec<String>; 1]>::try_from(commands).ok()?;
    let mut lines = body.lines();
    lines.by_ref().find(|line| *line == delimiter)?;
    if lines.any(|line| !line.trim().is_empty()) {
        return None;
    }
    Some(words)
}

/// Command words of every literal simple command in an arbitrary script, found by a lenient
/// scan (pipelines, lists, `$(…)`, if/for bodies). Used only to spot dangerous commands, so it
/// may over-split but never hides a literal command name.
pub(crate) fn lenient_command_words(script: &str) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut in_word = false;
    let mut chars = script.chars().peekable();
    let end_word =
        |word: &mut String, quoted: &mut bool, in_word: &mut bool, current: &mut Vec<String>| {
            if *in_word {
                // A quoted word can never be a command name we flag: mark it with a NUL.
                let text = std::mem::take(word);
                current.push(if *quoted { format!("\0{text}") } else { text });
            }
            *quoted = false;
            *in_word = false;
        };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => end_word(&mut word, &mut quoted, &mut in_word, &mut current),
            '\n' | ';' | '&' | '|' | '(' | ')' | '`' | '{' | '}' => {
                end_word(&mut word, &mut quoted, &mut in_word, &mut current);
                if !current.is_empty() {
                    commands.push(std::mem::take(&mut current));
                }
            }
            '$' if chars.peek() == Some(&'(') => {
                end_word(&mut word, &mut quoted, &mut in_word, &mut current);
                if !current.is_empty() {
                    commands.push(std::mem::take(&mut current));
                }
            }
            '\'' | '"' => {
                quoted = true;
                in_word = true;
                for next in chars.by_ref() {
                    if next == c {
                        break;
                    }
                    word.push(next);
                }
            }
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    end_word(&mut word, &mut quoted, &mut in_word, &mut current);
    if !current.is_empty() {
        commands.push(current);
    }
    commands
}
