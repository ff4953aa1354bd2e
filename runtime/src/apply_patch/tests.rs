use std::path::{Path, PathBuf};

use super::*;

fn write(dir: &Path, name: &str, content: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

fn run(dir: &Path, patch: &str) -> Result<String, String> {
    let parsed = parse_patch(patch).map_err(|e| e.to_string())?;
    let verified = verify_patch(&parsed, dir).map_err(|e| e.to_string())?;
    verified.apply().map_err(|e| e.to_string())
}

#[test]
fn add_update_delete_and_summary_order() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "mod.txt", "one\ntwo\nthree\n");
    write(dir.path(), "gone.txt", "bye\n");
    let patch = "*** Begin Patch\n\
*** Delete File: gone.txt\n\
*** Update File: mod.txt\n\
@@\n one\n-two\n+TWO\n three\n\
*** Add File: sub/new.txt\n+hello\n+world\n\
*** End Patch";
    let out = run(dir.path(), patch).unwrap();
    assert_eq!(
        out,
        "Success. Updated the following files:\nA sub/new.txt\nM mod.txt\nD gone.txt\n"
    );
    assert_eq!(read(dir.path(), "sub/new.txt"), "hello\nworld\n");
    assert_eq!(read(dir.path(), "mod.txt"), "one\nTWO\nthree\n");
    assert!(!dir.path().join("gone.txt").exists());
}

#[test]
fn move_writes_destination_and_removes_source() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "old/a.txt", "x\ny\n");
    write(dir.path(), "new/b.txt", "overwritten\n");
    let patch = "*** Begin Patch\n*** Update File: old/a.txt\n*** Move to: new/b.txt\n@@\n x\n-y\n+z\n*** End Patch\n";
    let out = run(dir.path(), patch).unwrap();
    assert_eq!(out, "Success. Updated the following files:\nM new/b.txt\n");
    assert!(!dir.path().join("old/a.txt").exists());
    assert_eq!(read(dir.path(), "new/b.txt"), "x\nz\n");
}

#[test]
fn multiple_chunks_with_context_and_first_chunk_without_marker() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "f.rs",
        "fn a() {\n    1\n}\nfn b() {\n    1\n}\n",
    );
    let patch = "*** Begin Patch\n*** Update File: f.rs\n fn a() {\n-    1\n+    2\n@@ fn b() {\n-    1\n+    3\n*** End Patch";
    run(dir.path(), patch).unwrap();
    assert_eq!(
        read(dir.path(), "f.rs"),
        "fn a() {\n    2\n}\nfn b() {\n    3\n}\n"
    );
}

#[test]
fn pure_addition_goes_after_context_or_at_end() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "a\nb\nc\n");
    run(
        dir.path(),
        "*** Begin Patch\n*** Update File: f.txt\n@@ a\n+after-a\n*** End Patch",
    )
    .unwrap();
    assert_eq!(read(dir.path(), "f.txt"), "a\nafter-a\nb\nc\n");
    run(
        dir.path(),
        "*** Begin Patch\n*** Update File: f.txt\n@@\n+tail\n*** End Patch",
    )
    .unwrap();
    assert_eq!(read(dir.path(), "f.txt"), "a\nafter-a\nb\nc\ntail\n");
}

#[test]
fn update_appends_trailing_newline_and_handles_end_of_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "x\nlast");
    run(
        dir.path(),
        "*** Begin Patch\n*** Update File: f.txt\n@@\n-last\n+LAST\n*** End of File\n*** End Patch",
    )
    .unwrap();
    assert_eq!(read(dir.path(), "f.txt"), "x\nLAST\n");
}

#[test]
fn fuzzy_matching_tolerates_whitespace_differences() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.py", "def f():  \n    return 1\n");
    run(dir.path(), "*** Begin Patch\n*** Update File: f.py\n@@\n def f():\n-  return 1\n+    return 2\n*** End Patch")
        .unwrap();
    // Matched lines are replaced by the patch's own text (context lines included).
    assert_eq!(read(dir.path(), "f.py"), "def f():\n    return 2\n");
}

#[test]
fn crlf_files_keep_crlf() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "w.txt", "a\r\nb\r\nc\r\n");
    run(
        dir.path(),
        "*** Begin Patch\n*** Update File: w.txt\n@@\n a\n-b\n+B\n*** End Patch",
    )
    .unwrap();
    assert_eq!(read(dir.path(), "w.txt"), "a\r\nB\r\nc\r\n");
}

#[test]
fn mismatch_names_file_and_lines_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ok.txt", "keep\n");
    write(dir.path(), "bad.txt", "real\n");
    let patch = "*** Begin Patch\n*** Add File: created.txt\n+new\n*** Update File: ok.txt\n-keep\n+changed\n*** Update File: bad.txt\n-imagined\n+x\n*** End Patch";
    let err = run(dir.path(), patch).unwrap_err();
    let bad = dir.path().join("bad.txt");
    assert_eq!(
        err,
        format!(
            "Failed to find expected lines in {}:\nimagined",
            bad.display()
        )
    );
    // Verification failed, so not even the earlier hunks were written.
    assert!(!dir.path().join("created.txt").exists());
    assert_eq!(read(dir.path(), "ok.txt"), "keep\n");
}

