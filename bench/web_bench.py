"""web_fetch's cost: fetch + extraction against plain httpx + the same extractor, and the
shield's cost per connection.

Run: ``python -m bench.web_bench``. A page server on loopback serves the saved pages of
``tests/web/pages``. Each round fetches every page twice, in alternating order: once through
``WebFetcher`` (shield, connector, streamed read, charset, extraction; the name resolves to a
public address through an in-process resolver and the connection is carried to loopback, as in
the tests) and once with a plain ``httpx.AsyncClient`` reading the whole body and handing its
text to the same extractor. Both open a fresh connection per fetch, as ``web_fetch`` does,
and both keep one TLS context.
Prints p50 and p99 of each and the p50 ratio (goal <= 1.2x), then the shield's own work per
connection (URL check, one lookup answered at once, every address checked; goal < 100 us).

Then a hostile page beside a normal one: the one-row table of 1 MB that trafilatura needs
minutes for, fetched with an 8 s deadline (goal: it ends at its deadline, with the plain-text
fallback). Last, what six of them at once do to the bridge's own work: a witness player's chat
verdict (``AppHandler.on_chat`` of a real ``Runtime``, one every 50 ms, timed from the moment it
was due, so a stalled event loop counts) and a lease renewal (``ServerLeases.poll`` on a
PostgreSQL server of its own) are timed idle, then while six hostile pages are fetched as a
turn's tool calls are (``web_fetch`` through the tool invoker: the result redacted, quoted
between markers, audited by the runtime's audit writer). The witness is running before the six
start, so their start counts; their pages come from a server in a process of its own (a real
site is not in the bridge: on the bridge's loop its 1 MB answers were the bench's own load),
run at the machine's lowest priority (Linux's idle class, niceness 19): it stands for a remote
machine, which does not take the bridge's CPUs; the bridge's side of the six (reading the
bodies, handing them to the workers, the results' redaction and audit) keeps its priority.
Goals: verdict p99 <= 1.5x idle, no renewal later than its deadline (3 s), this process's
memory grows by less than 100 MB (the extraction workers are other processes, limited to 1 GiB
each; their peak is printed too). The event loop's steps are timed too, in the loop thread's
CPU time (what other processes on the machine do does not count in it): the longest step and
the loop's CPU per second, idle and hostile, and each verdict's wait counted in the CPU time of
the loop's steps that ran while it waited. On a machine shared with other work, ``chrt -r 1
python -m bench.web_bench --hostile --rounds 4`` runs the bench's processes in the round-robin
class ahead of that work, as a quiet machine would (the extraction workers and the page server
still put themselves in the idle class). ``--quick`` skips the hostile part;
``--hostile`` runs only it; ``--rounds N`` measures the witness N times (idle, then hostile,
each round) and prints the median of the rounds' p99 ratios too (one round's p99 is a handful
of samples), and the p99 of every round's verdicts together.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import time
from asyncio import events
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from ipaddress import ip_address
from pathlib import Path
from typing import Any

import httpcore
import httpx
import yaml

from bridge.app.chat.handler import AppHandler
from bridge.app.network.server_leases import DEADLINE_S, LossCause, ServerLeases
from bridge.app.wiring.runtime import Runtime
from bridge.control import init_config_dir
from bridge.control.defaults import __file__ as defaults_init
from bridge.control.tools_file import ToolsFile
from bridge.link.messages import ChatRequest, PlayerRef
from bridge.tools.invoke import Cooldowns, ToolInvoker
from bridge.tools.registry import CallContext, ToolRegistry
from bridge.tools.web_tools import WebTools
from bridge.web.connector import Dialer, direct_dialer
from bridge.web.content import MediaType, decode, text_kind
from bridge.web.extract import extract_html
from bridge.web.fetch import FetchSettings, WebFetcher
from bridge.web.ranges import IPAddress
from bridge.web.shield import ShieldPolicy

PAGES = Path(__file__).resolve().parent.parent / "tests" / "web" / "pages"
PUBLIC = "93.184.216.34"
ROUNDS = 40
SHIELD_CHECKS = 20_000
GOAL_RATIO = 1.2
GOAL_SHIELD_US = 100.0
HOSTILE_BYTES = 1_000_000
HOSTILE_DEADLINE_S = 8.0
HOSTILE_AT_ONCE = 6
VERDICT_EVERY_S = 0.05
RENEW_EVERY_S = 0.5
IDLE_S = 8.0
GOAL_VERDICT_RATIO = 1.5
GOAL_MEMORY_MB = 100.0
WITNESS = PlayerRef(uuid="0b6a1c9e-4444-4c6a-9e2f-1a2b3c4d5e6f", name="Witness")


def one_row_table(size: int) -> bytes:
    """The shape trafilatura is worse than linear on: one table row of ``size`` bytes."""
    cells = "<td>cell</td>" * (size // 13)
    return f"<html><head><title>Table</title></head><body><table><tr>{cells}</tr></table>".encode()


class PageServer:
    """HTTP/1.1 on loopback: each saved page by its file name, keep-alive."""

    def __init__(self, pages: dict[str, bytes]) -> None:
        self.pages = pages
        self.port = 0
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._handlers):  # handlers of idle keep-alive connections
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                path = head.split(b" ", 2)[1].decode().lstrip("/")
                body = self.pages.get(path, b"")
                status = b"200 OK" if path in self.pages else b"404 Not Found"
                writer.write(
                    b"HTTP/1.1 %s\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s"
                    % (status, len(body), body)
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except asyncio.CancelledError:
            # Only stop() cancels a handler; ending normally keeps asyncio's stream callback
            # (which reads the task's result) from logging the cancellation as an error.
            pass
        finally:
            self._handlers.discard(task)
            writer.close()


def hostile_site_pages() -> dict[str, bytes]:
    pages = {p.name: p.read_bytes() for p in sorted(PAGES.glob("*.html"))}
    pages["table.html"] = one_row_table(HOSTILE_BYTES)
    return pages


async def _serve_pages() -> None:
    """The child's side of ``PageProcess``: serve, print the port, stop when stdin closes.

    The site stands for a remote machine: on the bench's machine it would share the bridge's
    CPUs at the bridge's own priority (six 1 MB answers at once), which no site on the Internet
    does; at that priority the witness's p99 during the six was 1.13x idle over four rounds on
    a quiet machine (one round 3.45x), at this one 1.06x. So it runs at the lowest priority
    (Linux's idle scheduling class, niceness 19; it stays in the bench's session, and so in its
    scheduling group): it sends when the bridge does not want the CPU. The bridge's side,
    reading the six bodies, keeps its own priority."""
    os.setpriority(os.PRIO_PROCESS, 0, 19)
    with contextlib.suppress(AttributeError, OSError):  # the class is Linux's
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    server = PageServer(hostile_site_pages())
    await server.start()
    print(server.port, flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await server.stop()


@contextmanager
def page_process() -> Iterator[int]:
    """``PageServer`` with the hostile site in a process of its own; yields its port."""
    child = subprocess.Popen(
        [sys.executable, "-m", "bench.web_bench", "--serve-pages"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        yield int(child.stdout.readline())
    finally:
        child.stdin.close()
        child.wait(10)
        child.stdout.close()


class LoopSteps:
    """Every step the event loop runs, timed in the loop thread's CPU time while ``on``."""

    def __init__(self) -> None:
        self.longest = 0.0
        self.longest_what = ""
        self.cpu = 0.0
        self.starts: list[float] = []
        self.ends: list[float] = []
        self.cpus: list[float] = []
        """Each step's start and end (the loop's clock) and CPU time, in the order run."""
        self._since = 0.0
        self._on = False

    @contextmanager
    def installed(self) -> Iterator[LoopSteps]:
        original = events.Handle._run
        steps = self

        def timed(handle: events.Handle) -> None:
            if not steps._on:
                return original(handle)
            began, start = time.monotonic(), time.thread_time()
            try:
                return original(handle)
            finally:
                took = time.thread_time() - start
                steps.cpu += took
                steps.starts.append(began)
                steps.ends.append(time.monotonic())
                steps.cpus.append(took)
                if took > steps.longest:
                    steps.longest, steps.longest_what = took, _step_name(handle)

        setattr(events.Handle, "_run", timed)  # noqa: B010 (a bench's probe, undone below)
        try:
            yield self
        finally:
            setattr(events.Handle, "_run", original)  # noqa: B010

    def start(self) -> None:
        self.longest, self.longest_what, self.cpu = 0.0, "", 0.0
        self.starts, self.ends, self.cpus = [], [], []
        self._since = time.perf_counter()
        self._on = True

    def stop(self) -> tuple[float, str, float]:
        """(longest step, what it was, the loop's CPU per second of the window)."""
        self._on = False
        return self.longest, self.longest_what, self.cpu / (time.perf_counter() - self._since)

    def cpu_between(self, spans: Sequence[tuple[float, float]]) -> list[float]:
        """For each ``(due, done)`` (the loop's clock), the CPU time of the loop's steps that
        ran in it: what a verdict would wait on a machine with nothing else running (the step
        already running when it fell due counted whole)."""
        waited = []
        for due, done in spans:
            first = bisect.bisect_right(self.ends, due)
            last = bisect.bisect_left(self.starts, done)
            waited.append(sum(self.cpus[first:last]))
        return waited


