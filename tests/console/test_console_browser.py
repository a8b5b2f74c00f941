"""The console in a real browser (headless Chromium): log in with the one-time link and see a
second use refused, a forged POST without the CSRF token refused, review a changed Function and
see it offered to the model, filter the audit log, see a usage plot drawn, and the XSS corpus
rendered as text."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

from playwright.async_api import Page

from bridge.cli import main
from bridge.store.target import StorageTarget
from bridge.store.usage import Periods, UsageDetail

from .browser import chromium, new_page, screenshot
from .support import Console, console_folder, served_console

XSS_CORPUS = (
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(2)>',
    "<svg onload=alert(3)>",
    "';alert(4);//",
    "<iframe src=javascript:alert(5)>",
    "{{7*7}}",
)


async def _log_in(page: Page, console: Console) -> None:
    await page.goto(console.login_link())
    await page.wait_for_url(f"{console.url}/functions")


async def test_the_login_link_works_once(tmp_path: Path) -> None:
    async with served_console(console_folder(tmp_path)) as console, chromium() as browser:
        link = console.login_link()
        page, errors = await new_page(browser)
        await page.goto(link)
        await page.wait_for_url(f"{console.url}/functions")  # moved on, with the cookie
        assert await page.locator("tr[data-function=say-hello] .review").inner_text() == (
            "needs review"
        )
        await screenshot(page, "functions")
        again, _ = await new_page(browser)
        answer = await again.goto(link)
        assert answer is not None and answer.status == 403
        assert "used already" in await again.locator("#refused").inner_text()
        denied = await again.goto(f"{console.url}/functions")
        assert denied is not None and denied.status == 401
        assert errors == []


async def test_a_forged_post_without_the_csrf_token_is_refused(tmp_path: Path) -> None:
    async with served_console(console_folder(tmp_path)) as console, chromium() as browser:
        page, _ = await new_page(browser)
        await _log_in(page, console)
        await page.goto(f"{console.url}/functions/say-hello")
        # A form the console did not write: the browser sends the session cookie (same origin),
        # but not the token.
        await page.evaluate(
            """() => {
                const form = document.createElement('form');
                form.method = 'post';
                form.action = '/functions/say-hello/review';
                const sha = document.querySelector('input[name=source_sha256]').value;
                form.innerHTML = '<input name="source_sha256" value="' + sha + '">';
                document.body.appendChild(form);
                form.submit();
            }"""
        )
        await page.wait_for_load_state()
        await page.wait_for_function("document.body.innerText.includes('CSRF')")
        assert "missing or wrong CSRF token" in await page.inner_text("body")
        assert "say-hello" not in console.offered()


async def test_review_a_changed_function_and_see_it_offered(tmp_path: Path) -> None:
    folder = console_folder(tmp_path)
    code = main(["functions", "review", "say-hello", "--yes", "--config", str(folder)])
    assert code == 0
    functions = folder / "functions.yml"
    functions.write_text(functions.read_text("utf-8").replace("say hello ", "say hi "), "utf-8")
    async with served_console(folder) as console, chromium() as browser:
        assert "say-hello" not in console.offered()  # the edited source has no review
        page, errors = await new_page(browser)
        await _log_in(page, console)
        await page.click("text=say-hello")
        assert await page.locator("#review-state").inner_text() == "needs review"
        removed = await page.locator("#diff .del").all_inner_texts()
        added = await page.locator("#diff .add").all_inner_texts()
        assert any("say hello " in line for line in removed)
        assert any("say hi " in line for line in added)
        await screenshot(page, "review")
        await page.click("#review-button")
        await page.wait_for_selector("#done")
        assert await page.locator("#review-state").inner_text() == "reviewed"
        assert await page.locator("#offered").inner_text() == "yes"
        assert "- say-hello: Say hello on the console." in console.offered()
        assert errors == []
    audit = StorageTarget(folder / "data").open_audit()
    try:
        reviewed = [e.fields for e in audit.events("function.reviewed")]
    finally:
        audit.close()
    assert [fields["via"] for fields in reviewed] == ["cli", "console"]


async def test_filter_the_audit_log(tmp_path: Path) -> None:
    async with served_console(console_folder(tmp_path)) as console, chromium() as browser:
        audit = console.network.default.runtime.audit
        for n in range(12):
            player = "Steve" if n % 3 == 0 else "Alex"
            audit.record(
                "run_command.decision",
                {"requester": player, "command": f"time set {n}", "verdict": "allow"},
            )
        await asyncio.to_thread(audit.flush)
        page, errors = await new_page(browser)
        await _log_in(page, console)
        await page.click("nav >> text=Audit log")
        await page.fill("input[name=player]", "Steve")
        await page.click("#audit-filter button[type=submit]")
        await page.wait_for_url("**/audit?**player=Steve**")
        rows = await page.locator("#audit tbody tr").all_inner_texts()
        assert len(rows) == 4
        assert all('"requester": "Steve"' in row for row in rows)
        await screenshot(page, "audit")
        assert errors == []


PRICED = """    price:
      input_per_million: 0.15
      cached_input_per_million: 0.075
      output_per_million: 0.60
