//! Cell latency on real V8: start → Result with and without the snapshot and the warm pool,
//! the overhead of one nested tool call, and terminate latency of a busy loop.
//!
//! Every bench times only the part its name promises (with `iter_custom`); set-up such as
//! waiting for the warm pool to refill is left out. Besides criterion's summary, each bench
//! prints p50/p99 of its individual iterations (criterion reports means of samples).
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    missing_docs
)]

use std::cell::RefCell;
use std::time::{Duration, Instant};

use codemode_bridge::{
    CellChannels, CellCommand, CellEngine, CellEvent, CellId, CellLimits, CellStart, StoredValues,
    ToolDefinition, ToolKind, ToolName,
};
use codemode_host::{V8Engine, V8EngineOptions};
use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};

/// Nested calls per iteration of the tool-call bench.
const TOOL_CALLS: u32 = 10_000;

fn engine(use_snapshot: bool, warm_isolates: usize) -> V8Engine {
    V8Engine::new(V8EngineOptions {
        use_snapshot,
        warm_isolates,
    })
    .expect("V8 engine starts")
}

fn cell_start(source: &str, tools: Vec<ToolDefinition>) -> CellStart {
    CellStart {
        source: source.to_owned(),
        tools,
        stored_values: StoredValues::new(),
        limits: CellLimits::default(),
    }
}

fn noop_tool() -> ToolDefinition {
    ToolDefinition {
        name: "noop".to_owned(),
        tool_name: ToolName::plain("noop"),
        description: "does nothing".to_owned(),
        kind: ToolKind::Function,
        input_schema: None,
        output_schema: None,
    }
}

/// Blocks until the cell's Result; panics on a failed cell (a bench must measure success).
fn wait_result(channels: &mut CellChannels) {
    while let Some(event) = channels.events.blocking_recv() {
        if let CellEvent::Result { error_text, .. } = event {
            assert_eq!(error_text, None, "bench cell failed");
            return;
        }
    }
    panic!("cell ended without a Result");
}

/// Waits (untimed) until the pool is full again, so each iteration starts like a cell that
/// arrives after the previous one finished.
fn settle(engine: &V8Engine, warm: usize) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while engine.warm_isolates_ready() < warm && Instant::now() < deadline {
        std::thread::sleep(Duration::from_micros(200));
    }
    // Let the previous cell's thread finish disposing its isolate.
    std::thread::sleep(Duration::from_micros(300));
}

/// Collects every timed iteration so percentiles can be printed after criterion's run.
struct Samples {
    name: String,
    per_iteration: RefCell<Vec<Duration>>,
    scale: u32,
}

impl Samples {
    fn new(name: &str, scale: u32) -> Self {
        Self {
            name: name.to_owned(),
            per_iteration: RefCell::new(Vec::new()),
            scale,
        }
    }

    fn push(&self, elapsed: Duration) {
        self.per_iteration.borrow_mut().push(elapsed / self.scale);
    }

    fn report(&self) {
        let mut all = self.per_iteration.borrow_mut();
        all.sort();
        if all.is_empty() {
            return;
        }
        let at = |q: f64| all[((all.len() - 1) as f64 * q).round() as usize];
        let unit = if self.scale > 1 { " per call" } else { "" };
        println!(
            "{}: n={} p50={:?} p99={:?} max={:?}{unit}",
            self.name,
            all.len(),
            at(0.5),
            at(0.99),
            all[all.len() - 1]
        );
    }
}

fn start_to_result(c: &mut Criterion) {
    let mut group = c.benchmark_group("start_to_result");
    group
        .sample_size(30)
        .measurement_time(Duration::from_millis(600))
        .warm_up_time(Duration::from_millis(200));
    group.sampling_mode(SamplingMode::Flat);
    let variants = [
        ("snapshot+pool", true, 2),
        ("snapshot", true, 0),
        ("no_snapshot", false, 0),
    ];
    for (name, use_snapshot, warm) in variants {
        let engine = engine(use_snapshot, warm);
        let samples = Samples::new(&format!("start_to_result/{name}"), 1);
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    settle(&engine, warm);
                    let began = Instant::now();
                    let mut channels = engine
                        .start_cell(CellId::generate(), cell_start(r#"text("hi")"#, Vec::new()))
                        .unwrap();
                    wait_result(&mut channels);
                    let elapsed = began.elapsed();
                    samples.push(elapsed);
                    total += elapsed;
                }
                total
            });
        });
        samples.report();
    }
    group.finish();
}

fn nested_tool_calls(c: &mut Criterion) {
    let mut group = c.benchmark_group("tool_calls");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(300));
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(u64::from(TOOL_CALLS)));
    let engine = engine(true, 2);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let source = format!("for (let i = 0; i < {TOOL_CALLS}; i++) await tools.noop();");
    let samples = Samples::new("tool_calls/10k_sequential_noop", TOOL_CALLS);
    group.bench_function("10k_sequential_noop", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                settle(&engine, 2);
                let began = Instant::now();
                let mut channels = engine
                    .start_cell(CellId::generate(), cell_start(&source, vec![noop_tool()]))
                    .unwrap();
                let responder = runtime.spawn(async move {
                    while let Some(event) = channels.events.recv().await {
                        match event {
                            CellEvent::ToolCall { id, .. } => {
                                channels
                                    .commands
                                    .send(CellCommand::ToolResponse { id, value: None });
                            }
                            CellEvent::Result { error_text, .. } => return error_text,
                            _ => {}
                        }
                    }
                    Some("no Result".to_owned())
                });
                let error_text = runtime.block_on(responder).unwrap();
                assert_eq!(error_text, None, "bench cell failed");
                let elapsed = began.elapsed();
                samples.push(elapsed);
                total += elapsed;
            }
            total
        });
    });
    samples.report();
    group.finish();
}

fn terminate_latency(c: &mut Criterion) {
    let mut group = c.benchmark_group("terminate");
    group
        .sample_size(30)
        .measurement_time(Duration::from_millis(600))
        .warm_up_time(Duration::from_millis(200));
    group.sampling_mode(SamplingMode::Flat);
    let engine = engine(true, 2);
    let samples = Samples::new("terminate/busy_loop", 1);
    group.bench_function("busy_loop", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                settle(&engine, 2);
                let start = cell_start(r#"text("spinning"); while (true) {}"#, Vec::new());
                let mut channels = engine.start_cell(CellId::generate(), start).unwrap();
                while let Some(event) = channels.events.blocking_recv() {
                    if matches!(event, CellEvent::ContentItem { .. }) {
                        break;
                    }
                }
                let began = Instant::now();
                channels.commands.send(CellCommand::Terminate);
                let mut terminated = false;
                while let Some(event) = channels.events.blocking_recv() {
                    if let CellEvent::Result { terminated: t, .. } = event {
                        terminated = t;
                        break;
                    }
                }
                let elapsed = began.elapsed();
                assert!(terminated, "the busy cell was not terminated");
                samples.push(elapsed);
                total += elapsed;
            }
            total
        });
    });
    samples.report();
    group.finish();
}

criterion_group!(
    benches,
    start_to_result,
    nested_tool_calls,
    terminate_latency
);
criterion_main!(benches);
