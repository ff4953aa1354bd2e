"use strict";
// Everything the bridge relies on is captured here, before model code runs. Later prelude
// files use only these copies, so a script that overwrites JSON.stringify, Map or
// Reflect.apply cannot subvert tool calls, output or the store.

const JSONStringify = JSON.stringify;
const JSONParse = JSON.parse;
const StringCtor = String;
const NumberCtor = Number;
const NumberIsFinite = Number.isFinite;
const MathTrunc = Math.trunc;
const ArrayIsArray = Array.isArray;
const ObjectFreeze = Object.freeze;
const ObjectDefineProperty = Object.defineProperty;
const ReflectApply = Reflect.apply;
const ReflectDeleteProperty = Reflect.deleteProperty;
const StringTrim = String.prototype.trim;
const StringToLowerCase = String.prototype.toLowerCase;
const StringStartsWith = String.prototype.startsWith;
const MapCtor = Map;
const MapGet = Map.prototype.get;
const MapSet = Map.prototype.set;
const MapDelete = Map.prototype.delete;
const globalObject = globalThis;

function trim(text) {
  return ReflectApply(StringTrim, text, []);
}

function lowerCase(text) {
  return ReflectApply(StringToLowerCase, text, []);
}

function startsWith(text, prefix) {
  return ReflectApply(StringStartsWith, text, [prefix]);
}

const StringSplit = String.prototype.split;
const ArrayJoin = Array.prototype.join;
const ArrayPush = Array.prototype.push;
const StringIncludes = String.prototype.includes;

// The text of a caught JavaScript error, as helpers rethrow it: its stack when that is a
// string (it starts with "Name: message"), otherwise String(error). Stack frames inside the
// prelude or V8 builtins are dropped: the model can act only on frames in its own code.
function errorText(error) {
  if (error !== null && (typeof error === "object" || typeof error === "function")) {
    const stack = error.stack;
    if (typeof stack === "string") {
      const lines = ReflectApply(StringSplit, stack, ["\n"]);
      const kept = [];
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i];
        const isFrame = startsWith(line, "    at ");
        if (!isFrame || ReflectApply(StringIncludes, line, ["exec_main.mjs"])) {
          ReflectApply(ArrayPush, kept, [line]);
        }
      }
      return ReflectApply(ArrayJoin, kept, ["\n"]);
    }
  }
  return StringCtor(error);
}
