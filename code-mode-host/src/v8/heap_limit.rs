//! The per-cell heap limit: near the limit, V8 asks us what to do; we stop the cell and give
//! V8 enough headroom to unwind, instead of letting an OOM kill the whole process.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};

/// Extra room granted once the limit is hit, so the isolate can unwind to termination.
const HEADROOM_BYTES: usize = 64 << 20;

/// Shared between the cell thread and V8's near-heap-limit callback. Must outlive the
/// isolate it is registered with.
pub(crate) struct HeapGuard {
    handle: ::v8::IsolateHandle,
    exceeded: AtomicBool,
}

impl HeapGuard {
    /// A guard for the isolate behind `handle`.
    pub(crate) fn new(handle: ::v8::IsolateHandle) -> Box<Self> {
        Box::new(Self {
            handle,
            exceeded: AtomicBool::new(false),
        })
    }

    /// Whether the limit was reached.
    pub(crate) fn exceeded(&self) -> bool {
        self.exceeded.load(Ordering::SeqCst)
    }

    /// Registers the callback on `isolate`.
    ///
    /// The guard must stay alive (not moved out of its box) until the isolate is dropped;
    /// the cell thread declares the guard before the isolate so it drops after it.
    // `&Box<Self>` on purpose: the registered pointer must be to a boxed (unmoving) guard.
    #[allow(clippy::borrowed_box)]
    pub(crate) fn install(self: &Box<Self>, isolate: &mut ::v8::Isolate) {
        let data = (&**self as *const HeapGuard).cast_mut().cast::<c_void>();
        isolate.add_near_heap_limit_callback(near_heap_limit, data);
    }
}

/// # Safety
/// `data` must point to a live `HeapGuard` (guaranteed by `HeapGuard::install`'s contract).
unsafe extern "C" fn near_heap_limit(
    data: *mut c_void,
    current_heap_limit: usize,
    _initial: usize,
) -> usize {
    // SAFETY: `data` was produced by `HeapGuard::install` from a boxed guard that the cell
    // thread keeps alive until after the isolate is dropped; we only read through it and the
    // fields are thread-safe (AtomicBool, IsolateHandle).
    let guard = unsafe { &*data.cast::<HeapGuard>() };
    guard.exceeded.store(true, Ordering::SeqCst);
    guard.handle.terminate_execution();
    current_heap_limit.saturating_add(HEADROOM_BYTES)
}
