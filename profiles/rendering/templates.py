"""Where templates live and which one serves a prompt kind in a language and model family.

Templates are laid out as `<family>/<locale>/<kind>.j2` under each template root (the user's
folders first, then the bundled `templates/`). A locale falls back along its chain
(`zh-TW → zh → en`), so a missing translation still gives a prompt, and no language means
English, never a silent Chinese default.

Search order, first found wins (`candidate_names`):

    for each locale in the chain:        zh-TW, zh, en
        for the family, then `default`:  granite, default
            for each root in order:      user roots, then bundled

The locale is the outer loop because a prompt in the wrong language is worse than one not tuned
to the model: a Granite model asked in Chinese gets `granite/zh`, else `default/zh`, and only
then `granite/en`. The family comes before the root because a family's template exists for the
model's format; to change it, put a file at the same `<family>/<locale>/` path in your root.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

__all__ = [
    "DEFAULT_FAMILY",
    "DEFAULT_LOCALE",
    "FAMILIES_FILE",
    "MACROS_FILE",
    "PROMPT_INPUTS",
    "PROMPT_KINDS",
    "REQUIRED_VARIABLES",
    "bundled_root",
    "candidate_names",
    "language_problem",
    "locale_chain",
    "template_name",
]

DEFAULT_LOCALE = "en"
DEFAULT_FAMILY = "default"

#: The prompt kinds every profile has, with the file name of their template.
PROMPT_KINDS = ("system", "user", "write_memory")

#: Name of the file in a family's folder holding its macros, e.g. how resources are shown.
MACROS_FILE = "macros.j2"

#: Name of the model-family rules file at the top of a template root.
FAMILIES_FILE = "families.yaml"

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


def language_problem(language: str) -> str | None:
    """Why `language` cannot pick a locale, or None; the reason names the value, not the field.

    It is a path segment of the template lookup and is written into the prompt, so `" zh"` gave
    the English templates and "Always answer in  zh.", and `zh/../en` a template-path error.
    """
    trimmed = language.strip()
    if language != trimmed:
        if not trimmed:
            return "it is blank; write a tag such as en, zh or zh-TW, or leave it out for English"
        return f"{language!r} has spaces around it; write {trimmed!r}"
    bad = ("/", "\\", "..")
    if len(language) > 64 or any(part in language for part in bad) or not language.isprintable():
        return f"{language[:64]!r} is not a language; write a tag such as en, zh or zh-TW"
    return None


def template_name(kind: str, locale: str, family: str = DEFAULT_FAMILY) -> str:
    """The loader name of a bundled template, e.g. `default/zh/system.j2`."""
    return f"{family}/{locale}/{kind}.j2"


def candidate_names(kind: str, language: str | None, family: str = DEFAULT_FAMILY) -> tuple[str, ...]:
    """Loader names to try for a kind, in the documented order; roots are tried inside each name.

    `candidate_names("system", "zh-TW", "granite")` gives granite/zh-TW, default/zh-TW,
    granite/zh, default/zh, granite/en, default/en (each `/system.j2`).
    """
    families = (family, DEFAULT_FAMILY) if family != DEFAULT_FAMILY else (DEFAULT_FAMILY,)
    return tuple(template_name(kind, locale, name) for locale in locale_chain(language) for name in families)

#: Documented runtime inputs of each prompt kind, with the value used when a caller omits them.
PROMPT_INPUTS: dict[str, dict[str, object]] = {
    "system": {
        "question": None,
        "most_recent_memories": None,
        "resource_prompt": None,
        "out_schema": None,
        "now_time": None,
        "is_retry_chat": False,
        "resources": (),
    },
    "user": {"question": None, "most_recent_memories": None},
    "write_memory": {"question": None, "thought": None, "action": None, "observation": None},
    "react": {"question": None, "tools": (), "tool_names": ""},
}

#: Variables a replacement template of a kind must use, with why; `with_templates` checks them.
REQUIRED_VARIABLES: dict[str, dict[str, str]] = {
    "react": {
        "tools": "the model must be told what each tool does and which arguments it takes",
        "tool_names": "the model must be told which tool names the parser accepts",
    },
}