def _step_name(handle: events.Handle) -> str:
    """The task a step ran and where it stopped (read after the step)."""
    callback = getattr(handle, "_callback", None)
    task = getattr(callback, "__self__", None)
    if isinstance(task, asyncio.Task):
        coro: Any = task.get_coro()
        where = [coro.__qualname__]
        while coro is not None and getattr(coro, "cr_frame", None) is not None:
            where.append(coro.cr_frame.f_code.co_name)
            coro = coro.cr_await
        return " > ".join(where[-3:])
    return str(getattr(callback, "__qualname__", repr(callback)))[:60]


async def _public(host: str, port: int) -> list[str]:
    return [PUBLIC]


def _to_loopback(site_port: int) -> Dialer:
    async def dial(
        address: IPAddress, port: int, timeout: float | None
    ) -> httpcore.AsyncNetworkStream:
        return await direct_dialer(ip_address("127.0.0.1"), site_port, timeout)

    return dial


_PLAIN_TLS = httpx.create_ssl_context()
"""Made once, as web_fetch's is: a client made per call would load the CA bundle each time."""


async def plain(url: str) -> str:
    async with httpx.AsyncClient(trust_env=False, verify=_PLAIN_TLS) as client:
        response = await client.get(url)
        media = MediaType.parse(response.headers.get("content-type"))
        text = decode(response.content, media, text_kind(media)).text
        extracted = await asyncio.to_thread(extract_html, text, url)
        return extracted.text


