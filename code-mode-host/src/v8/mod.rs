//! The fenced V8 edge: process-wide platform setup, the startup snapshot, and the raw
//! callbacks V8 calls with C ABI (module resolution, heap limit). The only place in the
//! host where `unsafe` is allowed.

mod callbacks;
mod heap_limit;
mod platform;
mod snapshot;

pub(crate) use callbacks::{dynamic_import_rejected, resolve_import_rejected};
pub(crate) use heap_limit::HeapGuard;
pub(crate) use platform::init_platform;
pub(crate) use snapshot::startup_snapshot;
