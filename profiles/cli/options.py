"""Options and helpers several commands share: `--var`, `--history`, `--store`, and warnings shown once."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from ..jsonlines import NestingError, escape_surrogates
from ..jsonlines import loads as load_json
from .output import labelled

__all__ = [
    "MAX_HISTORY_BYTES",
    "parse_vars",
    "read_history",
    "refuse_unsendable",
    "rollout_key_option",
    "showing_warnings",
    "store_option",
    "typed_vars",
    "using_store",
]

#: Largest `--history` file read.
MAX_HISTORY_BYTES = 2_000_000


def parse_vars(pairs: tuple[str, ...]) -> dict[str, str]:
    """`--var KEY=VALUE` pairs as a mapping; a pair without `=` is a usage error."""
    variables = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--var")
        refuse_undecodable(pair, f"--var {escape_surrogates(name.strip())}", "--var")
        variables[name.strip()] = value
    return variables


def refuse_undecodable(text: str | None, what: str, param_hint: str) -> None:
    """Refuse a command-line text holding bytes that are not UTF-8.

    Python hands such bytes over as lone surrogates (`\udcff` for the byte 0xFF): printed, they
    come out as the same invalid bytes, and a JSON body or message holding one is no text any API
    takes, so the command refuses them where they were given.
    """
    if not text:
        return
    found = _UNDECODABLE.search(text)
    if found is not None:
        code = ord(found.group())
        byte = f"the byte 0x{code - 0xDC00:02X}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"
        raise click.BadParameter(
            f"{what} holds {byte}, which is not UTF-8 text; give it in UTF-8 (check the terminal's or the "
            "script's encoding)",
            param_hint=param_hint,
        )


_UNDECODABLE = re.compile("[\ud800-\udfff]")


def refuse_unsendable(value: Any, what: str, param_hint: str) -> None:
    """Refuse JSON given on the command line that holds a lone surrogate (a bare `\\ud800` escape)
    or nests deeper than files may.

    `json.loads` reads a lone surrogate into a text no output can encode, and a value hundreds of
    levels deep exhausts the stack when a body is copied, so the command would fail only later,
    without saying where; here it fails first.
    """
    from ..jsonlines import MAX_JSON_DEPTH, SURROGATE_PROBLEM, lone_surrogate, nested_over

    if nested_over(value):
        raise click.BadParameter(
            f"{what} is nested over {MAX_JSON_DEPTH} levels deep; flatten the structure", param_hint=param_hint
        )
    found = lone_surrogate(value)
    if found is None:
        return
    path, code = found
    where = "".join(f"[{part!r}]" if isinstance(part, str) else f"[{part}]" for part in path)
    raise click.BadParameter(
        f"{what}{where} holds {code}, {SURROGATE_PROBLEM}",
        param_hint=param_hint,
    )


def typed_vars(inputs: Mapping[str, Any], given: Mapping[str, str]) -> dict[str, Any]:
    """`--var` texts read by each declared input's type (`max_steps=8` is 8 for an integer input)."""
    from ..inputs import InputSpecError

    typed: dict[str, Any] = {}
    for name, text in given.items():
        spec = inputs.get(name)
        if spec is None:
            typed[name] = text
            continue
        try:
            typed[name] = spec.from_text(text)
        except InputSpecError as exc:
            raise click.BadParameter(f"{name}: {exc.reason}", param_hint="--var") from None
        if not isinstance(typed[name], str):  # arrays and mappings are read as JSON
            refuse_unsendable(typed[name], name, "--var")
    return typed


def read_history(path: Path) -> list[Any]:
    """The chat turns of a `--history` JSON file: a list of {role, content} mappings, checked later."""
    from ..safe_yaml import read_at_most

    try:
        raw = read_at_most(path, MAX_HISTORY_BYTES)  # a pipe or device has no size to check first
        if raw is None:
            raise click.BadParameter(f"{path} is over {MAX_HISTORY_BYTES} bytes", param_hint="--history")
        data = load_json(raw.decode("utf-8-sig"))  # a BOM, as some editors write, is no JSON error
    except FileNotFoundError:
        raise click.BadParameter(f"{path} not found", param_hint="--history") from None
    except NestingError as exc:
        raise click.BadParameter(f"{path}: {exc}", param_hint="--history") from None
    except json.JSONDecodeError as exc:
        where = f"{path}:{exc.lineno}:{exc.colno}"
        what = "the file is empty" if not exc.doc.strip() else f"invalid JSON: {exc.msg}"
        raise click.BadParameter(
            f"{where}: {what}; the file holds one JSON list of turns, e.g. "
            '[{"role": "user", "content": "Hi"}]',
            param_hint="--history",
        ) from None
    except UnicodeDecodeError as exc:
        raise click.BadParameter(
            f"{path}: byte {exc.start} is not UTF-8 ({exc.reason}); save the file as UTF-8", param_hint="--history"
        ) from None
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise click.BadParameter(f"{path} cannot be read: {reason}", param_hint="--history") from None
    if not isinstance(data, list):
        raise click.BadParameter(f"{path} must hold a JSON list of turns", param_hint="--history")
    refuse_unsendable(data, str(path), "--history")
    return data


def store_option(command: Any) -> Any:
    """The `--store URL` option of commands that read personas."""
    return click.option(
        "--store",
        "store_url",
        metavar="URL",
        default=None,
        help="Prompt store for `provider: store` fields and `{store: …}` templates (a URL, the path of an "
        "existing store file, or http://host:port of a `profiles serve`). Beats PROFILES_STORE_URL; without "
        "either, .profiles/store.db in the working directory.",
    )(command)


def rollout_key_option(command: Any) -> Any:
    """The `--rollout-key KEY` option: which version of a rolled-out store label to read."""
    return click.option(
        "--rollout-key",
        metavar="KEY",
        default=None,
        help="A user or session id: picks one version of a store label rolled out over several "
        "(`profiles store rollout`), the same for the same key. Default: $PROFILES_ROLLOUT_KEY.",
    )(command)


@contextmanager
def using_store(url: str | None) -> Iterator[None]:
    """Answer `store` lookups from `url` for one command, then put the registered provider back."""
    if url is None:
        yield
        return
    # imported here: a command run without --store never loads the store's code
    from ..providers import store_answering_from
    from ..providers.http_store import is_http_store
    from ..store.location import check_store_value, resolve_store_url

    # a `profiles serve` is read through its API; anything else must name a database
    chosen = url.strip() if is_http_store(url) else resolve_store_url(check_store_value(url))
    with store_answering_from(chosen):
        yield


@contextmanager
def showing_warnings() -> Iterator[None]:
    """Print each warning raised inside as `Warning: …` on stderr, without Python's file and line."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            for warning in caught:
                click.echo(labelled("Warning", str(warning.message)), err=True)
