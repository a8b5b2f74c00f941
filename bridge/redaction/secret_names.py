"""Whether a field or variable name looks like it holds a credential (``api_token`` does,
``input_tokens`` does not): used where a value is redacted by its name, not its shape."""

from __future__ import annotations

# Credential names: whole segments of a name split at '_' (after lower-casing, with '-' read
# as '_'), so ``input_tokens`` is not one but ``api_token`` is. The short spellings owners
# write in ``.env`` count too (``DB_PASS``, ``SMTP_PW``, ``MYSQL_PWD``), and the run-together
# ones (``APITOKEN``, ``SECRETKEY``).
SECRET_SEGMENTS = frozenset(
    {
        *("token", "secret", "password", "passwd", "authorization", "apikey", "credential"),
        *("cookie", "pass", "pw", "pwd", "pswd", "passphrase", "passcode", "dsn"),
        *("apitoken", "authtoken", "accesstoken", "secretkey", "privatekey", "accesskey"),
        *("credentials", "secrets", "passwords"),
    }
)
# Adjacent segment pairs that name a credential only together.
SECRET_PAIRS = frozenset(
    {
        *(("api", "key"), ("private", "key"), ("access", "key"), ("signing", "key")),
        *(("encryption", "key"), ("master", "key"), ("session", "key"), ("license", "key")),
        *(("client", "key"), ("auth", "key"), ("webhook", "url"), ("database", "url")),
        *(("db", "url"), ("connection", "string")),
    }
)


def is_secret_name(name: str) -> bool:
    """Whether a field or variable called ``name`` looks like it holds a credential."""
    segments = name.lower().replace("-", "_").split("_")
    if any(segment in SECRET_SEGMENTS for segment in segments):
        return True
    return any(pair in SECRET_PAIRS for pair in zip(segments, segments[1:], strict=False))
