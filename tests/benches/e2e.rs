//! End-to-end benchmarks of issue 5, each run with cells in a `code-mode-host` child process
//! and in process so the ratio shows:
//!
//! - `exec_text`: one `exec` of `text("hi")`, router → ExecTool → session → V8 cell → render.
//! - `nested_call`: per-call cost of `await tools.noop({})` in a loop inside one cell, through
//!   the broker and the router (one criterion iteration = one nested call).
//! - `fanout_1000x50ms`: `Promise.all` of 1,000 calls to a tool that sleeps 50 ms, bounded by
//!   the per-cell concurrency cap.
//!
//! Run with `cargo bench -p codemode-tests --bench e2e`.
#![allow(missing_docs, clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use codemode_runtime::code_mode::CodeModeOptions;
use codemode_runtime::session::{CellBackend, Session, SessionOptions};
use codemode_runtime::tool::{
    FunctionCallError, ResponseInputItem, ToolExecutor, ToolInvocation, ToolName, ToolOutput,
    ToolPayload, ToolSpec,
};
use codemode_tests::{engine_arc, reply};
use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::runtime::Runtime;

/// A pragma that keeps every measured cell from yielding (10 minutes).
const NO_YIELD: &str = "// @exec: {\"yield_time_ms\": 600000}\n";
/// Calls in the fan-out cell.
const FANOUT_CALLS: usize = 1_000;
/// How long each fan-out call sleeps.
const FANOUT_SLEEP: Duration = Duration::from_millis(50);

/// `{}` as the code-mode result; the smallest possible tool answer.
#[derive(Debug)]
struct EmptyObjectOutput;

impl ToolOutput for EmptyObjectOutput {
    fn success(&self) -> Option<bool> {
        Some(true)
    }

    fn model_text(&self) -> String {
        "{}".to_owned()
    }

    fn to_response_item(&self, call_id: &str, payload: &ToolPayload) -> ResponseInputItem {
        ResponseInputItem::for_payload(call_id, payload, Value::String("{}".to_owned()))
    }

    fn code_mode_result(&self) -> Value {
        Value::Object(serde_json::Map::new())
    }
}

/// A parallel-safe tool that answers `{}`, optionally after sleeping.
struct BenchTool {
    name: &'static str,
    sleep: Option<Duration>,
}

impl ToolExecutor for BenchTool {
    fn tool_name(&self) -> ToolName {
        ToolName::plain(self.name)
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec::Function {
            name: self.name.to_owned(),
            description: format!("benchmark tool {}", self.name),
            strict: false,
            defer_loading: None,
            parameters: json!({"type": "object", "properties": {}}),
            output_schema: None,
        }
    }

    fn supports_parallel_tool_calls(&self) -> bool {
        true
    }

    fn handle(
        &self,
        _invocation: ToolInvocation,
    ) -> BoxFuture<'_, Result<Box<dyn ToolOutput>, FunctionCallError>> {
        Box::pin(async move {
            if let Some(sleep) = self.sleep {
                tokio::time::sleep(sleep).await;
            }
            Ok(Box::new(EmptyObjectOutput) as Box<dyn ToolOutput>)
        })
    }
}

/// The release `code-mode-host` next to this bench (`target/release/`), built if missing:
/// `cargo bench` builds only this package's targets.
fn release_host_program() -> PathBuf {
    let exe = std::env::current_exe().expect("bench executable path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target profile dir");
    let host = profile_dir.join("code-mode-host");
    if !host.is_file() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let status = std::process::Command::new(cargo)
            .args([
                "build",
                "--release",
                "-p",
                "codemode-host",
                "--bin",
                "code-mode-host",
            ])
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building code-mode-host failed");
    }
    assert!(host.is_file(), "no code-mode-host at {}", host.display());
    host
}

/// One benchmark session: the session, its temp dir and a label.
struct BenchSession {
    label: &'static str,
    session: Session,
    _dir: tempfile::TempDir,
}

