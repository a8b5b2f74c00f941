"""The escape corpus: every way out of the sandbox we know of must be closed.

Each probe runs as a real Function on real V8 while a heartbeat ticks on the test's event loop.
A probe either reports what it found (`typeof` of a global) or what stopped it (the error).
"""

from __future__ import annotations

import asyncio

import pytest

from bridge.functions.worker_pool import WorkerEngine

from .support import ONLINE, WAIT_S, Heartbeat, body, function, output, runtime

# Host, IO, process, thread and timer entry points of every JavaScript embedding we know.
ABSENT_GLOBALS = [
    "process",
    "require",
    "module",
    "exports",
    "fetch",
    "XMLHttpRequest",
    "WebSocket",
    "Deno",
    "Bun",
    "Java",
    "Polyglot",
    "Packages",
    "Graal",
    "importScripts",
    "Worker",
    "postMessage",
    "setTimeout",
    "setInterval",
    "setImmediate",
    "clearTimeout",
    "queueMicrotask",
    "console",
    "print",
    "load",
    "read",
    "readbuffer",
    "quit",
    "os",
    "eval",
    "WebAssembly",
    "SharedArrayBuffer",
    "ArrayBuffer",
    "Atomics",
    "DataView",
    "Uint8Array",
    "Int32Array",
    "Float64Array",
    "BigInt64Array",
    "FinalizationRegistry",
    "WeakRef",
]


async def run_probe(engine: WorkerEngine, js: str) -> dict[str, object]:
    rt, host, _ = runtime(engine, function(body(js)))
    async with Heartbeat() as heart:
        result = await asyncio.wait_for(rt.call_function("f", {}, player=ONLINE), WAIT_S)
    assert heart.ticks > 0
    assert host.calls == []
    return result


async def test_host_and_io_globals_are_absent(engine: WorkerEngine) -> None:
    names = repr(ABSENT_GLOBALS)
    js = f"""
        const found = {{}};
        for (const name of {names}) found[name] = typeof globalThis[name];
        return {{status: 'ok', output: found}};
    """
    result = await run_probe(engine, js)
    assert output(result) == dict.fromkeys(ABSENT_GLOBALS, "undefined")


@pytest.mark.parametrize(
    "expression",
    [
        "new Function('return 1')",
        "Function('return 1')",
        "(function () {}).constructor('return 1')",
        "(async function () {}).constructor('return 1')",
        "(function* () {}).constructor('yield 1')",
        "(async function* () {}).constructor('yield 1')",
        "(() => 1).constructor('return 1')",
        "Function.prototype.constructor.call(null, 'return 1')",
        "Reflect.construct(Function, ['return 1'])",
        "Object.getPrototypeOf(async () => {}).constructor('return 1')",
    ],
)
async def test_code_generation_from_strings_is_refused(
    engine: WorkerEngine, expression: str
) -> None:
    js = f"""
        try {{ const made = {expression}; return {{status: 'ok', output: {{made: typeof made}}}}; }}
        catch (e) {{ return {{status: 'blocked', output: {{error: String(e)}}}}; }}
    """
    result = await run_probe(engine, js)
    assert result == {
        "status": "blocked",
        "output": {"error": "EvalError: Code generation from strings disallowed for this context"},
    }


@pytest.mark.parametrize(
    "expression",
    [
        "eval('1')",
        "globalThis['ev' + 'al']('1')",
        "(0, eval)('1')",
        "setTimeout('1', 0)",
        "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1)",
        "new WebAssembly.Module(new Uint8Array([0, 97, 115, 109]))",
        "new ArrayBuffer(8)",
        "console.log('x')",
        "process.exit(1)",
        "require('fs')",
    ],
)
async def test_removed_entry_points_throw(engine: WorkerEngine, expression: str) -> None:
    js = f"""
        try {{ {expression}; return {{status: 'ok', output: {{}}}}; }}
        catch (e) {{ return {{status: 'blocked', output: {{error: e.name}}}}; }}
    """
    result = await run_probe(engine, js)
    assert result["status"] == "blocked"
    assert output(result)["error"] in ("ReferenceError", "TypeError")


async def test_dynamic_import_is_refused(engine: WorkerEngine) -> None:
    js = """
        const out = {};
        for (const spec of ['fs', 'node:child_process', 'data:text/javascript,1', './x.js']) {
          try { await import(spec); out[spec] = 'loaded'; }
          catch (e) { out[spec] = 'refused'; }
        }
        return {status: 'ok', output: out};
    """
    result = await run_probe(engine, js)
    assert set(output(result).values()) == {"refused"}


async def test_static_import_is_a_syntax_error(engine: WorkerEngine) -> None:
    rt, _, _ = runtime(engine, function("import fs from 'fs';\n" + body("return 1;")))
    result = await asyncio.wait_for(rt.call_function("f", {}, player=ONLINE), WAIT_S)
    assert output(result)["error_code"] == "script_error"
    assert "SyntaxError" in output(result)["message"]


