//! Heap limits, termination, stack overflow and resource hygiene of cells (issue 2).

use std::time::{Duration, Instant};

use codemode_bridge::CellLimits;
use codemode_tests::{RunOptions, run_cell, run_cell_with};

fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task").map(|dir| dir.count()).unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heap_bomb_fails_only_its_cell() {
    let bomb = run_cell_with(
        "let a = []; for (;;) a.push(new Array(1e6).fill(1));",
        RunOptions { limits: CellLimits { heap_limit_mib: 64 }, ..Default::default() },
        |_, _| codemode_tests::Answer::Value(None),
    );
    let neighbour = run_cell(
        r#"let sum = 0; for (let i = 0; i < 1e6; i++) sum += i;
        await new Promise((r) => setTimeout(r, 50)); text(sum)"#,
    );
    let (bomb, neighbour) = tokio::join!(bomb, neighbour);
    assert_eq!(bomb.error_text.as_deref(), Some("exec cell exceeded its memory limit (64 MiB)"));
    assert!(neighbour.completed());
    assert_eq!(neighbour.texts, ["499999500000"]);
    // The process is alive and the next cell works.
    assert_eq!(run_cell(r#"text("alive")"#).await.texts, ["alive"]);
}

#[tokio::test]
async fn busy_loop_terminates_promptly_and_discards_writes() {
    let started = Instant::now();
    let run = run_cell_with(
        r#"store("k", 1); text("spinning"); while (true) {}"#,
        RunOptions { terminate_after: Some(Duration::from_millis(200)), ..Default::default() },
        |_, _| codemode_tests::Answer::Value(None),
    )
    .await;
    assert!(run.terminated);
    assert!(run.writes.is_empty());
    assert_eq!(run.texts, ["spinning"]);
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
}

#[tokio::test]
async fn terminate_stops_a_loop_inside_a_getter_during_conversion() {
    let run = run_cell_with(
        r#"text({ get x() { for (;;) {} } })"#,
        RunOptions { terminate_after: Some(Duration::from_millis(100)), ..Default::default() },
        |_, _| codemode_tests::Answer::Value(None),
    )
    .await;
    assert!(run.terminated);
}

#[tokio::test]
async fn terminate_while_awaiting_ends_the_cell() {
    let run = run_cell_with(
        r#"await new Promise(() => {});"#,
        RunOptions { terminate_after: Some(Duration::from_millis(50)), ..Default::default() },
        |_, _| codemode_tests::Answer::Value(None),
    )
    .await;
    assert!(run.terminated);
}

#[tokio::test]
async fn deep_recursion_is_a_range_error() {
    let run = run_cell("function f(n) { return f(n + 1) + 1; } f(0);").await;
    let error = run.error_text.expect("cell failed");
    assert!(error.starts_with("RangeError: Maximum call stack size exceeded"), "{error}");
    let run = run_cell(r#"function f() { return f(); } try { f(); } catch (e) { text(e.name); }"#).await;
    assert_eq!(run.texts, ["RangeError"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_cells_leave_no_threads_behind() {
    // Warm up: the engine, snapshot and runtime threads exist before we count.
    run_cell(r#"text("warm")"#).await;
    let before = thread_count();
    for i in 0..100 {
        let run = run_cell(&format!("text({i})")).await;
        assert_eq!(run.texts, [i.to_string()]);
    }
    // Cell threads exit right after their Result; give the OS a moment to reap them.
    let deadline = Instant::now() + Duration::from_secs(5);
    while thread_count() > before && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(thread_count() <= before, "threads before {before}, after {}", thread_count());
}
