//! `codemode exec`: one exec cell, then `wait` until it completes, printing every
//! observation and `notify()` message as it arrives. Ctrl-C terminates the cell.

use std::future::Future;
use std::io::Read;
use std::pin::pin;
use std::time::{Duration, Instant};

use anyhow::Context;
use codemode_runtime::code_mode::{ExecNotification, PRAGMA_PREFIX};
use codemode_runtime::router::ToolCallResult;
use codemode_runtime::session::Session;
use serde_json::{Map, Value, json};
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::args::ExecArgs;
use crate::observation::{Observation, Status};
use crate::output::Printer;
use crate::setup::{Mode, UsageError, start_session};

/// How often the spinner redraws.
const TICK: Duration = Duration::from_millis(100);

/// Runs `codemode exec`; returns the exit code.
pub(crate) async fn run(args: ExecArgs) -> anyhow::Result<u8> {
    let source = with_pragma(read_source(&args)?, args.yield_ms, args.max_output_tokens);
    // Listen before the cell starts: a Ctrl-C between two calls is then kept, not lost.
    let interrupt = signal(SignalKind::interrupt()).context("cannot listen for Ctrl-C")?;
    let session = start_session(&args.common, Mode::Exec).await?;
    let mut run = ExecRun {
        session: &session,
        printer: Printer::new(args.json),
        notifications: session.take_notifications(),
        interrupt,
        cell_id: None,
    };
    let code = run.drive(&source, &args).await;
    session.shutdown().await;
    Ok(code)
}

/// The source text: `-e CODE`, a file, or stdin for `-`.
fn read_source(args: &ExecArgs) -> anyhow::Result<String> {
    if let Some(code) = &args.eval {
        return Ok(code.clone());
    }
    let Some(script) = &args.script else {
        return Err(UsageError("give a SCRIPT.js, -e CODE, or - for stdin".to_owned()).into());
    };
    if script.as_os_str() == "-" {
        let mut source = String::new();
        std::io::stdin()
            .read_to_string(&mut source)
            .context("cannot read the script from stdin")?;
        return Ok(source);
    }
    std::fs::read_to_string(script)
        .map_err(|error| UsageError(format!("cannot read {}: {error}", script.display())).into())
}

/// Prepends the exec pragma for the command-line limits; a pragma line of the script itself
/// then becomes an ordinary comment, so the flags win.
fn with_pragma(source: String, yield_ms: Option<u64>, max_output_tokens: Option<u64>) -> String {
    let mut pragma = Map::new();
    if let Some(ms) = yield_ms {
        pragma.insert("yield_time_ms".to_owned(), json!(ms));
    }
    if let Some(tokens) = max_output_tokens {
        pragma.insert("max_output_tokens".to_owned(), json!(tokens));
    }
    if pragma.is_empty() {
        return source;
    }
    format!("{PRAGMA_PREFIX} {}\n{source}", Value::Object(pragma))
}

/// The state of one `codemode exec` run.
struct ExecRun<'a> {
    session: &'a Session,
    printer: Printer,
    notifications: Option<UnboundedReceiver<ExecNotification>>,
    interrupt: Signal,
    cell_id: Option<String>,
}

/// How awaiting a call ended.
enum Awaited {
    /// The call answered.
    Done(ToolCallResult),
    /// Ctrl-C came first; the call was then finished alongside the clean-up.
    Interrupted,
}

impl ExecRun<'_> {
    async fn drive(&mut self, source: &str, args: &ExecArgs) -> u8 {
        let session = self.session;
        let mut observation = match self.call(session.exec(source)).await {
            Awaited::Done(result) => self.observe(&result),
            Awaited::Interrupted => return self.interrupted_during_exec().await,
        };
        loop {
            if observation.status != Status::Running || args.no_wait {
                return observation.exit_code();
            }
            let mut wait = json!({ "cell_id": observation.cell_id });
            if let Some(ms) = args.yield_ms {
                wait["yield_time_ms"] = json!(ms);
            }
            if let Some(tokens) = args.max_output_tokens {
                wait["max_tokens"] = json!(tokens);
            }
            observation = match self.call(session.wait(wait)).await {
                Awaited::Done(result) => self.observe(&result),
                Awaited::Interrupted => return self.terminate().await,
            };
        }
    }

    /// Prints and remembers one result.
    fn observe(&mut self, result: &ToolCallResult) -> Observation {
        self.drain_notifications();
        let observation = Observation::from_result(result, self.cell_id.as_deref());
        if observation.cell_id.is_some() {
            self.cell_id.clone_from(&observation.cell_id);
        }
        self.printer.observation(&observation);
        observation
    }

    /// Awaits `call` while printing notifications and spinner ticks; stops at Ctrl-C.
    async fn call(&mut self, call: impl Future<Output = ToolCallResult>) -> Awaited {
        let mut call = pin!(call);
        let started = Instant::now();
        let mut ticks = tokio::time::interval(TICK);
        let Self {
            printer,
            notifications,
            interrupt,
            cell_id,
            ..
        } = self;
        loop {
            let notification = async {
                match notifications.as_mut() {
                    Some(receiver) => receiver.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                result = &mut call => return Awaited::Done(result),
                _ = interrupt.recv() => return Awaited::Interrupted,
                received = notification => match received {
                    Some(notification) => printer.notification(&notification),
                    None => *notifications = None,
                },
                _ = ticks.tick(), if printer.wants_spinner() => {
                    printer.tick(cell_id.as_deref(), started.elapsed());
                }
            }
        }
    }

    fn drain_notifications(&mut self) {
        while let Some(notification) = self
            .notifications
            .as_mut()
            .and_then(|receiver| receiver.try_recv().ok())
        {
            self.printer.notification(&notification);
        }
    }

    /// Ctrl-C while a wait was pending: `wait {terminate: true}`, print, exit 1.
    async fn terminate(&mut self) -> u8 {
        let session = self.session;
        let result = session
            .wait(json!({ "cell_id": self.cell_id, "terminate": true }))
            .await;
        self.observe(&result);
        1
    }

    /// Ctrl-C before the first exec answered: the cell id is not known yet, so every cell of
    /// the session is terminated.
    async fn interrupted_during_exec(&mut self) -> u8 {
        self.session.shutdown().await;
        self.printer
            .observation(&Observation::terminated_before_yield());
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pragma_only_when_flags_are_given() {
        assert_eq!(with_pragma("x".to_owned(), None, None), "x");
        assert_eq!(
            with_pragma("x".to_owned(), Some(50), None),
            "// @exec: {\"yield_time_ms\":50}\nx"
        );
        assert_eq!(
            with_pragma("x".to_owned(), Some(1), Some(2)),
            "// @exec: {\"yield_time_ms\":1,\"max_output_tokens\":2}\nx"
        );
    }
}
