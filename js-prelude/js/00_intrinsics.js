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

// The text of a caught JavaScript error, as helpers rethrow it: its stack when that is a
// string (it starts with "Name: message"), otherwise String(error).
function errorText(error) {
  if (error !== null && (typeof error === "object" || typeof error === "function")) {
    const stack = error.stack;
    if (typeof stack === "string") {
      return stack;
    }
  }
  return StringCtor(error);
}
