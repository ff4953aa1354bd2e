//! The natives the prelude calls (`natives.op_*`): each reads its arguments, checks the exit
//! guard, and emits one event or touches the cell state. Validation and the exact error
//! strings of the helpers live in the prelude; a native only refuses what JavaScript cannot
//! check (unknown tool index, unserializable JSON).

use codemode_bridge::{CellEvent, ContentItem, ImageDetail, ToolCallId};

use crate::cell_state::CellState;

/// One native: its JavaScript name and its callback.
pub(crate) struct Native {
    /// `natives.<name>` in the prelude.
    pub(crate) name: &'static str,
    /// Builds the function in the current context.
    pub(crate) build:
        for<'s> fn(&mut ::v8::PinScope<'s, '_>) -> Option<::v8::Local<'s, ::v8::Function>>,
}

macro_rules! native {
    ($name:literal, $callback:path) => {
        Native {
            name: $name,
            build: |scope| ::v8::Function::new(scope, $callback),
        }
    };
}

/// The table the prelude's `natives.op_*` names must match exactly (a test checks it).
pub(crate) const NATIVES: &[Native] = &[
    native!("op_text", op_text),
    native!("op_image", op_image),
    native!("op_notify", op_notify),
    native!("op_call_tool", op_call_tool),
    native!("op_store", op_store),
    native!("op_load", op_load),
    native!("op_set_timer", op_set_timer),
    native!("op_clear_timer", op_clear_timer),
    native!("op_yield", op_yield),
    native!("op_exit", op_exit),
];

/// Builds the `natives` object handed to the prelude's bootstrap.
pub(crate) fn natives_object<'s>(
    scope: &mut ::v8::PinScope<'s, '_>,
) -> Option<::v8::Local<'s, ::v8::Object>> {
    let object = ::v8::Object::new(scope);
    for native in NATIVES {
        let function = (native.build)(scope)?;
        let key = ::v8::String::new(scope, native.name)?;
        object.set(scope, key.into(), function.into())?;
    }
    Some(object)
}

fn state<'a>(scope: &'a mut ::v8::PinScope<'_, '_>) -> &'a mut CellState {
    scope
        .get_slot_mut::<CellState>()
        .expect("every cell isolate carries a CellState slot")
}

fn admitted(scope: &mut ::v8::PinScope<'_, '_>) -> bool {
    !state(scope).exit_requested && !scope.is_execution_terminating()
}

fn string_arg(
    scope: &mut ::v8::PinScope<'_, '_>,
    args: &::v8::FunctionCallbackArguments<'_>,
    index: i32,
) -> Option<String> {
    let value = args.get(index);
    value.is_string().then(|| value.to_rust_string_lossy(scope))
}

fn throw_string(scope: &mut ::v8::PinScope<'_, '_>, message: &str) {
    if let Some(text) = ::v8::String::new(scope, message) {
        scope.throw_exception(text.into());
    }
}

/// Parses JSON text produced by `JSON.stringify` into a value for the wire.
pub(crate) fn parse_json(text: &str) -> Result<serde_json::Value, String> {
    // serde's private magic keys could smuggle raw values past the recursion limit.
    if text.contains("$serde_json::private") {
        return Err("failed to serialize JavaScript value: reserved JSON object key".to_owned());
    }
    serde_json::from_str(text)
        .map_err(|error| format!("failed to serialize JavaScript value: {error}"))
}

fn op_text(
    scope: &mut ::v8::PinScope<'_, '_>,
    args: ::v8::FunctionCallbackArguments<'_>,
    _rv: ::v8::ReturnValue<'_, ::v8::Value>,
) {
    if !admitted(scope) {
        return;
    }
    if let Some(text) = string_arg(scope, &args, 0) {
        state(scope).emit(CellEvent::ContentItem {
            item: ContentItem::InputText { text },
        });
    }
}

fn op_image(
    scope: &mut ::v8::PinScope<'_, '_>,
    args: ::v8::FunctionCallbackArguments<'_>,
    _rv: ::v8::ReturnValue<'_, ::v8::Value>,
) {
    if !admitted(scope) {
        return;
    }
    let (Some(image_url), Some(detail)) =
        (string_arg(scope, &args, 0), string_arg(scope, &args, 1))
    else {
        return;
    };
    match ImageDetail::parse(&detail) {
        Ok(detail) => state(scope).emit(CellEvent::ContentItem {
            item: ContentItem::InputImage {
                image_url,
                detail: Some(detail),
            },
        }),
        Err(error) => throw_string(scope, &error.to_string()),
    }
}

fn op_notify(
    scope: &mut ::v8::PinScope<'_, '_>,
    args: ::v8::FunctionCallbackArguments<'_>,
    _rv: ::v8::ReturnValue<'_, ::v8::Value>,
) {
    if !admitted(scope) {
        return;
    }
    if let Some(text) = string_arg(scope, &args, 0) {
        state(scope).emit(CellEvent::Notify { text });
    }
}

