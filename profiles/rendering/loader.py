"""A template loader confined to its folders: no `..`, no absolute paths, no symlink out.

Jinja's `FileSystemLoader` follows symlinks out of its search path, and template names come from
user YAML and from `{% include %}`/`{% extends %}`/`{% import %}` inside templates. This loader
resolves each candidate's real path and refuses it unless it lies inside the real path of the
root it was found under.

A loader may also hold `sources`, named template texts that are not files (a profile's parts
fetched from elsewhere, such as stored prompts that its templates include). They are consulted
first, by exact name, and are bounded like files.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from jinja2 import BaseLoader, TemplateNotFound

from ..errors import RenderError
from .budget import MAX_SOURCE_CHARS

__all__ = ["ConfinedLoader"]


class ConfinedLoader(BaseLoader):
    """Load `<root>/<name>` from the first root that has it, refusing names that lead outside.

    Raises `RenderError` for a name that is absolute, holds `..`, or resolves (through a symlink)
    outside its root, and for a file over `MAX_SOURCE_CHARS` bytes; `TemplateNotFound` when no
    root holds the file. A name in `sources` is served from there, before any root.
    """

    def __init__(
        self, roots: Iterable[str | os.PathLike[str]], sources: Mapping[str, str] | None = None
    ) -> None:
        self.roots = [os.path.realpath(root) for root in roots]
        self.sources: Mapping[str, str] = dict(sources or {})

    def get_source(self, environment: Any, template: str) -> tuple[str, str | None, Callable[[], bool]]:
        text = self.sources.get(template) if isinstance(template, str) else None
        if text is not None:
            if len(text) > MAX_SOURCE_CHARS:
                raise RenderError(f"template {template!r} is over the size limit for a template")
            return text, None, _always  # a source never changes under the same loader
        parts = _split(template)
        for root in self.roots:
            path = os.path.join(root, *parts)
            if not os.path.lexists(path):
                continue
            real = os.path.realpath(path)
            if os.path.commonpath([real, root]) != root:
                raise RenderError(
                    f"template {template!r} leads outside its folder {root} (through a symlink); "
                    "keep templates inside their template root"
                )
            if not os.path.isfile(real):
                continue
            if os.path.getsize(real) > MAX_SOURCE_CHARS * 4:
                raise RenderError(f"template {template!r} is over the size limit for a template")
            try:
                source = Path(real).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise RenderError(f"template {template!r} cannot be read: {type(exc).__name__}") from None
            return source, real, _uptodate(real)
        raise TemplateNotFound(template)

    def list_templates(self) -> list[str]:
        found = set(self.sources)
        for root in self.roots:
            for folder, dirs, files in os.walk(root):
                dirs[:] = [name for name in dirs if not name.startswith(".")]
                for file in files:
                    if file.startswith("."):
                        continue
                    found.add(os.path.relpath(os.path.join(folder, file), root).replace(os.sep, "/"))
        return sorted(found)


def _always() -> bool:
    return True


def _uptodate(path: str) -> Callable[[], bool]:
    mtime = os.path.getmtime(path)
    return lambda: os.path.exists(path) and os.path.getmtime(path) == mtime


def _split(template: str) -> list[str]:
    if not isinstance(template, str) or not template or "\x00" in template:
        raise RenderError(f"template name {template!r} is not a path; name a file inside a template root")
    name = template.replace("\\", "/")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise RenderError(f"template name {template!r} is absolute; name it relative to its template root")
    parts = [part for part in name.split("/") if part and part != "."]
    if ".." in parts:
        raise RenderError(f"template name {template!r} holds '..'; name a file inside its template root")
    if not parts:
        raise RenderError(f"template name {template!r} names no file")
    if any(part.startswith(".") for part in parts):
        # `.env` files, `.git/` and editor backups live beside templates and may hold secrets
        raise RenderError(
            f"template name {template!r} names a hidden file or folder; templates never come from "
            "names starting with '.', so keep a template's name visible"
        )
    return parts
