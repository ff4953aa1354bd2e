//! The declarations are only useful if they are valid TypeScript: render a catalog, write it
//! with the shared MCP types and a program that uses it, and let `tsc --strict` judge.

use std::path::Path;
use std::process::Command;

use super::*;

/// A `tsc` to run: a local one on PATH, else `npx` fetching `typescript@5`; `None` (with the
/// reason) when neither node nor npm is available.
fn tsc_command() -> Result<Command, String> {
    if Command::new("tsc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return Ok(Command::new("tsc"));
    }
    if Command::new("npx")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        let mut command = Command::new("npx");
        command.args(["--yes", "-p", "typescript@5", "tsc"]);
        return Ok(command);
    }
    Err("neither `tsc` nor `npx` is on PATH".to_owned())
}

fn catalog() -> Vec<ToolDefinition> {
    let recursive = json!({
        "type": "object",
        "properties": { "clauses": { "type": "array", "items": { "$ref": "#/$defs/Clause" } } },
        "required": ["clauses"],
        "additionalProperties": false,
        "$defs": {
            "Clause": {
                "type": "object",
                "properties": {
                    "occur": { "enum": ["must", "should"] },
                    "query": { "$ref": "#/$defs/Query", "description": "Nested group." }
                },
                "required": ["occur", "query"],
                "additionalProperties": false
            },
            "Query": {
                "oneOf": [
                    { "type": "object", "properties": { "field": { "const": "A" } }, "required": ["field"] },
                    { "$ref": "#/$defs/Clause" }
                ]
            }
        }
    });
    vec![
        function_tool(
            "hidden_dynamic_tool",
            Some(
                json!({ "type": "object", "properties": { "city": { "type": "string" } }, "required": ["city"], "additionalProperties": false }),
            ),
            Some(
                json!({ "type": "object", "properties": { "ok": { "type": "boolean" } }, "required": ["ok"] }),
            ),
        ),
        function_tool(
            "weather_tool",
            Some(json!({
                "type": "object",
                "properties": {
                    "weather": { "type": "array", "description": "locations\nto look up", "items": { "type": "object", "properties": { "location": { "type": "string" } }, "required": ["location"] } },
                    "units": { "type": ["string", "null"], "enum": ["metric", "imperial", null] },
                    "my-flag": { "type": "boolean" },
                    "pair": { "type": "array", "prefixItems": [{ "type": "integer" }, { "type": "string" }] }
                },
                "required": ["weather"]
            })),
            Some(
                json!({ "type": "object", "properties": { "forecast": { "type": "string", "description": "human readable" } }, "required": ["forecast"] }),
            ),
        ),
        function_tool("search_tree", Some(recursive), None),
        ToolDefinition {
            name: "mcp__sample__search".to_owned(),
            tool_name: ToolName::namespaced("mcp__sample__", "search"),
            description: "Search".to_owned(),
            kind: ToolKind::Function,
            input_schema: Some(
                json!({ "type": "object", "properties": {}, "additionalProperties": false }),
            ),
            output_schema: Some(mcp_result_schema(json!({
                "type": "object",
                "properties": { "results": { "type": "array", "items": { "$ref": "#/definitions/Item" } } },
                "required": ["results"],
                "definitions": { "Item": { "type": "object", "properties": { "id": { "type": "string" } }, "required": ["id"] } }
            }))),
        },
        ToolDefinition {
            name: "mcp__sample__raw".to_owned(),
            tool_name: ToolName::namespaced("mcp__sample__", "raw"),
            description: "Raw".to_owned(),
            kind: ToolKind::Function,
            input_schema: Some(json!({ "type": "object" })),
            output_schema: Some(mcp_result_schema(json!(true))),
        },
        ToolDefinition {
            name: "apply_patch".to_owned(),
            tool_name: ToolName::plain("apply_patch"),
            description: "Patch".to_owned(),
            kind: ToolKind::Freeform,
            input_schema: None,
            output_schema: None,
        },
    ]
}

const PROGRAM: &str = r#"
async function main(): Promise<void> {
  const direct = await tools.hidden_dynamic_tool({ city: "Paris" });
  const ok: boolean = direct.ok;
  const weather = await tools.weather_tool({ weather: [{ location: "Oslo" }], units: null, "my-flag": true, pair: [1, "x"] });
  const forecast: string = weather.forecast;
  await tools.search_tree({ clauses: [{ occur: "must", query: { field: "A" } }] });
  const found = await tools.mcp__sample__search({});
  const id: string | undefined = found.structuredContent?.results[0]?.id;
  for (const block of found.content) {
    if (block.type === "text") { const text: string = block.text; void text; }
    if (block.type === "resource") { const uri: string = block.resource.uri; void uri; }
  }
  const raw = await tools.mcp__sample__raw({ anything: 1 });
  const failed: boolean | undefined = raw.isError;
  const patched: unknown = await tools.apply_patch("*** Begin Patch\n*** End Patch");
  // @ts-expect-error `city` is required
  await tools.hidden_dynamic_tool({});
  // @ts-expect-error `forecast` is a string
  const wrong: number = weather.forecast;
  // @ts-expect-error freeform tools take a string
  await tools.apply_patch({ patch: "" });
  // @ts-expect-error `occur` is a literal union
  await tools.search_tree({ clauses: [{ occur: "sometimes", query: { field: "A" } }] });
  void [ok, forecast, id, failed, patched, wrong];
}
void main;
"#;

fn write_program(dir: &Path) -> std::path::PathBuf {
    let members: Vec<String> = catalog().iter().map(tool_declaration).collect();
    let source = format!(
        "{SHARED_MCP_TYPES}\ndeclare const tools: {{\n{}\n}};\n{PROGRAM}",
        members.join("\n")
    );
    let path = dir.join("program.ts");
    std::fs::write(&path, source).unwrap();
    path
}

#[test]
fn declarations_and_shared_types_type_check_under_strict_tsc() {
    let mut tsc = match tsc_command() {
        Ok(command) => command,
        Err(reason) => {
            println!("skipping the tsc check: {reason}");
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let program = write_program(dir.path());
    let output = tsc
        .current_dir(dir.path())
        .args([
            "--noEmit", "--strict", "--target", "es2022", "--lib", "es2022",
        ])
        .arg(&program)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "tsc rejected the declarations:\n{}\n{}\n--- program ---\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
        std::fs::read_to_string(&program).unwrap()
    );
}
