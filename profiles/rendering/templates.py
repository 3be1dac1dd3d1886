"""Where templates live and which one serves a prompt kind in a language.

Bundled templates are laid out as `<family>/<locale>/<kind>.j2` under `templates/`. A locale
falls back along its chain (`zh-TW → zh → en`), so a missing translation still gives a prompt,
and no language means English, never a silent Chinese default.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

__all__ = [
    "DEFAULT_FAMILY",
    "DEFAULT_LOCALE",
    "PROMPT_INPUTS",
    "PROMPT_KINDS",
    "bundled_root",
    "locale_chain",
    "template_name",
]

DEFAULT_LOCALE = "en"
DEFAULT_FAMILY = "default"

#: The prompt kinds every profile has, with the file name of their template.
PROMPT_KINDS = ("system", "user", "write_memory")

_PACKAGE_DIR = Path(__file__).resolve().parent.parent


@lru_cache(maxsize=1)
def bundled_root() -> Path:
    """The folder of the bundled templates, inside an installed wheel or a source checkout."""
    installed = _PACKAGE_DIR / "_bundled_templates"
    if installed.is_dir():
        return installed
    return _PACKAGE_DIR.parent / "templates"


def locale_chain(language: str | None) -> tuple[str, ...]:
    """Locales to try for `language`, most specific first, always ending in English.

    `zh_TW`, `zh-tw` and `zh-TW` are the same locale; `zh-TW` tries `zh-TW`, `zh`, then `en`.
    """
    if not language:
        return (DEFAULT_LOCALE,)
    parts = language.replace("_", "-").split("-")
    parts = [parts[0].lower(), *(part.upper() if len(part) == 2 else part for part in parts[1:])]
    chain = ["-".join(parts[:end]) for end in range(len(parts), 0, -1)]
    if DEFAULT_LOCALE not in chain:
        chain.append(DEFAULT_LOCALE)
    return tuple(chain)


def template_name(kind: str, locale: str, family: str = DEFAULT_FAMILY) -> str:
    """The loader name of a bundled template, e.g. `default/zh/system.j2`."""
    return f"{family}/{locale}/{kind}.j2"


#: Documented runtime inputs of each prompt kind, with the value used when a caller omits them.
PROMPT_INPUTS: dict[str, dict[str, object]] = {
    "system": {
        "question": None,
        "most_recent_memories": None,
        "resource_prompt": None,
        "out_schema": None,
        "now_time": None,
        "is_retry_chat": False,
    },
    "user": {"question": None, "most_recent_memories": None},
    "write_memory": {"question": None, "thought": None, "action": None, "observation": None},
}
