use std::time::{Duration, Instant};

use codemode_bridge::{CellEvent, CellLimits, CellStart, StoredValues};

use super::*;
use crate::v8::{init_platform, startup_snapshot};

const LIMIT: u64 = 256;

fn pool(target: usize) -> WarmPool {
    init_platform();
    WarmPool::new(
        Some(startup_snapshot().expect("snapshot builds")),
        LIMIT,
        target,
    )
}

fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn start(source: &str) -> CellStart {
    CellStart {
        source: source.to_owned(),
        tools: Vec::new(),
        stored_values: StoredValues::new(),
        limits: CellLimits {
            heap_limit_mib: LIMIT,
        },
    }
}

/// Runs a cell to its Result and returns its texts and whether it was terminated.
fn finish(mut channels: codemode_bridge::CellChannels) -> (Vec<String>, bool) {
    let mut texts = Vec::new();
    while let Some(event) = channels.events.blocking_recv() {
        match event {
            CellEvent::ContentItem {
                item: codemode_bridge::ContentItem::InputText { text },
            } => texts.push(text),
            CellEvent::Result {
                error_text,
                terminated,
                ..
            } => {
                assert_eq!(error_text, None);
                return (texts, terminated);
            }
            _ => {}
        }
    }
    panic!("the cell ended without a Result");
}

/// Names of this process's threads that start with `prefix` (as the kernel keeps them:
/// at most 15 bytes).
fn threads_named(prefix: &str) -> Vec<String> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| name.starts_with(prefix))
        .collect()
}

#[test]
fn a_taken_isolate_is_replaced_and_never_comes_back() {
    let pool = pool(2);
    wait_until("the pool is full", || pool.ready() == 2);
    let thread = pool.take(LIMIT).expect("a warm isolate is ready");
    // The taken thread is gone from the pool; its replacement is made in the background.
    assert_eq!(pool.ready(), 1);
    let (channels, finished) = thread.assign(start(r#"globalThis.leak = 1; text("ran")"#));
    pool.refill(Some(finished));
    let (texts, terminated) = finish(channels);
    assert_eq!(texts, ["ran"]);
    assert!(!terminated);
    wait_until("the pool is refilled", || pool.ready() == 2);
    // Every later cell sees a clean global object.
    for _ in 0..4 {
        let thread = pool.take(LIMIT).expect("a warm isolate is ready");
        let (channels, finished) = thread.assign(start(
            r#"text(typeof globalThis.leak); globalThis.leak = 1"#,
        ));
        pool.refill(Some(finished));
        let (texts, _) = finish(channels);
        assert_eq!(texts, ["undefined"]);
        wait_until("the pool is refilled", || pool.ready() == 2);
    }
}

#[test]
fn another_heap_limit_gets_no_pooled_isolate() {
    let pool = pool(1);
    wait_until("the pool is full", || pool.ready() == 1);
    assert!(pool.take(64).is_none());
    assert_eq!(
        pool.ready(),
        1,
        "a mismatched request leaves the ready isolate in place"
    );
}

#[test]
fn dropping_the_pool_ends_its_idle_threads() {
    let pool = pool(2);
    wait_until("the pool is full", || pool.ready() == 2);
    let ours: Vec<String> = pool
        .inner
        .state()
        .ready
        .iter()
        .map(|thread| thread.name().to_owned())
        .collect();
    assert_eq!(ours.len(), 2);
    let alive = || {
        threads_named("cell-warm-")
            .into_iter()
            .filter(|name| ours.contains(name))
            .count()
    };
    assert_eq!(alive(), 2);
    drop(pool);
    wait_until("the idle threads exited", || alive() == 0);
}