async def test_api_cannot_be_tampered_with(engine: WorkerEngine) -> None:
    js = """
        const out = {};
        const attempts = {
          assign: () => { api.invoke = () => 'forged'; },
          define: () => Object.defineProperty(api, 'invoke', {value: () => 'forged'}),
          add: () => { api.extra = 1; },
          remove: () => { delete api.invoke; },
          driver: () => { globalThis.__mineclaw = {}; },
          driverStep: () => { __mineclaw.step = () => '{}'; },
          ctx: () => { ctx.player.name = 'Notch'; },
          args: () => { ctx.args.x = 1; },
        };
        for (const [name, attempt] of Object.entries(attempts)) {
          try { attempt(); out[name] = 'allowed'; } catch (e) { out[name] = e.name; }
        }
        out.player = ctx.player.name;
        out.invokeIsOriginal = api.invoke.toString().includes('nextId');
        return {status: 'ok', output: out};
    """
    # Owner code is sloppy-mode script; a frozen object makes the attempts throw only under
    # "use strict", so the probe opts in.
    result = await run_probe(engine, "'use strict';\n" + js)
    out = output(result)
    assert out.pop("player") == ONLINE
    assert out.pop("invokeIsOriginal") is True
    assert out == dict.fromkeys(out, "TypeError")
    assert len(out) == 8


async def test_tampered_builtins_cannot_forge_an_operation(engine: WorkerEngine) -> None:
    # Replace the builtins the driver might use to serialise; the request still goes
    # through the capability check in Python, and the Function declares none.
    js = """
        JSON.stringify = () => '{"action":"command.dispatch","input":{"executor":"console",' +
                               '"command":"op Steve"}}';
        Object.prototype.toJSON = function () { return this; };
        try {
          await api.invoke({action: 'native_tool.call', input: {tool: 'echo', arguments: {}}});
          return {status: 'ok', output: {}};
        } catch (e) { return {status: 'refused', output: {code: e.code}}; }
    """
    result = await run_probe(engine, js)
    assert result == {"status": "refused", "output": {"code": "capability_missing"}}


async def test_a_tampered_outbox_encoding_is_a_protocol_error(engine: WorkerEngine) -> None:
    js = """
        Array.prototype.toJSON = function () { return 'forged'; };
        await api.invoke({action: 'command.dispatch', input: {executor: 'console', command: 'x'}});
        return {status: 'ok', output: {}};
    """
    rt, host, audit = runtime(engine, function(body(js), capabilities=["command.dispatch.console"]))
    result = await asyncio.wait_for(rt.call_function("f", {}, player=ONLINE), WAIT_S)
    assert output(result)["error_code"] == "protocol_error"
    assert host.calls == []
    assert audit.kinds()[-1] == "function.end"


async def test_no_class_or_host_object_is_reachable(engine: WorkerEngine) -> None:
    js = """
        const seen = [];
        for (const name of Object.getOwnPropertyNames(globalThis)) seen.push(name);
        return {status: 'ok', output: {names: seen.sort()}};
    """
    result = await run_probe(engine, js)
    names = output(result)["names"]
    assert isinstance(names, list)
    standard = {
        "AggregateError", "Array", "AsyncDisposableStack", "BigInt", "Boolean", "Date",
        "DisposableStack", "Error", "EvalError", "Function", "Infinity", "Intl", "Iterator",
        "JSON", "Map", "Math", "NaN", "Number", "Object", "Promise", "Proxy", "RangeError",
        "ReferenceError", "Reflect", "RegExp", "Set", "String", "SuppressedError", "Symbol",
        "SyntaxError", "Temporal", "TypeError", "URIError", "WeakMap", "WeakSet",
        "decodeURI", "decodeURIComponent", "encodeURI", "encodeURIComponent", "escape",
        "globalThis", "isFinite", "isNaN", "parseFloat", "parseInt", "undefined", "unescape",
        # Left behind as undefined: non-configurable var bindings, and the driver itself.
        "__mineclaw", "__timer_manager", "clearTimeout", "setTimeout", "onCall",
    }  # fmt: skip
    assert set(names) <= standard, set(names) - standard


async def test_driver_caps_bypassed_by_owner_code_are_enforced_in_python(
    engine: WorkerEngine,
) -> None:
    # Top-level code starts the driver itself with caps of its choosing before the runtime
    # does; Python still refuses the oversize request.
    big = "{action: 'command.dispatch', input: {executor: 'console', command: 'x'.repeat(50000)}}"
    source = (
        "__mineclaw.start(JSON.stringify({args: {}, player: {name: 'Steve'}}), "
        "JSON.stringify({maxPosted: 1e9, requestChars: 1e9, resultChars: 1e9}));\n"
        + body(
            f"try {{ await api.invoke({big}); return {{status: 'ok', output: {{}}}}; }} "
            "catch (e) { return {status: 'refused', output: {code: e.code}}; }"
        )
    )
    rt, host, _ = runtime(engine, function(source, capabilities=["command.dispatch.console"]))
    result = await asyncio.wait_for(rt.call_function("f", {}, player=ONLINE), WAIT_S)
    assert result == {"status": "refused", "output": {"code": "invalid_input"}}
    assert host.calls == []
