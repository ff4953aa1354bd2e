//! V8 cells for code mode: one process-wide V8 platform, a startup snapshot with the JS
//! prelude baked in, and one fresh isolate per cell on its own thread (made ahead of time by
//! a small warm pool, so a cell start does not wait for it). [`V8Engine`] implements
//! `codemode_bridge::CellEngine`, so the cell actor, the session runtime and the host protocol
//! (all in codemode-bridge) drive it without knowing about V8.
//!
//! Central types: [`V8Engine`], [`V8EngineOptions`].
//!
//! Not here: observation, yield and wait semantics (codemode-bridge's cell actor), tool
//! execution and policy (codemode-runtime), model-visible message text (codemode-runtime).
//! Depends on v8, codemode-bridge and codemode-js-prelude.
#![deny(clippy::unwrap_used)]

mod cell;
mod cell_state;
mod cell_thread;
mod engine;
mod error;
mod js_error;
mod names;
mod natives;
mod timers;
mod v8;
mod warm_pool;

pub use engine::{DEFAULT_WARM_ISOLATES, V8Engine, V8EngineOptions};
pub use error::HostError;
pub use js_error::JsError;
