"""The owner's web console (docs/console.md): Functions with their review state, the audit log,
usage plots and the status, served from a process of its own, behind a one-time login
link, a session cookie, CSRF tokens and a strict Content Security Policy.

- `web`: the Starlette application; `function_views`, `audit_views`, `usage_views` its pages.
- `security`, `sessions`, `guard`: the headers, sessions and the checks of every request.
- `server`: uvicorn on a thread and loop of its own (in the console's process).
- `ports`: what the console needs from the running bridge; `remote_backend` implements it in
  the console's process, asking the bridge over `channel` (loopback, a token, bounded lines).
- `static/vendor/uplot`: the charting library, vendored with its license.
"""
