"""The owner's web console (docs/console.md): Functions with their review state, the audit log,
usage plots and the status, served by the bridge on its own thread, behind a one-time login
link, a session cookie, CSRF tokens and a strict Content Security Policy.

- `web`: the Starlette application; `function_views`, `audit_views`, `usage_views` its pages.
- `security`, `sessions`, `guard`: the headers, sessions and the checks of every request.
- `server`: uvicorn on a thread and loop of its own, so no page delays the chat path.
- `ports`: what the console needs from the running bridge, implemented by `bridge.app`.
- `static/vendor/uplot`: the charting library, vendored with its license.
"""
