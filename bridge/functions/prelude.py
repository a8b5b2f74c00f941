"""The JavaScript run in every fresh isolate before any owner code: hardening, then the driver.

Hardening removes what the sandbox must not offer (timers, `console`, typed arrays and
`ArrayBuffer`, whose allocations escape the heap limit, shared memory, `Atomics`,
`WebAssembly`, weak references with their GC-timed callbacks, `eval`). String-to-code is
blocked by the engine flag as well; `Function` cannot be removed because every function's
prototype reaches it.

The driver is the message-passing bridge: `api.invoke` posts a request to an outbox and returns
a promise; Python reads the outbox with `__mineclaw.step()` and answers with
`__mineclaw.settle(...)`. Nothing here is trusted: owner code can tamper with the builtins the
driver uses, which can only break that owner's own workflow. Every rule (capabilities, limits,
shapes) is checked again in Python.
"""

from __future__ import annotations

# Globals that must not exist inside a Function. `var` bindings that V8 or mini-racer create
# as non-configurable are overwritten with undefined instead of deleted.
REMOVED_GLOBALS: tuple[str, ...] = (
    "eval",
    "console",
    "print",
    "load",
    "setTimeout",
    "clearTimeout",
    "setInterval",
    "clearInterval",
    "queueMicrotask",
    "__timer_manager",
    "ArrayBuffer",
    "SharedArrayBuffer",
    "DataView",
    "Atomics",
    "WebAssembly",
    "Int8Array",
    "Uint8Array",
    "Uint8ClampedArray",
    "Int16Array",
    "Uint16Array",
    "Int32Array",
    "Uint32Array",
    "Float16Array",
    "Float32Array",
    "Float64Array",
    "BigInt64Array",
    "BigUint64Array",
    "FinalizationRegistry",
    "WeakRef",
)

_HARDEN = """
(() => {
  "use strict";
  const g = globalThis;
  for (const name of %(removed)s) {
    try { delete g[name]; } catch (e) {}
    if (name in g) { try { g[name] = undefined; } catch (e) {} }
  }
})();
try { __TimerManager = undefined; } catch (e) {}
"""

_DRIVER = """
(() => {
  "use strict";
  const g = globalThis;
  const parse = JSON.parse, stringify = JSON.stringify;
  const P = Promise, Err = Error, apply = Reflect.apply, then = Promise.prototype.then;
  const freeze = Object.freeze, create = Object.create, keys = Object.keys;
  const Str = String, WSet = WeakSet;
  const wsAdd = WeakSet.prototype.add, wsHas = WeakSet.prototype.has;
  const apiErrors = new WSet();
  const pending = create(null);
  let outbox = create(null), outCount = 0, nextId = 1, posted = 0, dropped = 0;
  let config = null, done = false, result = null, failure = null;
  // mini-racer runs the microtask checkpoint after a task has already answered, so a step
  // evaluated right after start/settle could overtake the continuations it is meant to
  // report. Each start/settle queues a marker microtask; a step that runs before its marker
  // answers "pending", and one that runs after it knows the whole checkpoint has finished
  // (tasks never run inside a checkpoint).
  let generation = 0, markerSeen = 0;
  function snapshot() {
    const requests = [];
    for (let i = 0; i < outCount; i++) requests[i] = outbox[i];
    outbox = create(null); outCount = 0;
    const state = {pending: false, requests, dropped, done, result, failure};
    dropped = 0;
    return stringify(state);
  }
  function mark() {
    const current = ++generation;
    apply(then, new P((resolve) => resolve()), [() => { markerSeen = current; }]);
  }

  function deepFreeze(value) {
    if (value !== null && typeof value === "object") {
      for (const key of keys(value)) deepFreeze(value[key]);
      freeze(value);
    }
    return value;
  }
  function describe(error) {
    let text;
    try { text = Str(error !== null && typeof error === "object" && error.stack || error); }
    catch (e) { text = "uncaught exception (not printable)"; }
    return text.length > 1000 ? text.slice(0, 1000) + "..." : text;
  }
  function fail(error) {
    if (done) return;
    done = true;
    const known = error !== null && typeof error === "object" && apply(wsHas, apiErrors, [error]);
    // An uncaught ApiError's stack would only show driver internals.
    failure = known ? {code: error.code, message: error.message}
                    : {code: "script_error", message: describe(error)};
  }
  function finish(value) {
    if (done) return;
    let text;
    try { text = stringify(value); } catch (e) {
      done = true;
      failure = {code: "invalid_result", message: "result is not JSON: " + describe(e)};
      return;
    }
    done = true;
    if (typeof text !== "string") {
      failure = {code: "invalid_result", message: "onCall returned nothing JSON can hold"};
    } else if (text.length > config.resultChars) {
      failure = {code: "result_too_large", message: "result has " + text.length + " characters"};
    } else {
      result = text;
    }
  }
  function invoke(request) {
    const id = nextId++;
    return new P((resolve, reject) => {
      if (posted >= config.maxPosted) { dropped++; reject(apiError("operation_limit",
        "too many api.invoke calls")); return; }
      let text = null, problem = null;
      // The issue's form is invoke({action, input}); the architecture note's invoke(action,
      // input) is accepted as a spelling of the same request.
      if (arguments.length === 2 && typeof request === "string") {
        request = {action: request, input: arguments[1]};
      } else if (arguments.length !== 1) {
        problem = "api.invoke takes one object: {action, input}";
      }
      if (problem === null) {
        try { text = stringify(request); } catch (e) { problem = "request is not JSON"; }
        if (problem === null && typeof text !== "string") problem = "request is not JSON";
        if (problem === null && text.length > config.requestChars) {
          problem = "request has " + text.length + " characters"; text = null;
        }
      }
      pending[id] = [resolve, reject];
      outbox[outCount++] = [id, text, problem];
      posted++;
    });
  }
  function apiError(code, message) {
    const error = new Err(code + ": " + message);
    error.name = "ApiError";
    error.code = code;
    apply(wsAdd, apiErrors, [error]);
    return freeze(error);
  }
  const api = freeze(create(null, {invoke: {value: invoke, enumerable: true}}));
  const driver = freeze({
    start(contextText, configText) {
      config = freeze(parse(configText));
      const ctx = deepFreeze(parse(contextText));
      // By name, not through globalThis: a top-level `const onCall` is a lexical binding.
      if (typeof onCall !== "function") {
        done = true;
        failure = {code: "script_error", message: "on_call does not define onCall(ctx, api)"};
        return;
      }
      let promise;
      try { promise = onCall(ctx, api); } catch (e) { fail(e); mark(); return; }
      apply(then, P.resolve(promise), [finish, fail]);
      // What onCall posted before its first await is reported by the step that follows.
      mark();
    },
    settle(id, ok, payloadText) {
      const entry = pending[id];
      if (entry === undefined) return;
      delete pending[id];
      const payload = parse(payloadText);
      if (ok) entry[0](payload); else entry[1](apiError(payload.code, payload.message));
      mark();
    },
    step() {
      if (markerSeen !== generation) return '{"pending":true}';
      return snapshot();
    },
  });
  Object.defineProperty(g, "__mineclaw", {value: driver, writable: false, configurable: false});
})();
"""

PRELUDE: str = _HARDEN % {"removed": repr(list(REMOVED_GLOBALS))} + _DRIVER
"""Evaluated once in each fresh isolate, before it is handed to an invocation."""