fn op_call_tool(
    scope: &mut ::v8::PinScope<'_, '_>,
    args: ::v8::FunctionCallbackArguments<'_>,
    mut rv: ::v8::ReturnValue<'_, ::v8::Value>,
) {
    if !admitted(scope) {
        return;
    }
    let index = args.get(0).uint32_value(scope).unwrap_or(u32::MAX) as usize;
    // Only the two names travel with the call; descriptions and schemas can be large.
    let names = state(scope)
        .tools
        .get(index)
        .map(|tool| (tool.tool_name.clone(), tool.name.clone()));
    let Some((tool_name, js_name)) = names else {
        throw_string(scope, &format!("unknown nested tool index {index}"));
        return;
    };
    let input = match string_arg(scope, &args, 1) {
        None => None,
        Some(json) => match parse_json(&json) {
            Ok(value) => Some(value),
            Err(message) => {
                throw_string(scope, &message);
                return;
            }
        },
    };
    let Some(resolver) = ::v8::PromiseResolver::new(scope) else {
        return;
    };
    let promise = resolver.get_promise(scope);
    let resolver = ::v8::Global::new(scope, resolver);
    let cell = state(scope);
    cell.tool_calls_made = cell.tool_calls_made.saturating_add(1);
    let id = ToolCallId::nth(cell.tool_calls_made);
    cell.pending_tools.insert(id.clone(), resolver);
    cell.emit(CellEvent::ToolCall {
        id,
        tool_name,
        js_name,
        input,
    });
    rv.set(promise.into());
}

fn op_store(
    scope: &mut ::v8::PinScope<'_, '_>,
    args: ::v8::FunctionCallbackArguments<'_>,
    _rv: ::v8::ReturnValue<'_, ::v8::Value>,
) {
    if !admitted(scope) {
        return;
    }
    let (Some(key), Some(json)) = (string_arg(scope, &args, 0), string_arg(scope, &args, 1)) else {
        return;
    };
    match parse_json(&json) {
        Ok(value) => {
            let cell = state(scope);
            cell.values.insert(key.clone(), value.clone());
            cell.writes.insert(key, value);
        }
        Err(message) => throw_string(scope, &message),
    }
}

fn op_load(
    scope: &mut ::v8::PinScope<'_, '_>,
    args: ::v8::FunctionCallbackArguments<'_>,
    mut rv: ::v8::ReturnValue<'_, ::v8::Value>,
) {
    let Some(key) = string_arg(scope, &args, 0) else {
        return;
    };
    let Some(json) = state(scope).values.get(&key).map(|value| value.to_string()) else {
        return;
    };
    if let Some(text) = ::v8::String::new(scope, &json) {
        rv.set(text.into());
    }
}

fn op_set_timer(
    scope: &mut ::v8::PinScope<'_, '_>,
    args: ::v8::FunctionCallbackArguments<'_>,
    mut rv: ::v8::ReturnValue<'_, ::v8::Value>,
) {
    if !admitted(scope) {
        return;
    }
    let millis = args.get(0).number_value(scope).unwrap_or(0.0);
    let millis = if millis.is_finite() && millis > 0.0 {
        millis as u64
    } else {
        0
    };
    let id = state(scope)
        .timers
        .schedule(std::time::Duration::from_millis(millis));
    rv.set(::v8::Number::new(scope, id as f64).into());
}

fn op_clear_timer(
    scope: &mut ::v8::PinScope<'_, '_>,
    args: ::v8::FunctionCallbackArguments<'_>,
    _rv: ::v8::ReturnValue<'_, ::v8::Value>,
) {
    if !admitted(scope) {
        return;
    }
    let id = args.get(0).number_value(scope).unwrap_or(0.0);
    if id.is_finite() && id >= 1.0 {
        state(scope).timers.clear(id as u64);
    }
}

fn op_yield(
    scope: &mut ::v8::PinScope<'_, '_>,
    _args: ::v8::FunctionCallbackArguments<'_>,
    _rv: ::v8::ReturnValue<'_, ::v8::Value>,
) {
    if !admitted(scope) {
        return;
    }
    state(scope).emit(CellEvent::YieldRequested);
}

fn op_exit(
    scope: &mut ::v8::PinScope<'_, '_>,
    _args: ::v8::FunctionCallbackArguments<'_>,
    _rv: ::v8::ReturnValue<'_, ::v8::Value>,
) {
    if state(scope).exit_requested {
        return;
    }
    state(scope).exit_requested = true;
    // Uncatchable: nothing after exit() runs, not even a surrounding finally block.
    scope.terminate_execution();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_native_table_matches_the_prelude() {
        let mut ours: Vec<&str> = NATIVES.iter().map(|n| n.name).collect();
        let mut prelude = codemode_js_prelude::native_names();
        ours.sort();
        prelude.sort();
        assert_eq!(ours, prelude);
    }

    #[test]
    fn reserved_serde_keys_are_rejected() {
        let error = parse_json(r#"{"$serde_json::private::RawValue":"1"}"#).unwrap_err();
        assert_eq!(
            error,
            "failed to serialize JavaScript value: reserved JSON object key"
        );
    }
}