#[test]
fn missing_context_and_missing_files_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "a\n");
    let err = run(
        dir.path(),
        "*** Begin Patch\n*** Update File: f.txt\n@@ nothere\n-a\n+b\n*** End Patch",
    )
    .unwrap_err();
    assert_eq!(
        err,
        format!(
            "Failed to find context 'nothere' in {}",
            dir.path().join("f.txt").display()
        )
    );
    let err = run(
        dir.path(),
        "*** Begin Patch\n*** Update File: nope.txt\n@@\n-a\n+b\n*** End Patch",
    )
    .unwrap_err();
    assert_eq!(
        err,
        format!(
            "Failed to read file to update {}: No such file or directory (os error 2)",
            dir.path().join("nope.txt").display()
        )
    );
    let err = run(
        dir.path(),
        "*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch",
    )
    .unwrap_err();
    assert!(err.starts_with("Failed to read file to delete"), "{err}");
}

#[test]
fn empty_patch_modifies_nothing() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        run(dir.path(), "*** Begin Patch\n*** End Patch").unwrap_err(),
        "No files were modified."
    );
}

#[test]
fn parse_errors_have_exact_texts() {
    assert_eq!(
        parse_patch("bad").unwrap_err().to_string(),
        "invalid patch: The first line of the patch must be '*** Begin Patch'"
    );
    assert_eq!(
        parse_patch("*** Begin Patch\n*** Add File: a\n+x")
            .unwrap_err()
            .to_string(),
        "invalid patch: The last line of the patch must be '*** End Patch'"
    );
    assert_eq!(
        parse_patch("*** Begin Patch\n*** Frobnicate File: a\n*** End Patch")
            .unwrap_err()
            .to_string(),
        "invalid hunk at line 2, '*** Frobnicate File: a' is not a valid hunk header. Valid hunk headers: \
         '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"
    );
    assert_eq!(
        parse_patch("*** Begin Patch\n*** Update File: a\n*** End Patch")
            .unwrap_err()
            .to_string(),
        "invalid hunk at line 2, Update file hunk for path 'a' is empty"
    );
    assert_eq!(
        parse_patch("*** Begin Patch\n*** Update File: a\n@@\n-x\n@@\n*** End Patch")
            .unwrap_err()
            .to_string(),
        "invalid hunk at line 5, Update hunk does not contain any lines"
    );
    assert_eq!(
        parse_patch("*** Begin Patch\n*** Update File: a\n@@\n-x\nbogus\n*** End Patch")
            .unwrap_err()
            .to_string(),
        "invalid hunk at line 5, Expected update hunk to start with a @@ context marker"
    );
    let err =
        parse_patch("*** Begin Patch\n*** Update File: a\n@@\nbogus\n*** End Patch").unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid hunk at line 4, Unexpected line found in update hunk: 'bogus'. Every line should start \
         with ' ' (context line), '+' (added line), or '-' (removed line)"
    );
}

#[test]
fn lenient_parsing_trims_markers_and_strips_heredoc() {
    let patch =
        parse_patch("  *** Begin Patch  \n*** Add File: a\n+x\n  *** End Patch \n").unwrap();
    assert_eq!(patch.hunks.len(), 1);
    let patch =
        parse_patch("<<'EOF'\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF").unwrap();
    assert_eq!(
        patch.hunks,
        vec![Hunk::DeleteFile {
            path: PathBuf::from("a")
        }]
    );
}

#[test]
fn heredoc_invocations_are_recognized() {
    let argv = |s: &str| vec!["bash".to_owned(), "-lc".to_owned(), s.to_owned()];
    let body = "*** Begin Patch\n*** Delete File: a\n*** End Patch";
    assert_eq!(
        classify_invocation(&argv(&format!("apply_patch <<'EOF'\n{body}\nEOF\n"))),
        ApplyPatchInvocation::Patch {
            patch: body.to_owned(),
            workdir: None
        }
    );
    assert_eq!(
        classify_invocation(&argv(&format!("cd sub && apply_patch <<EOF\n{body}\nEOF"))),
        ApplyPatchInvocation::Patch {
            patch: body.to_owned(),
            workdir: Some(PathBuf::from("sub"))
        }
    );
    assert_eq!(
        classify_invocation(&["apply_patch".to_owned(), body.to_owned()]),
        ApplyPatchInvocation::Patch {
            patch: body.to_owned(),
            workdir: None
        }
    );
    assert_eq!(
        classify_invocation(&argv(body)),
        ApplyPatchInvocation::ImplicitPatch
    );
    assert_eq!(
        classify_invocation(&argv(&format!(
            "apply_patch <<'EOF'\n{body}\nEOF\necho more"
        ))),
        ApplyPatchInvocation::NotApplyPatch
    );
    assert_eq!(
        classify_invocation(&argv("ls -la")),
        ApplyPatchInvocation::NotApplyPatch
    );
}

#[test]
fn failure_during_apply_keeps_earlier_changes() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "a\n");
    std::fs::create_dir(dir.path().join("adir")).unwrap();
    // Verification passes (the directory is "deleted" only at apply time) ... but reading a
    // directory fails at verification, so use an add into a path whose parent is a file.
    let patch = "*** Begin Patch\n*** Update File: a.txt\n-a\n+b\n*** Add File: a.txt/child\n+x\n*** End Patch";
    let err = run(dir.path(), patch).unwrap_err();
    assert!(err.contains("a.txt/child"), "{err}");
    assert_eq!(read(dir.path(), "a.txt"), "b\n");
}
