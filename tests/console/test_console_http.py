"""The console over real HTTP on loopback: the login link works once, pages need the session,
every change needs the CSRF token and the owner role, every response carries the CSP, and the
audit log pages by cursor and exports JSON lines."""

from __future__ import annotations

import contextlib
import json
import re
import ssl
import subprocess
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from bridge.console.security import CSP
from bridge.control.console_config import ConsoleConfig
from bridge.memory.records import Memory, new_memory_id
from bridge.store.archive import ArchivedTurn

from .support import Console, console_folder, served_console

TIMEOUT = httpx.Timeout(60.0)
STEVE_UUID = "3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f"


def _client(console: Console) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=console.url, timeout=TIMEOUT, follow_redirects=False)


@contextlib.asynccontextmanager
async def _logged_in(console: Console, *extra: str) -> AsyncIterator[httpx.AsyncClient]:
    async with _client(console) as client:
        answer = await client.get(console.login_link(*extra).removeprefix(console.url))
        assert answer.status_code == 200, answer.text
        yield client


def _csrf(html: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', html)
    assert match is not None
    return match.group(1)


async def test_a_login_link_works_once_and_sets_a_strict_cookie(tmp_path: Path) -> None:
    async with served_console(console_folder(tmp_path)) as console:
        link = console.login_link().removeprefix(console.url)
        async with _client(console) as client:
            first = await client.get(link)
            assert first.status_code == 200
            cookie = first.headers["set-cookie"]
            assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
            assert "Secure" not in cookie  # plain http on loopback: a Secure cookie would not stick
            assert first.headers["content-security-policy"] == CSP
            assert first.headers["referrer-policy"] == "no-referrer"
            page = await client.get("/functions")
            assert page.status_code == 200 and "say-hello" in page.text
        async with _client(console) as other:
            second = await other.get(link)
            assert second.status_code == 403
            assert "set-cookie" not in second.headers
            assert (await other.get("/functions")).status_code == 401


@pytest.mark.parametrize("token", ["", "x", "A" * 43, "A" * 5000])
async def test_made_up_tokens_are_refused(tmp_path: Path, token: str) -> None:
    async with served_console(console_folder(tmp_path)) as console, _client(console) as client:
        answer = await client.get("/login", params={"token": token})
        assert answer.status_code == 403 and "set-cookie" not in answer.headers


async def test_every_page_needs_a_session(tmp_path: Path) -> None:
    async with served_console(console_folder(tmp_path)) as console, _client(console) as client:
        for path in (
            "/functions",
            "/functions/say-hello",
            "/audit",
            "/audit.jsonl",
            "/usage",
            "/usage.json",
            "/status",
        ):
            answer = await client.get(path)
            assert answer.status_code == 401, path
            assert answer.headers["content-security-policy"] == CSP
        posted = await client.post("/functions/say-hello/review", data={"csrf": "x"})
        assert posted.status_code == 401


async def test_a_review_needs_the_csrf_token_the_owner_and_the_same_origin(tmp_path: Path) -> None:
    async with served_console(console_folder(tmp_path)) as console:
        owner_login = _logged_in(console)
        viewer_login = _logged_in(console, "--role", "viewer", "--as", "vera")
        async with owner_login as client, viewer_login as viewer:
            page = await client.get("/functions/say-hello")
            csrf = _csrf(page.text)
            sha = re.search(r'name="source_sha256" value="([0-9a-f]{64})"', page.text)
            assert sha is not None
            form = {"csrf": csrf, "source_sha256": sha.group(1)}
            url = "/functions/say-hello/review"
            assert (await client.post(url, data={**form, "csrf": ""})).status_code == 403
            assert (await client.post(url, data={"source_sha256": sha.group(1)})).status_code == 403
            forged = await client.post(url, data=form, headers={"origin": "http://evil.example"})
            assert forged.status_code == 403
            viewer_csrf = _csrf((await viewer.get("/functions/say-hello")).text)
            denied = await viewer.post(url, data={**form, "csrf": viewer_csrf})
            assert denied.status_code == 403 and "owner" in denied.text
            assert "say-hello" not in console.offered()
            done = await client.post(url, data=form)
            assert done.status_code == 303
            assert "say-hello" in console.offered()
            after = await client.get("/functions/say-hello")
            assert '<dd id="review-state">reviewed</dd>' in after.text


async def test_the_audit_log_pages_by_cursor_and_exports_json_lines(tmp_path: Path) -> None:
    async with served_console(console_folder(tmp_path)) as console:
        audit = console.network.default.runtime.audit
        for n in range(130):
            player = "Steve" if n % 2 else "Alex"
            audit.record("tool.invoke", {"player": player, "tool": "time", "status": "ok", "n": n})
        audit.flush()
        async with _logged_in(console) as client:
            first = await client.get("/audit", params={"player": "Steve"})
            numbers = [int(n) for n in re.findall(r"&#34;n&#34;: (\d+)", first.text)]
            assert numbers == list(range(129, 29, -2))  # 50 a page, newest first
            older = re.search(r'href="(/audit\?[^"]+)" id="older"', first.text)
            assert older is not None
            second = await client.get(older.group(1).replace("&amp;", "&"))
            rest = [int(n) for n in re.findall(r"&#34;n&#34;: (\d+)", second.text)]
            assert rest == list(range(29, 0, -2))
            assert 'id="older"' not in second.text
            export = await client.get("/audit.jsonl", params={"player": "Alex", "tool": "time"})
            lines = [json.loads(line) for line in export.text.splitlines()]
            assert [line["fields"]["n"] for line in lines] == list(range(128, -1, -2))
            bad = await client.get("/audit", params={"since": "yesterday"})
            assert bad.status_code == 400 and "since" in bad.text


def test_a_console_off_loopback_needs_tls_or_the_proxy_flag() -> None:
    with pytest.raises(ValueError, match="behind_proxy"):
        ConsoleConfig(host="0.0.0.0")
    assert ConsoleConfig(host="0.0.0.0", behind_proxy=True).secure_cookie
    assert not ConsoleConfig().secure_cookie


async def test_the_status_page_shows_servers_providers_and_problems(tmp_path: Path) -> None:
    async with served_console(console_folder(tmp_path)) as console:
        async with _logged_in(console) as client:
            page = await client.get("/status")
            assert page.status_code == 200
            assert "<td>default</td><td>no</td>" in page.text  # no plugin linked
            assert 'Running turns: <span id="running">0</span>' in page.text
            # The shipped providers.yml names a key that is not set: the provider is listed as
            # not configured with why (never probed), and validate's warning is a problem.
            assert "not configured (OPENAI_API_KEY is not set)" in page.text
            assert "usable" not in page.text


OTHER_UUID = "0b6a1c9e-1111-4c6a-9e2f-1a2b3c4d5e6f"


async def test_memories_are_read_by_all_and_forgotten_only_by_an_owner(tmp_path: Path) -> None:
    async with served_console(console_folder(tmp_path)) as console:
        store = console.network.default.runtime.memories
        assert store is not None
        written = [
            Memory(
                new_memory_id(), "personal", STEVE_UUID, "Steve", text, "player", datetime.now(UTC)
            )
            for text in ("likes <b>oak</b> boats", "builds at 100 64 -30")
        ]
        store.add_many(written)
        # The private turn that said the first (its conversation entry) goes with it.
        said = Memory(
            new_memory_id(),
            "conversation",
            STEVE_UUID,
            "Steve",
            "Steve: I like oak boats assistant: noted",
            "archive",
            datetime.now(UTC),
            origin="ai-x",
        )
        store.add(said)
        owner_login = _logged_in(console)
        viewer_login = _logged_in(console, "--role", "viewer", "--as", "vera")
        async with owner_login as client, viewer_login as viewer:
            listed = await viewer.get("/memories", params={"player": "steve"})
            assert "likes &lt;b&gt;oak&lt;/b&gt; boats" in listed.text
            # Another player now writes as "Steve": by that name both are shown, each with
            # its UUID (the name last written is not who a player is); by UUID, Steve alone.
            store.add(
                Memory(new_memory_id(), "personal", OTHER_UUID, "Steve", "hides diamonds",
                       "player", datetime.now(UTC))
            )  # fmt: skip
            named = (await viewer.get("/memories", params={"player": "Steve"})).text
            assert "oak" in named and "hides diamonds" in named
            assert STEVE_UUID in named and OTHER_UUID in named
            by_uuid = (await viewer.get("/memories", params={"player": STEVE_UUID})).text
            assert "oak" in by_uuid and "hides diamonds" not in by_uuid
            assert "Forget" not in listed.text  # a viewer reads only
            form = {"csrf": _csrf(listed.text), "memory_id": written[0].memory_id}
            assert (await viewer.post("/memories/forget", data=form)).status_code == 403
            page = await client.get("/memories")
            assert (
                await client.post("/memories/forget", data={**form, "csrf": ""})
            ).status_code == 403
            done = await client.post("/memories/forget", data={**form, "csrf": _csrf(page.text)})
            assert done.status_code == 303 and done.headers["location"].endswith("forgotten")
        assert [m.text for m in store.personal(STEVE_UUID)] == ["builds at 100 64 -30"]
        assert store.conversations(STEVE_UUID) == []
        audit = console.network.default.runtime.audit
        audit.flush()
        [forgot] = audit.events("memory.forget")
        assert forgot.fields["via"] == "console" and forgot.fields["owner"] == "Steve"


async def test_conversations_show_the_archive_as_text_newest_first(tmp_path: Path) -> None:
    async with served_console(console_folder(tmp_path)) as console:
        archive = console.network.default.runtime.archive
        for n in range(25):
            archive.append(
                ArchivedTurn(
                    turn_id=f"t-{n}",
                    session_id="public",
                    player="Steve" if n % 5 else "<b>Alex</b>",
                    started_at=datetime(2026, 12, 4, 12, n, tzinfo=UTC),
                    ended_at=datetime(2026, 12, 4, 12, n, 30, tzinfo=UTC),
                    model_ref="openai/gpt-x",
                    control_version="1",
                    items=({"role": "user", "content": f"<script>alert({n})</script>"},),
                )
            )
        async with _logged_in(console, "--role", "viewer") as client:
            first = await client.get("/conversations")
            turns = re.findall(r'data-turn="(t-\d+)"', first.text)
            assert turns == [f"t-{n}" for n in range(24, 4, -1)]  # 20 a page
            assert "&lt;script&gt;alert(24)&lt;/script&gt;" in first.text
            assert "<script>alert" not in first.text
            older = re.search(r'href="(/conversations\?[^"]+)" id="older"', first.text)
            assert older is not None
            rest = await client.get(older.group(1).replace("&amp;", "&"))
            assert re.findall(r'data-turn="(t-\d+)"', rest.text) == [
                f"t-{n}" for n in range(4, -1, -1)
            ]
            alex = await client.get("/conversations", params={"player": "<b>Alex</b>"})
            assert re.findall(r'data-turn="(t-\d+)"', alex.text) == [
                "t-20",
                "t-15",
                "t-10",
                "t-5",
                "t-0",
            ]


async def test_the_dry_run_form_gives_what_functions_run_gives(tmp_path: Path) -> None:
    async with served_console(console_folder(tmp_path)) as console:
        owner_login = _logged_in(console)
        viewer_login = _logged_in(console, "--role", "viewer", "--as", "vera")
        async with owner_login as client, viewer_login as viewer:
            url = "/functions/say-hello/dry-run"
            page = await client.get("/functions/say-hello")
            form = {"csrf": _csrf(page.text), "player": "Steve", "approve": "yes"}
            ran = await client.post(url, data={**form, "args": '{"to": "Alex"}'})
            assert ran.status_code == 200, ran.text
            # Unreviewed (require_review is on) and still run: the dry run is how it is read.
            assert "say hello Alex from Steve" in ran.text
            assert "command.dispatch.console" in ran.text
            assert "&#34;status&#34;: &#34;ok&#34;" in ran.text or '"status": "ok"' in ran.text
            bad = await client.post(url, data={**form, "args": "{nope"})
            assert bad.status_code == 400 and "not JSON" in bad.text
            who = await client.post(url, data={**form, "args": "{}", "player": "<b>"})
            assert who.status_code == 400
            viewer_csrf = _csrf((await viewer.get("/functions/say-hello")).text)
            denied = await viewer.post(url, data={**form, "csrf": viewer_csrf, "args": "{}"})
            assert denied.status_code == 403
        assert "say-hello" not in console.offered()  # a dry run reviews nothing


ODD_QUERIES = [
    ("/audit", {"since": "0001-01-01T00:00+23:59"}, "since"),
    ("/audit", {"until": "9999-12-31T23:59-23:59"}, "until"),
    ("/audit.jsonl", {"since": "0001-01-01T00:00+23:59"}, "since"),
    ("/audit", {"since": "２０２６-12-04"}, "since"),
    ("/audit", {"before": "9999999999999999999"}, "before"),
    ("/audit", {"before": "18446744073709551616"}, "before"),
    ("/audit", {"before": "²"}, "before"),
    ("/audit", {"before": "٣"}, "before"),
    ("/conversations", {"before": "9999999999999999999"}, "before"),
    ("/conversations", {"before": "¹²"}, "before"),
    ("/memories", {"page": "²"}, "page"),
    ("/memories", {"page": "-1"}, "page"),
]


async def test_odd_query_values_are_a_400_naming_the_field(tmp_path: Path) -> None:
    async with served_console(console_folder(tmp_path)) as console, _logged_in(console) as client:
        for path, params, field in ODD_QUERIES:
            answer = await client.get(path, params=params)
            assert answer.status_code == 400, (path, params, answer.status_code, answer.text)
            assert answer.text.startswith(f"{field}:"), answer.text
        fine = await client.get("/audit", params={"since": "2026-12-04T21:30+01:00"})
        assert fine.status_code == 200


async def test_the_session_cookie_is_bound_to_the_consoles_port(tmp_path: Path) -> None:
    async with served_console(console_folder(tmp_path)) as console, _logged_in(console) as client:
        port = int(console.url.rsplit(":", 1)[1])
        (cookie,) = list(client.cookies.jar)
        assert cookie.name == f"mineclaw_console_{port}"
        assert (await client.get("/functions")).status_code == 200
        # The same session id under another port's name (a console elsewhere on this host) is
        # not this console's session.
        session_id = cookie.value
        async with _client(console) as other:
            other.cookies.set(f"mineclaw_console_{port + 1}", session_id)
            assert (await other.get("/functions")).status_code == 401
            other.cookies.clear()
            other.cookies.set("mineclaw_console", session_id)
            assert (await other.get("/functions")).status_code == 401


def _self_signed(folder: Path) -> None:
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "ec"),
            *("-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"),
            *("-keyout", str(folder / "key.pem"), "-out", str(folder / "cert.pem")),
            *("-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )


async def test_a_console_serving_tls_itself_sends_hsts_and_a_host_cookie(tmp_path: Path) -> None:
    folder = console_folder(tmp_path)
    _self_signed(folder)
    config = folder / "config.yml"
    text = config.read_text(encoding="utf-8").replace(
        "console:\n  enabled: true",
        "console:\n  enabled: true\n  tls_cert: cert.pem\n  tls_key: key.pem",
    )
    config.write_text(text, encoding="utf-8")
    async with served_console(folder) as console:
        assert console.url.startswith("https://")
        verify = ssl.create_default_context(cafile=str(folder / "cert.pem"))
        async with httpx.AsyncClient(
            base_url=console.url, timeout=TIMEOUT, verify=verify, follow_redirects=False
        ) as client:
            answer = await client.get(console.login_link().removeprefix(console.url))
            assert answer.status_code == 200
            assert answer.headers["strict-transport-security"].startswith("max-age=")
            port = int(console.url.rsplit(":", 1)[1])
            cookie = answer.headers["set-cookie"]
            assert cookie.startswith(f"__Host-mineclaw_console_{port}=") and "Secure" in cookie
            assert (await client.get("/functions")).status_code == 200
    async with served_console(console_folder(tmp_path / "plain")) as console:
        async with _client(console) as client:
            answer = await client.get("/functions")
            assert "strict-transport-security" not in answer.headers


async def test_a_usage_page_without_data_says_so_instead_of_empty_plots(tmp_path: Path) -> None:
    async with served_console(console_folder(tmp_path)) as console, _logged_in(console) as client:
        page = await client.get("/usage")
        assert page.status_code == 200
        assert 'class="plot"' not in page.text
        assert page.text.count('class="no-data"') == 6 and "No data yet" in page.text