"""


async def test_a_usage_plot_is_drawn(tmp_path: Path) -> None:
    folder = console_folder(tmp_path)
    providers = (folder / "providers.yml").read_text(encoding="utf-8")
    providers = providers.replace("    # price:", PRICED + "    # price:", 1)
    (folder / "providers.yml").write_text(providers, encoding="utf-8")
    async with served_console(folder) as console, chromium() as browser:
        usage = console.network.default.runtime.usage
        assert usage is not None
        today = datetime.now(UTC)
        for back, tokens in enumerate((1200, 3400, 800)):
            day = today - timedelta(days=back)
            periods = Periods(day.strftime("%Y-%m-%d"), day.strftime("%Y-%m"))
            # A million tokens in and a million out of the priced model: 0.15 + 0.60 a day.
            detail = UsageDetail("openai/gpt-4o-mini", "vip", 1_000_000, 0, 1_000_000)
            usage.add(
                player_uuid="3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f",
                player_name="Steve",
                periods=periods,
                tokens=tokens,
                estimated=False,
                detail=detail,
            )
        page, errors = await new_page(browser)
        await _log_in(page, console)
        await page.click("nav >> text=Usage")
        await page.wait_for_selector("#plot-server[data-drawn=true] canvas")
        size = await page.locator("#plot-server canvas").bounding_box()
        assert size is not None and size["width"] > 300 and size["height"] > 100
        assert await page.locator("#usage tbody tr").count() == 3
        for plot in ("#plot-models", "#plot-tiers", "#plot-cost"):
            await page.wait_for_selector(f"{plot}[data-drawn=true] canvas")
        models = await page.locator("#models tbody tr").all_inner_texts()
        assert models == ["openai/gpt-4o-mini\t6000000\t2.2500"]
        await screenshot(page, "usage")
        assert errors == []  # the CSP let the vendored uPlot draw, nothing was refused


async def test_the_xss_corpus_renders_as_text(tmp_path: Path) -> None:
    hostile = "\n".join(f"// {entry}" for entry in XSS_CORPUS)
    functions = f"""\
schema: 1
api_version: 1
functions:
  - name: hostile
    description: {XSS_CORPUS[1]!r}
    enabled: true
    capabilities: []
    parameters: {{type: object}}
    on_call: |
      async function onCall(ctx, api) {{
        const html = "</pre><script>alert(6)</script>";
{chr(10).join("        " + line for line in hostile.splitlines())}
        return {{status: "ok", output: {{}}}};
      }}
"""
    folder = console_folder(tmp_path, functions=functions)
    async with served_console(folder) as console, chromium() as browser:
        audit = console.network.default.runtime.audit
        for entry in XSS_CORPUS:
            audit.record("tool.invoke", {"player": entry, "tool": entry, "status": "ok"})
        await asyncio.to_thread(audit.flush)
        page, errors = await new_page(browser)
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: dialogs.append(dialog.message))
        await _log_in(page, console)
        for path in ("/functions", "/functions/hostile", "/audit"):
            await page.goto(console.url + path)
            assert await page.locator("main script, main img, main svg, main iframe").count() == 0
        text = await page.inner_text("#audit")
        for entry in XSS_CORPUS:
            assert entry.replace('"', '\\"') in text
        await page.goto(console.url + "/functions/hostile")
        body = await page.inner_text("main")
        assert XSS_CORPUS[1] in body and "alert(6)" in body
        await page.goto(console.url + "/audit?player=" + "%3Cscript%3Ealert(1)%3C%2Fscript%3E")
        assert await page.locator("#audit tbody tr").count() == 1
        assert dialogs == []
        assert errors == []
