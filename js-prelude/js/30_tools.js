"use strict";
// The global `tools` object and `ALL_TOOLS`. Each tool is called by its catalog index, so
// namespaced names resolve unambiguously; only the first argument crosses, as JSON text.

function makeTools(natives, definitions) {
  const tools = {};
  const allTools = [];
  for (let index = 0; index < definitions.length; index++) {
    const definition = definitions[index];
    const callIndex = index;
    const call = {
      [definition.name](input) {
        const json = input === undefined ? undefined : toJson(input);
        return natives.op_call_tool(callIndex, json);
      },
    }[definition.name];
    ObjectDefineProperty(tools, definition.name, {
      value: call,
      enumerable: true,
      writable: false,
      configurable: false,
    });
    allTools[index] = ObjectFreeze({ name: definition.name, description: definition.description });
  }
  return { tools: ObjectFreeze(tools), allTools: ObjectFreeze(allTools) };
}
