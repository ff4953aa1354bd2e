"use strict";
// Installs the globals of one cell. The snapshot holds this code already compiled; each
// cell calls the bootstrap once with its natives and its tool catalog (JSON), and the
// bootstrap removes itself before model code runs.

const REMOVED_GLOBALS = ["console", "Atomics", "SharedArrayBuffer", "WebAssembly"];

function bootstrap(natives, toolCatalogJson) {
  ReflectDeleteProperty(globalObject, "__codemode_bootstrap");
  for (let i = 0; i < REMOVED_GLOBALS.length; i++) {
    if (!ReflectDeleteProperty(globalObject, REMOVED_GLOBALS[i])) {
      throw `failed to remove ${REMOVED_GLOBALS[i]} from globalThis`;
    }
  }
  const output = makeOutputHelpers(natives);
  const catalog = makeTools(natives, JSONParse(toolCatalogJson));
  const storage = makeStoreHelpers(natives);
  const timers = makeTimerHelpers(natives);
  const globals = {
    tools: catalog.tools,
    ALL_TOOLS: catalog.allTools,
    text: output.text,
    image: output.image,
    generatedImage: output.generatedImage,
    notify: output.notify,
    store: storage.store,
    load: storage.load,
    setTimeout: timers.setTimeout,
    clearTimeout: timers.clearTimeout,
    yield_control() {
      natives.op_yield();
    },
    exit() {
      natives.op_exit();
    },
  };
  const names = ["tools", "ALL_TOOLS", "text", "image", "generatedImage", "notify", "store", "load",
    "setTimeout", "clearTimeout", "yield_control", "exit"];
  for (let i = 0; i < names.length; i++) {
    ObjectDefineProperty(globalObject, names[i], {
      value: globals[names[i]],
      writable: true,
      enumerable: false,
      configurable: true,
    });
  }
  return timers.fireTimer;
}

ObjectDefineProperty(globalObject, "__codemode_bootstrap", {
  value: bootstrap,
  writable: false,
  enumerable: false,
  configurable: true,
});
