//! The payload of a nested `tools.x(arg)` call (spec code-mode §5.2 step 4).

use codemode_bridge::ToolKind;
use serde_json::Value;

use super::messages;
use crate::tool::ToolPayload;

/// Builds the payload a nested call hands to the tool. Function tools take an object (no
/// argument means `{}`), freeform tools a string; anything else is refused with the message
/// the rejected promise carries.
pub fn build_nested_payload(
    kind: ToolKind,
    js_name: &str,
    input: Option<Value>,
) -> Result<ToolPayload, String> {
    match (kind, input) {
        (ToolKind::Function, None) => Ok(ToolPayload::Function {
            arguments: "{}".to_owned(),
        }),
        (ToolKind::Function, Some(value @ Value::Object(_))) => Ok(ToolPayload::Function {
            arguments: value.to_string(),
        }),
        (ToolKind::Function, Some(_)) => Err(messages::tool_expects_json_object(js_name)),
        (ToolKind::Freeform, Some(Value::String(input))) => Ok(ToolPayload::Custom { input }),
        (ToolKind::Freeform, _) => Err(messages::tool_expects_string(js_name)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn build_nested_payload_uses_function_kind() {
        assert_eq!(
            build_nested_payload(ToolKind::Function, "exec_command", None),
            Ok(ToolPayload::Function {
                arguments: "{}".to_owned()
            })
        );
        let ToolPayload::Function { arguments } = build_nested_payload(
            ToolKind::Function,
            "exec_command",
            Some(json!({"cmd": "ls", "n": [1]})),
        )
        .unwrap() else {
            panic!("not a function payload")
        };
        assert_eq!(
            serde_json::from_str::<Value>(&arguments).unwrap(),
            json!({"cmd": "ls", "n": [1]})
        );
        for bad in [json!("ls"), json!([1]), json!(null), json!(3)] {
            assert_eq!(
                build_nested_payload(ToolKind::Function, "exec_command", Some(bad)),
                Err("tool `exec_command` expects a JSON object for arguments".to_owned())
            );
        }
    }

    #[test]
    fn build_nested_payload_uses_freeform_kind() {
        assert_eq!(
            build_nested_payload(
                ToolKind::Freeform,
                "apply_patch",
                Some(json!("*** Begin Patch"))
            ),
            Ok(ToolPayload::Custom {
                input: "*** Begin Patch".to_owned()
            })
        );
        for bad in [None, Some(json!({"patch": ""})), Some(json!(1))] {
            assert_eq!(
                build_nested_payload(ToolKind::Freeform, "apply_patch", bad),
                Err("tool `apply_patch` expects a string input".to_owned())
            );
        }
    }
}
