//! The JavaScript half of the code-mode globals (`tools`, `ALL_TOOLS`, `text`, `image`,
//! `store`, timers, ...), embedded at build time as data. `codemode-host` evaluates
//! [`source`] once into its V8 startup snapshot, then calls the bootstrap per cell.
//!
//! Not here: the Rust natives the prelude calls (codemode-host) or any V8 types.
//! Depends on nothing.
#![forbid(unsafe_code)]

/// The prelude files in load order, as `(file name, source)`.
pub const FILES: &[(&str, &str)] = &[
    ("00_intrinsics.js", include_str!("../js/00_intrinsics.js")),
    ("10_values.js", include_str!("../js/10_values.js")),
    ("20_output.js", include_str!("../js/20_output.js")),
    ("30_tools.js", include_str!("../js/30_tools.js")),
    ("40_store.js", include_str!("../js/40_store.js")),
    ("50_timers.js", include_str!("../js/50_timers.js")),
    ("90_bootstrap.js", include_str!("../js/90_bootstrap.js")),
];

/// The global the prelude leaves behind for the host: `bootstrap(natives, toolCatalogJson)`
/// installs a cell's globals, deletes itself, and returns the timer dispatcher.
pub const BOOTSTRAP_GLOBAL: &str = "__codemode_bootstrap";

/// The resource name the prelude is compiled under (it shows in prelude stack frames).
pub const RESOURCE_NAME: &str = "codemode:prelude.js";

/// All prelude files joined into one classic script. The files share one function scope,
/// so their top-level bindings (the captured intrinsics) are invisible to model code.
pub fn source() -> String {
    let mut joined = String::from("(function () {\n");
    for (name, text) in FILES {
        joined.push_str("// ---- ");
        joined.push_str(name);
        joined.push('\n');
        joined.push_str(text);
        joined.push('\n');
    }
    joined.push_str("})();\n");
    joined
}

/// The names of the natives the prelude calls (`natives.op_*`), in first-use order; the
/// host's table must provide exactly these.
pub fn native_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    for (_, text) in FILES {
        let mut rest: &'static str = text;
        while let Some(at) = rest.find("natives.op_") {
            let start = at + "natives.".len();
            let len = rest[start..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len() - start);
            let name = &rest[start..start + len];
            if !names.contains(&name) {
                names.push(name);
            }
            rest = &rest[start + len..];
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_load_in_name_order_and_are_strict() {
        let names: Vec<&str> = FILES.iter().map(|(name, _)| *name).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        for (name, text) in FILES {
            assert!(
                text.starts_with("\"use strict\";"),
                "{name} must start with \"use strict\""
            );
        }
    }

    #[test]
    fn natives_are_found() {
        let names = native_names();
        assert!(names.contains(&"op_call_tool"));
        assert!(names.contains(&"op_exit"));
        assert!(names.iter().all(|n| n.starts_with("op_")));
    }
}
