//! One V8 platform per process, initialised once.

use std::sync::Once;

static INIT: Once = Once::new();

/// Initialises V8 for this process; later calls do nothing.
pub(crate) fn init_platform() {
    INIT.call_once(|| {
        // A pool of background workers is enough: cells run on their own threads and only
        // GC/compile tasks go to the platform.
        let platform = ::v8::new_default_platform(0, false).make_shared();
        ::v8::V8::initialize_platform(platform);
        ::v8::V8::initialize();
    });
}
