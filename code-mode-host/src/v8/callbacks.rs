//! Module-loading callbacks: code mode has no imports, static or dynamic.

/// Static `import`: instantiation fails with `Unsupported import in exec: <specifier>`.
pub(crate) fn resolve_import_rejected<'s>(
    context: ::v8::Local<'s, ::v8::Context>,
    specifier: ::v8::Local<'s, ::v8::String>,
    _import_attributes: ::v8::Local<'s, ::v8::FixedArray>,
    _referrer: ::v8::Local<'s, ::v8::Module>,
) -> Option<::v8::Local<'s, ::v8::Module>> {
    // SAFETY: V8 calls this during `instantiate_module` on the cell thread, inside the
    // context it passes; a callback scope over that live context is what the API requires.
    ::v8::callback_scope!(unsafe scope, context);
    ::v8::scope!(let scope, scope);
    let message = format!(
        "Unsupported import in exec: {}",
        specifier.to_rust_string_lossy(scope)
    );
    if let Some(text) = ::v8::String::new(scope, &message) {
        scope.throw_exception(text.into());
    }
    None
}

/// Dynamic `import()`: the returned promise rejects with the same text.
pub(crate) fn dynamic_import_rejected<'s>(
    scope: &mut ::v8::PinScope<'s, '_>,
    _host_defined_options: ::v8::Local<'s, ::v8::Data>,
    _resource_name: ::v8::Local<'s, ::v8::Value>,
    specifier: ::v8::Local<'s, ::v8::String>,
    _import_attributes: ::v8::Local<'s, ::v8::FixedArray>,
) -> Option<::v8::Local<'s, ::v8::Promise>> {
    let message = format!(
        "Unsupported import in exec: {}",
        specifier.to_rust_string_lossy(scope)
    );
    let resolver = ::v8::PromiseResolver::new(scope)?;
    let text = ::v8::String::new(scope, &message)?;
    resolver.reject(scope, text.into());
    Some(resolver.get_promise(scope))
}