async fn start_session(label: &'static str, backend: CellBackend) -> BenchSession {
    let dir = tempfile::tempdir().expect("temp dir");
    let cwd = dir.path().canonicalize().expect("canonical temp dir");
    let mut options = SessionOptions::new(cwd, backend);
    options.extra_tools = vec![
        Arc::new(BenchTool {
            name: "noop",
            sleep: None,
        }),
        Arc::new(BenchTool {
            name: "nap",
            sleep: Some(FANOUT_SLEEP),
        }),
    ];
    let session = Session::start(options).await.expect("session starts");
    // Warm the backend (host spawn, V8 snapshot) before any measurement.
    let warm = run_cell(&session, r#"text(await tools.noop({}))"#).await;
    assert_eq!(warm.1, ["{}"], "noop answers {{}}");
    BenchSession {
        label,
        session,
        _dir: dir,
    }
}

/// Runs one never-yielding cell, asserts it completed, returns its wall time and items.
async fn run_cell(session: &Session, body: &str) -> (Duration, Vec<String>) {
    let source = format!("{NO_YIELD}{body}");
    let started = Instant::now();
    let result = session.exec(&source).await;
    let elapsed = started.elapsed();
    let decoded = reply(&result);
    assert_eq!(
        decoded.status, "Script completed",
        "the cell completed without yielding: {:?}",
        decoded.raw
    );
    (elapsed, decoded.items)
}

fn sessions(runtime: &Runtime) -> Vec<BenchSession> {
    let host = release_host_program();
    runtime.block_on(async {
        vec![
            start_session("host", CellBackend::HostProcess { program: host }).await,
            start_session("in_process", CellBackend::InProcess(engine_arc())).await,
        ]
    })
}

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let sessions = sessions(&runtime);

    let mut group = c.benchmark_group("exec_text");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for bench in &sessions {
        group.bench_function(bench.label, |b| {
            b.iter(|| runtime.block_on(run_cell(&bench.session, r#"text("hi")"#)))
        });
    }
    group.finish();

    // One criterion iteration is one nested call: a sample of `iters` calls is one cell
    // looping `iters` times, so the cell's own start and render cost is spread over
    // thousands of calls.
    let mut group = c.benchmark_group("nested_call");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .throughput(Throughput::Elements(1))
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    for bench in &sessions {
        group.bench_function(bench.label, |b| {
            b.iter_custom(|iters| {
                let body = format!("for (let i = 0; i < {iters}; i++) await tools.noop({{}});");
                runtime.block_on(run_cell(&bench.session, &body)).0
            })
        });
    }
    group.finish();

    let cap = CodeModeOptions::default().max_concurrent_tool_calls;
    let batches = FANOUT_CALLS.div_ceil(cap) as u32;
    let target = FANOUT_SLEEP * batches * 6 / 5;
    println!(
        "fan-out target: 1.2 x ceil({FANOUT_CALLS}/{cap}) x {} ms = {} ms",
        FANOUT_SLEEP.as_millis(),
        target.as_millis()
    );
    let mut group = c.benchmark_group("fanout_1000x50ms");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_secs(8));
    let body = format!(
        "const all = await Promise.all(Array.from({{length: {FANOUT_CALLS}}}, () => tools.nap({{}})));\n\
         text(all.length)"
    );
    for bench in &sessions {
        group.bench_function(bench.label, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let (elapsed, items) = runtime.block_on(run_cell(&bench.session, &body));
                    assert_eq!(items, [FANOUT_CALLS.to_string()]);
                    total += elapsed;
                }
                total
            })
        });
    }
    group.finish();

    runtime.block_on(async {
        for bench in &sessions {
            bench.session.shutdown().await;
        }
    });

    print_summary(target);
}

/// Criterion's median estimate of `group/id` in nanoseconds, from the report it just wrote
/// (`target/criterion`, next to `target/release/deps/<this bench>`).
fn median_ns(group: &str, id: &str) -> Option<f64> {
    let exe = std::env::current_exe().ok()?;
    let target_dir = exe.parent()?.parent()?.parent()?;
    let path = target_dir
        .join("criterion")
        .join(group)
        .join(id)
        .join("new/estimates.json");
    let estimates: Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    estimates["median"]["point_estimate"].as_f64()
}

fn format_ns(ns: f64) -> String {
    match ns {
        ns if ns >= 1e6 => format!("{:.1} ms", ns / 1e6),
        ns if ns >= 1e3 => format!("{:.1} µs", ns / 1e3),
        ns => format!("{ns:.0} ns"),
    }
}

/// Prints the README table: medians, targets, pass/fail and the host/in-process ratio.
fn print_summary(fanout_target: Duration) {
    let rows: [(&str, &str, f64, &str); 3] = [
        (
            "exec_text",
            "exec `text(\"hi\")` round trip",
            3e6,
            "≤ 3 ms (host)",
        ),
        (
            "nested_call",
            "nested `tools.noop({})` call, per call",
            25e3,
            "≤ 25 µs (≥ 40k calls/s)",
        ),
        (
            "fanout_1000x50ms",
            "1,000 × 50 ms calls, `Promise.all`",
            fanout_target.as_nanos() as f64,
            "≤ 1.2 × ceil(1000/64) × 50 ms = 960 ms",
        ),
    ];
    println!();
    println!("| benchmark | median host | median in-process | target | ratio host/in-process |");
    println!("|---|---|---|---|---|");
    for (group, title, target_ns, target_text) in rows {
        let host = median_ns(group, "host");
        let local = median_ns(group, "in_process");
        let verdict = |median: Option<f64>| match median {
            Some(median) if median <= target_ns => format!("{} ✅", format_ns(median)),
            Some(median) => format!("{} ❌", format_ns(median)),
            None => "n/a".to_owned(),
        };
        let ratio = match (host, local) {
            (Some(host), Some(local)) if local > 0.0 => format!("{:.2}", host / local),
            _ => "n/a".to_owned(),
        };
        println!(
            "| {title} | {} | {} | {target_text} | {ratio} |",
            verdict(host),
            verdict(local)
        );
    }
}

criterion_group!(e2e, benches);
criterion_main!(e2e);
