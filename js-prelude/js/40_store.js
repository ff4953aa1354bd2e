"use strict";
// store() and load(): values live in Rust as JSON text, so every load is a fresh deep copy.

function makeStoreHelpers(natives) {
  function store(key, value) {
    const name = StringCtor(key);
    const json = toJson(value);
    if (json === undefined) {
      throw `Unable to store ${JSONStringify(name)}. Only plain serializable objects can be stored.`;
    }
    natives.op_store(name, json);
  }

  function load(key) {
    const json = natives.op_load(StringCtor(key));
    return json === undefined ? undefined : JSONParse(json);
  }

  return { store, load };
}
