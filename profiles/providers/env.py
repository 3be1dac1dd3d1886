"""Values from the process environment and from layered `.env` files.

Precedence, first wins (`ENV_LAYERS`): the process environment, then `.env.<deployment>`, then
`.env`. Each file is looked for in the persona file's folder and then in the working directory,
so the deployment's file in either folder beats a plain `.env` in either. A key set to an empty
value counts as unset in every layer. `PROFILES_ENV_ALLOW` (comma-separated glob patterns), when
set, limits which keys may be read at all, from the process and from files alike.

Provenance names the layer: `env:KEY` for the process environment, `env:KEY from <file>` for a
file, e.g. `env:SUMMARY_PROFILE_NAME from profile_configs/.env.prod`.
"""

from __future__ import annotations

import os
import re
from fnmatch import fnmatchcase
from pathlib import Path

from ..context import Context, Resolved
from ..environ import getenv
from ..errors import ResolutionError
from ..secrets import looks_like_credential
from .base import ConfigProvider
from .dotenv import DotEnvFile, expand, read_dotenv

__all__ = [
    "ALLOW_VARIABLE",
    "DEPLOYMENT_PATTERN",
    "ENV_LAYERS",
    "EnvProvider",
    "check_deployment",
    "check_env_key",
    "dotenv_layers",
]

#: The layers of the `env` provider, highest first.
ENV_LAYERS = ("process environment", ".env.<deployment>", ".env")

#: The variable that limits which keys personas may read.
ALLOW_VARIABLE = "PROFILES_ENV_ALLOW"

#: What a deployment name may look like; it becomes part of a file name (`.env.<deployment>`).
DEPLOYMENT_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def check_deployment(deployment: str) -> str:
    """Return `deployment` if it is a safe name, else raise; a name like `../x` must not pick a file."""
    if type(deployment) is str and deployment in _SAFE_DEPLOYMENTS:
        return deployment
    if not isinstance(deployment, str) or not DEPLOYMENT_PATTERN.fullmatch(deployment) or ".." in deployment:
        raise ResolutionError(
            f"deployment name {deployment!r} is not allowed; use letters, digits, '-', '_' and '.' "
            "(at most 64, starting with a letter or digit), e.g. prod or customer-42"
        )
    if len(_SAFE_DEPLOYMENTS) >= 1024:
        _SAFE_DEPLOYMENTS.clear()
    _SAFE_DEPLOYMENTS.add(deployment)
    return deployment


#: Deployment names already found safe: checked once each, as every lookup checks them.
_SAFE_DEPLOYMENTS: set[str] = set()


#: What an env key may not hold: path separators, `=`, whitespace, control characters; nor `..`.
_UNSAFE_KEY = re.compile(r"[/\\=\s\x00-\x1f\x7f]")


def check_env_key(key: str) -> str | None:
    """Why `key` cannot name an environment variable, or None when it can.

    A key is looked up in the process environment and in `.env` files; one holding a path
    separator, `..`, a space, `=` or a control character is a mistake (or an attempt to reach
    something else) and is refused when the persona is loaded. Store keys (`summarizer/name`)
    belong to the store provider, which keeps its slashes.
    """
    if not key or not key.strip():
        return "is empty"
    found = _UNSAFE_KEY.search(key)
    if found:
        char = found.group(0)
        what = {"/": "a '/'", "\\": "a '\\'", "=": "an '='", " ": "a space"}.get(char, f"the character {char!r}")
        return f"holds {what}"
    if ".." in key:
        return "holds '..'"
    return None


def _display(path: str, cwd: str) -> str:
    """A path as people read it: relative to the working directory when it is inside it."""
    if os.path.isabs(path) and path.startswith(cwd + os.sep):
        return path[len(cwd) + 1 :]
    return path


def dotenv_layers(context: Context) -> list[DotEnvFile]:
    """The `.env` files that exist for `context`, highest first.

    `.env.<deployment>` in the persona's folder, then in the working directory, then `.env` in the
    persona's folder, then in the working directory; a folder named twice is read once. Plain
    string paths and one `stat` per file keep this cheap: it runs at every lookup.
    """
    cwd = os.getcwd()
    folders = [cwd]
    if context.base_dir is not None:
        base = os.fspath(context.base_dir)
        if os.path.abspath(base) != cwd:
            folders.insert(0, base)
    names = [".env"]
    if context.deployment:
        names.insert(0, f".env.{check_deployment(context.deployment)}")
    layers = []
    for name in names:
        for folder in folders:
            path = name if folder is cwd else os.path.join(folder, name)
            found = read_dotenv(Path(path), _display(path, cwd))
            if found is not None:
                layers.append(found)
    return layers


