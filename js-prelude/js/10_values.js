"use strict";
// Value conversion shared by the helpers (spec §4.3). Values cross into Rust as JSON text
// produced by V8's own JSON.stringify, so toJSON, getters, dropped undefined and NaN -> null
// behave exactly as in JavaScript. Conversion errors are rethrown as plain strings, as the
// reference engine does.

// JSON text of `value`, or undefined when it serializes to nothing (undefined, functions,
// symbols).
function toJson(value) {
  try {
    return JSONStringify(value);
  } catch (error) {
    throw errorText(error);
  }
}

// The text `text()` and `notify()` emit: primitives through String(), everything else
// through JSON.stringify, falling back to String() when that yields nothing.
function toText(value) {
  switch (typeof value) {
    case "undefined":
    case "boolean":
    case "number":
    case "bigint":
    case "string":
      return StringCtor(value);
    default:
      if (value === null) {
        return "null";
      }
  }
  const json = toJson(value);
  return json === undefined ? StringCtor(value) : json;
}
