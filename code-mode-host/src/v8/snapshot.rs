//! The startup snapshot: a context in which the prelude has already run, built once per
//! process and shared (read-only) by every cell isolate.

use std::sync::OnceLock;

use crate::HostError;

static SNAPSHOT: OnceLock<Result<&'static [u8], String>> = OnceLock::new();

/// The snapshot blob, built on first use.
pub(crate) fn startup_snapshot() -> Result<&'static [u8], HostError> {
    SNAPSHOT
        .get_or_init(|| {
            // The creator gets its own thread so it never nests inside an isolate the caller
            // may have entered.
            std::thread::Builder::new()
                .name("codemode-snapshot".to_owned())
                .spawn(build)
                .map_err(|error| error.to_string())
                .and_then(|handle| {
                    handle
                        .join()
                        .map_err(|_| "snapshot thread panicked".to_owned())?
                })
        })
        .clone()
        .map_err(HostError::Snapshot)
}

fn build() -> Result<&'static [u8], String> {
    super::init_platform();
    let mut creator = ::v8::Isolate::snapshot_creator(None, None);
    {
        ::v8::scope!(let scope, &mut creator);
        let context = ::v8::Context::new(scope, Default::default());
        let scope = &mut ::v8::ContextScope::new(scope, context);
        crate::cell::run_prelude(scope).map_err(|error| error.text)?;
        scope.set_default_context(context);
    }
    let blob = creator
        .create_blob(::v8::FunctionCodeHandling::Keep)
        .ok_or_else(|| "V8 returned no snapshot blob".to_owned())?;
    // Leaked on purpose: one blob per process, shared by every cell for the process's life.
    Ok(Box::leak(blob.to_vec().into_boxed_slice()))
}
