"""Options and helpers several commands share: `--var`, `--store`, and warnings shown once."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from ..providers import get_provider, register_provider
from ..providers.store import StoreProvider
from ..store.location import resolve_store_url
from .output import labelled

__all__ = ["parse_vars", "showing_warnings", "store_option", "using_store"]


def parse_vars(pairs: tuple[str, ...]) -> dict[str, str]:
    """`--var KEY=VALUE` pairs as a mapping; a pair without `=` is a usage error."""
    variables = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--var")
        variables[name.strip()] = value
    return variables


def store_option(command: Any) -> Any:
    """The `--store URL` option of commands that read personas."""
    return click.option(
        "--store",
        "store_url",
        metavar="URL",
        default=None,
        help="Prompt store for `provider: store` fields and `{store: …}` templates. PROFILES_STORE_URL, "
        "when set, wins over this; without either, .profiles/store.db in the working directory.",
    )(command)


@contextmanager
def using_store(url: str | None) -> Iterator[None]:
    """Answer `store` lookups from `url` for one command, then put the registered provider back."""
    if url is None:
        yield
        return
    previous = get_provider("store")
    provider = StoreProvider(resolve_store_url(url))
    register_provider("store", provider)
    try:
        yield
    finally:
        register_provider("store", previous)
        provider.close()


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