def _allowed_patterns() -> list[str] | None:
    raw = getenv(ALLOW_VARIABLE)
    if raw is None:
        return None
    found = _PATTERNS.get(raw, _PATTERNS)
    if found is _PATTERNS:
        found = [pattern.strip() for pattern in raw.split(",") if pattern.strip()] if raw.strip() else None
        if len(_PATTERNS) >= _MAX_KEYS:
            _PATTERNS.clear()
        _PATTERNS[raw] = found
    return list(found) if found is not None else None  # type: ignore[arg-type]


#: Each env key already checked: its provenance (`env:KEY`), the last answer the process
#: environment gave for it, and whether its name says it is a credential. What the key holds is
#: read again at every lookup; only what its name decides is kept.
_KEYS: dict[str, tuple[str, Resolved | None, bool]] = {}

#: `PROFILES_ENV_ALLOW` values already split into patterns.
_PATTERNS: dict[str, list[str] | None] = {}

#: Most keys (and allow-lists) kept; past that the memory is cleared and filled again.
_MAX_KEYS = 1024


def _remember_key(key: str) -> tuple[str, Resolved | None, bool]:
    if len(_KEYS) >= _MAX_KEYS:
        _KEYS.clear()
    known = _KEYS[key] = (f"env:{key}", None, looks_like_credential(key))
    return known


def _check_allowed(key: str, patterns: list[str] | None, where: str | None = None) -> None:
    if patterns is None or any(fnmatchcase(key, pattern) for pattern in patterns):
        return
    place = f" (referenced in {where})" if where else ""
    raise ResolutionError(
        f"env key {key!r}{place} is not allowed by {ALLOW_VARIABLE}={','.join(patterns)}; "
        f"add a pattern matching it to {ALLOW_VARIABLE}, or read the value from an allowed key"
    )


def _check_utf8(key: str, value: str) -> None:
    """Refuse a variable whose bytes are not UTF-8: Python hands them on as lone surrogates
    (`\udce9`), which print as '�' and cannot be encoded into a request. The value is not shown."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ResolutionError(
            f"environment variable {key} holds bytes that are not UTF-8 text; set it again in UTF-8 "
            "(or check the locale of whatever sets it)"
        ) from None


class EnvProvider(ConfigProvider):
    """Reads the process environment and the layered `.env` files at every lookup.

    Nothing is cached but the parsed files (by path, mtime and size), so a changed variable or an
    edited file shows at the next call, and nothing is ever written into `os.environ`. A value
    read from a key that looks like a credential is marked secret.
    """

    name = "env"

    def find(self, key: str, context: Context) -> Resolved | None:
        """The value of `key` for `context` and which layer gave it: `env:NAME` or `env:NAME from .env.prod`.

        Raises:
            ResolutionError: the key (or a key it references) is refused by `PROFILES_ENV_ALLOW`,
                a `.env` file cannot be read, or its references form a cycle.
        """
        known = _KEYS.get(key)
        if known is None:
            why = check_env_key(key)
            if why is not None:
                raise ResolutionError(
                    f"env key {key!r} {why}; an environment variable's name is letters, digits and '_'"
                )
            known = _remember_key(key)
        patterns = _allowed_patterns()
        if patterns is not None:
            _check_allowed(key, patterns)
        value = getenv(key)
        if value not in (None, ""):
            last = known[1]
            if last is not None and last.value == value:
                return last  # the same answer as last time: one object for it, not one per lookup
            if not value.isascii():
                _check_utf8(key, value)
            found_now = Resolved(value, known[0], known[2])
            _KEYS[key] = (known[0], found_now, known[2])
            return found_now
        found = expand(key, dotenv_layers(context), check=lambda ref, where: _check_allowed(ref, patterns, where))
        if found is None:
            return None
        text, holder, used = found
        secret = any(looks_like_credential(name) for name in used)
        return Resolved(text, f"env:{key} from {holder.label}", secret)
