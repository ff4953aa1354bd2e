"use strict";
// setTimeout() / clearTimeout(). Rust owns the deadlines; JavaScript owns the callbacks.
// Timers never keep a cell alive: when the module settles, pending ones are dropped.

function makeTimerHelpers(natives) {
  const callbacks = new MapCtor();

  function setTimeout(callback, delay) {
    if (typeof callback !== "function") {
      throw "setTimeout expects a function callback";
    }
    let milliseconds = NumberCtor(delay);
    if (!NumberIsFinite(milliseconds) || milliseconds < 0) {
      milliseconds = 0;
    }
    const id = natives.op_set_timer(MathTrunc(milliseconds));
    if (id !== undefined) {
      ReflectApply(MapSet, callbacks, [id, callback]);
    }
    return id;
  }

  function clearTimeout(id) {
    if (id === undefined || id === null) {
      return undefined;
    }
    let number;
    try {
      number = NumberCtor(id);
    } catch {
      throw "clearTimeout expects a numeric timeout id";
    }
    if (!NumberIsFinite(number) || number <= 0) {
      return undefined;
    }
    ReflectApply(MapDelete, callbacks, [number]);
    natives.op_clear_timer(number);
    return undefined;
  }

  // Called by Rust when a deadline passes; an exception here fails the cell.
  function fireTimer(id) {
    const callback = ReflectApply(MapGet, callbacks, [id]);
    if (callback === undefined) {
      return;
    }
    ReflectApply(MapDelete, callbacks, [id]);
    ReflectApply(callback, undefined, []);
  }

  return { setTimeout, clearTimeout, fireTimer };
}