def _p(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


async def fetch_ratio() -> tuple[float, float, float, float]:
    pages = {p.name: p.read_bytes() for p in sorted(PAGES.glob("*.html"))}
    server = PageServer(pages)
    await server.start()
    dialer = _to_loopback(server.port)
    fetcher = WebFetcher(FetchSettings(), resolver=_public, dialer=dialer)
    ours: list[float] = []
    theirs: list[float] = []
    try:
        for name in pages:  # warm both paths (imports, the extractor's first call)
            await fetcher.fetch(f"http://wiki.example/{name}")
            await plain(f"http://127.0.0.1:{server.port}/{name}")
        clock = time.perf_counter
        for index in range(ROUNDS):
            for name in pages:
                order = (0, 1) if index % 2 == 0 else (1, 0)
                for which in order:
                    start = clock()
                    if which == 0:
                        await fetcher.fetch(f"http://wiki.example/{name}")
                        ours.append(clock() - start)
                    else:
                        await plain(f"http://127.0.0.1:{server.port}/{name}")
                        theirs.append(clock() - start)
    finally:
        await server.stop()
    return _p(ours, 0.5), _p(ours, 0.99), _p(theirs, 0.5), _p(theirs, 0.99)


async def shield_cost() -> tuple[float, float]:
    """Per connection: the URL check plus ``admit`` (one lookup answered at once, two
    addresses, both checked against the table)."""
    policy = ShieldPolicy()

    async def resolver(host: str, port: int) -> list[str]:
        return [PUBLIC, "2606:2800:220:1:248:1893:25c8:1946"]

    samples: list[float] = []
    clock = time.perf_counter_ns
    gc.disable()
    try:
        for _ in range(SHIELD_CHECKS):
            start = clock()
            checked = policy.check_url("https://wiki.example/Crafting_Table?section=2")
            await policy.admit(checked.host.name, checked.port, resolver)
            samples.append((clock() - start) / 1000)
    finally:
        gc.enable()
    return _p(samples, 0.5), _p(samples, 0.99)


def _rss_mb(pid: int | str = "self") -> float:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _workers() -> list[int]:
    from bridge.web.extraction_pool import shared_pool

    return shared_pool().worker_pids()


async def hostile_rows(fetcher: WebFetcher) -> bool:
    """A normal page and the hostile one, one after the other: time and extractor."""
    ok = True
    for name, deadline in (("wiki_article.html", None), ("table.html", HOSTILE_DEADLINE_S)):
        start = time.perf_counter()
        page = await fetcher.fetch(f"http://wiki.example/{name}")
        took = time.perf_counter() - start
        what = "normal page" if deadline is None else "hostile page (1 MB one-row table)"
        print(f"{what:<36} {took:7.2f} s  extractor {page.extractor}")
        if deadline is not None:
            ended = took <= deadline + 0.5 and page.extractor == "plain"
            verdict = "ok" if ended else "over the goal"
            print(f"  ends at its deadline ({deadline:g} s, plain text back): {verdict}")
            ok = ok and ended
    return ok


class Witness:
    """A player's chat verdicts and a lease renewal, timed from when each was due."""

    def __init__(self, handler: AppHandler, leases: ServerLeases) -> None:
        self.handler = handler
        self.leases = leases
        self.verdicts: list[float] = []
        self.spans: list[tuple[float, float]] = []
        self.renewals: list[float] = []
        self.peak_rss = 0.0
        self.peak_workers = 0.0

    async def verdicts_for(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time()
        end = due + seconds
        number = 0
        while due < end:
            due += VERDICT_EVERY_S
            await asyncio.sleep(max(0.0, due - loop.time()))
            number += 1
            chat = ChatRequest(
                player=WITNESS, granted=["mineclaw.command.chat"], text=f"hi {number}"
            )
            await self.handler.on_chat(chat)
            self.verdicts.append(loop.time() - due)
            self.spans.append((due, loop.time()))
            self.peak_rss = max(self.peak_rss, _rss_mb())

    async def renewals_for(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time()
        end = due + seconds
        while due < end:
            due += RENEW_EVERY_S
            await asyncio.sleep(max(0.0, due - loop.time()))
            await self.leases.poll()
            self.renewals.append(loop.time() - due)
            self.peak_workers = max(self.peak_workers, sum(_rss_mb(p) for p in _workers()))


async def _lost(server_id: str, cause: LossCause) -> None:
    print(f"lease of {server_id} lost ({cause}) during the bench", file=sys.stderr)


async def under_hostile_pages(fetcher: WebFetcher) -> bool:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from tests.postgres_server import start_postgres

    postgres = start_postgres()
    try:
        database = postgres.create_database("webbench")
        leases = ServerLeases(
            postgres.dsn(database),
            password=postgres.password,
            servers=lambda: ["default"],
            on_lost=_lost,
            application_name="web-bench",
        )
        with tempfile.TemporaryDirectory(prefix="web-bench-") as tmp:
            config = Path(tmp) / "config"
            init_config_dir(config)
            runtime = Runtime.open(config)
            await leases.start()
            try:
                handler = AppHandler(runtime)
                invoker = _web_fetch_as_a_turn_calls_it(fetcher, runtime)
                pooled: tuple[list[float], list[float]] = ([], [])
                with LoopSteps().installed() as steps:
                    results = [
                        await _measure(invoker, Witness(handler, leases), steps, pooled)
                        for _ in range(_rounds())
                    ]
                if len(results) > 1:
                    for index, clock in enumerate(("wall clock", "loop's CPU time")):
                        ratios = sorted(pair[index] for _, pair in results)
                        print(
                            f"verdict p99 ratio over {len(ratios)} rounds ({clock}): median "
                            f"{statistics.median(ratios):.2f}x, min {ratios[0]:.2f}x, max "
                            f"{ratios[-1]:.2f}x (goal <= {GOAL_VERDICT_RATIO}x)"
                        )
                    idle, hostile = (_p(samples, 0.99) for samples in pooled)
                    print(
                        f"verdict p99 of every round's samples together (wall clock): idle "
                        f"{idle * 1000:.2f} ms ({len(pooled[0])}), hostile {hostile * 1000:.2f} ms "
                        f"({len(pooled[1])}), ratio {hostile / max(idle, 1e-6):.2f}x"
                    )
                return all(ok for ok, _ in results)
            finally:
                await leases.close()
                await runtime.aclose()
    finally:
        postgres.remove()


def _web_fetch_as_a_turn_calls_it(fetcher: WebFetcher, runtime: Runtime) -> ToolInvoker:
    """``web_fetch`` bound as the served tools bind it: the runtime's redaction and audit."""
    redactor = runtime.plane.redactor
    tools = WebTools(fetcher, None, audit=runtime.audit, redactor=redactor)
    defaults = yaml.safe_load((Path(defaults_init).parent / "tools.yml").read_text())
    registry = ToolRegistry.from_tools_file(ToolsFile.model_validate(defaults), tools.handlers())
    return ToolInvoker(
        registry.for_player(frozenset()),
        cooldowns=Cooldowns(cooldown_ms=0),
        redactor=redactor,
        audit=runtime.audit,
    )


def _rounds() -> int:
    if "--rounds" in sys.argv:
        return max(1, int(sys.argv[sys.argv.index("--rounds") + 1]))
    return 1


async def _measure(
    invoker: ToolInvoker,
    witness: Witness,
    steps: LoopSteps,
    pooled: tuple[list[float], list[float]],
) -> tuple[bool, tuple[float, float]]:
    """One round: whether it met the goals, and its verdict p99 ratios (wall clock, and the
    loop's CPU time); its verdicts are added to ``pooled`` (idle, hostile): a round's p99 is
    its second-worst verdict or so, every round's together a steadier figure."""
    idle = Witness(witness.handler, witness.leases)
    rss_before = _rss_mb()
    steps.start()
    await asyncio.gather(idle.verdicts_for(IDLE_S), idle.renewals_for(IDLE_S))
    idle_step, _, idle_cpu = steps.stop()
    idle_waits = steps.cpu_between(idle.spans)
    steps.start()
    began = asyncio.get_running_loop().time()
    # The witness first: its clock runs when the six start, so their start counts too.
    watched = asyncio.gather(
        witness.verdicts_for(HOSTILE_DEADLINE_S + 1), witness.renewals_for(HOSTILE_DEADLINE_S + 1)
    )
    hostile = asyncio.gather(*(_timed(invoker, n) for n in range(HOSTILE_AT_ONCE)))
    ends, _ = await asyncio.gather(hostile, watched)
    hostile_step, what, hostile_cpu = steps.stop()
    hostile_waits = steps.cpu_between(witness.spans)
    took = [seconds for seconds, _ in ends]
    codes = [code for _, code in ends if code is not None]
    print(
        f"{HOSTILE_AT_ONCE} hostile fetches at once: the last ended after "
        f"{max(took, default=0.0):.2f} s (deadline {HOSTILE_DEADLINE_S:g} s; "
        f"{HOSTILE_AT_ONCE - len(codes)} with plain text, {len(codes)} without: "
        f"{', '.join(codes) or '-'})"
    )
    pooled[0].extend(idle.verdicts)
    pooled[1].extend(witness.verdicts)
    i50, i99 = _p(idle.verdicts, 0.5), _p(idle.verdicts, 0.99)
    h50, h99 = _p(witness.verdicts, 0.5), _p(witness.verdicts, 0.99)
    ratio = h99 / max(i99, 1e-6)
    print(f"witness verdict idle     p50 {i50 * 1000:7.2f} ms  p99 {i99 * 1000:7.2f} ms")
    print(f"witness verdict hostile  p50 {h50 * 1000:7.2f} ms  p99 {h99 * 1000:7.2f} ms")
    verdict_ok = ratio <= GOAL_VERDICT_RATIO
    print(
        f"  p99 ratio {ratio:.2f}x (goal <= {GOAL_VERDICT_RATIO}x): "
        + ("ok" if verdict_ok else "over the goal")
    )
    worst = sorted(zip(witness.verdicts, witness.spans, strict=True), reverse=True)[:4]
    print(
        "  the slowest verdicts during the six: "
        + ", ".join(f"{w * 1000:.1f} ms at +{due - began:.2f} s" for w, (due, _) in worst)
    )
    c99, d99 = _p(idle_waits, 0.99), _p(hostile_waits, 0.99)
    cpu_ratio = d99 / max(c99, 1e-6)
    print(
        f"  the same in the loop's CPU time (as on a machine running nothing else): p99 idle "
        f"{c99 * 1000:.2f} ms, hostile {d99 * 1000:.2f} ms, ratio {cpu_ratio:.2f}x"
    )
    print(
        f"event loop (its thread's CPU): longest step idle {idle_step * 1000:.2f} ms, hostile "
        f"{hostile_step * 1000:.2f} ms ({what}); busy idle {idle_cpu * 1000:.0f} ms/s, "
        f"hostile {hostile_cpu * 1000:.0f} ms/s"
    )
    late = [r for r in witness.renewals if r > DEADLINE_S]
    print(
        f"lease renewal idle max {max(idle.renewals) * 1000:7.1f} ms, hostile max "
        f"{max(witness.renewals) * 1000:7.1f} ms, median "
        f"{statistics.median(witness.renewals) * 1000:.1f} ms; late (> {DEADLINE_S:g} s): "
        f"{len(late)} of {len(witness.renewals)}"
    )
    grown = witness.peak_rss - rss_before
    memory_ok = grown < GOAL_MEMORY_MB
    print(
        f"bridge memory {rss_before:.0f} MB -> peak {witness.peak_rss:.0f} MB (+{grown:.0f} MB, "
        f"goal < {GOAL_MEMORY_MB:g}): {'ok' if memory_ok else 'over the goal'}; extraction "
        f"workers together at most {witness.peak_workers:.0f} MB"
    )
    in_time = max(took, default=0.0) <= HOSTILE_DEADLINE_S + 0.5
    print(f"  every hostile fetch ended by its deadline: {'ok' if in_time else 'over the goal'}")
    ok = verdict_ok and not late and memory_ok and in_time
    return ok and all(code == "timeout" for code in codes), (ratio, cpu_ratio)


async def _timed(invoker: ToolInvoker, number: int) -> tuple[float, str | None]:
    """How long one hostile fetch (a tool call) took, and its error code if it had no text."""
    context = CallContext(
        turn_id=f"hostile-{number}", call_id="c1", player_uuid=f"p-{number}", player_name="Eve"
    )
    start = time.perf_counter()
    outcome = await invoker.invoke("web_fetch", {"url": "http://wiki.example/table.html"}, context)
    took = time.perf_counter() - start
    if outcome.ok:
        return took, None
    return took, str(outcome.error_code)


async def main() -> int:
    if "--serve-pages" in sys.argv:
        await _serve_pages()
        return 0
    if "--hostile" not in sys.argv and not await normal_pages():
        return 1
    if "--quick" in sys.argv:
        return 0
    with page_process() as port:
        settings = FetchSettings(total_timeout_s=HOSTILE_DEADLINE_S)
        fetcher = WebFetcher(settings, resolver=_public, dialer=_to_loopback(port))
        ok = await hostile_rows(fetcher)
        ok = await under_hostile_pages(fetcher) and ok
    return 0 if ok else 1


async def normal_pages() -> bool:
    """Normal pages against plain httpx, and the shield's cost (always 'ok' to go on: the
    figures are printed; the old bench did not fail on them either)."""
    ours50, ours99, plain50, plain99 = await fetch_ratio()
    ratio = ours50 / plain50
    print(f"pages: {len(list(PAGES.glob('*.html')))}, rounds: {ROUNDS}")
    print(f"web_fetch          p50 {ours50 * 1000:7.2f} ms  p99 {ours99 * 1000:7.2f} ms")
    print(f"httpx + extractor  p50 {plain50 * 1000:7.2f} ms  p99 {plain99 * 1000:7.2f} ms")
    verdict = "ok" if ratio <= GOAL_RATIO else "over the goal"
    print(f"ratio p50 {ratio:.2f}x (goal <= {GOAL_RATIO}x): {verdict}")
    s50, s99 = await shield_cost()
    verdict = "ok" if s50 < GOAL_SHIELD_US else "over the goal"
    print(f"shield per connection p50 {s50:.1f} us  p99 {s99:.1f} us (goal < 100 us): {verdict}")
    return True


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
