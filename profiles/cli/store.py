"""The ``profiles store`` commands: put, get, list, history, label, diff, export and import prompts.

A thin layer over ``PromptStore``: each command opens the store, calls one method and prints the
result. Errors the store raises on purpose are printed as ``Error: ...`` without a traceback.
"""

from __future__ import annotations

from typing import Any, BinaryIO

import click

from ..errors import ProfilesError
from ..providers.store import LATEST, StoreProvider
from ..store.location import open_store

__all__ = ["StoreCommandError", "store"]


class StoreCommandError(click.ClickException):
    """A ``ProfilesError`` shown the click way: ``Error: <message>`` on stderr, the error's exit code."""

    def __init__(self, error: ProfilesError) -> None:
        super().__init__(error.message)
        # per instance: the error decides (2 for a user's mistake, 1 for a fault of ours)
        self.exit_code = error.exit_code  # type: ignore[misc]


class _StoreGroup(click.Group):
    """Turns ``ProfilesError`` from any subcommand into a ``StoreCommandError``."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ProfilesError as exc:
            raise StoreCommandError(exc) from exc


class _Opener:
    """Opens the store on first use, so ``--help`` and usage errors never touch the database."""

    def __init__(self, url: str | None) -> None:
        self.url = url
        self._store: Any = None

    def __call__(self) -> Any:
        if self._store is None:
            self._store = open_store(self.url)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


_language = click.option("--language", "-l", default=None, help="Language tag, e.g. zh-TW (empty: any).")
_model = click.option("--model", "-m", default=None, help="Model name, e.g. gpt-4o (empty: any).")


@click.group(name="store", cls=_StoreGroup)
@click.option(
    "--store",
    "store_url",
    metavar="URL",
    default=None,
    help="Store URL (sqlite:///file.db or postgresql+psycopg://...). PROFILES_STORE_URL, when set, "
    "wins over this; without either, .profiles/store.db in the working directory is used.",
)
@click.pass_context
def store(ctx: click.Context, store_url: str | None) -> None:
    """Keep versioned, labelled prompts in a SQLite or PostgreSQL store."""
    opener = _Opener(store_url)
    ctx.obj = opener
    ctx.call_on_close(opener.close)


@store.command()
@click.argument("name")
@click.option(
    "--file", "-f", "source", type=click.File("rb"), default="-", help="Read the content from F ('-': stdin)."
)
@_language
@_model
@click.option("--label", default=None, help="Point this label at the new version.")
@click.option("--note", default="", help="Why this version exists.")
@click.option("--author", default="", help="Who wrote it.")
@click.pass_obj
def put(
    opener: _Opener,
    name: str,
    source: BinaryIO,
    language: str | None,
    model: str | None,
    label: str | None,
    note: str,
    author: str,
) -> None:
    """Add a new version of prompt NAME."""
    raw = source.read()
    try:
        content = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = getattr(source, "name", "<stdin>")
        raise StoreCommandError(
            ProfilesError(f"{where}: not UTF-8 text ({exc}); convert it to UTF-8")
        ) from exc
    record = opener().put(
        name, content, language=language, model=model, author=author, note=note, label=label
    )
    labels = f" ({', '.join(record.labels)})" if record.labels else ""
    click.echo(f"stored {record.ref}{labels}")


@store.command()
@click.argument("name")
@_language
@_model
@click.option("--label", default=None, help="Read the version this label points at.")
@click.option("--version", "version", type=click.IntRange(min=1), default=None, help="Read this version.")
@click.option(
    "--deployment",
    "-d",
    default=None,
    help="Read what the `store` provider gives this deployment: its label chain, e.g. "
    "staging → production → latest (see PROFILES_STORE_LABELS).",
)
@click.pass_obj
def get(
    opener: _Opener,
    name: str,
    language: str | None,
    model: str | None,
    label: str | None,
    version: int | None,
    deployment: str | None,
) -> None:
    """Print the best matching version of prompt NAME (language, then model fallbacks)."""
    if deployment is not None:
        if label is not None or version is not None:
            raise click.UsageError("give --deployment, --label or --version, not several")
        chain = StoreProvider().chain_for(deployment)
        record, _ = opener().find(
            name, language=language, model=model, labels=[None if item == LATEST else item for item in chain]
        )
    else:
        record = opener().get(name, language=language, model=model, label=label, version=version)
    click.echo(record.content, nl=False)


@store.command(name="list")
@click.pass_obj
def list_(opener: _Opener) -> None:
    """List every prompt with its newest version and labels."""
    for summary in opener().list():
        labels = " ".join(f"{label}=v{version}" for label, version in summary.labels)
        click.echo(
            f"{summary.name}\t{summary.language or '-'}\t{summary.model or '-'}\t"
            f"v{summary.latest_version}\t{labels}".rstrip()
        )


@store.command()
@click.argument("name")
@_language
@_model
@click.pass_obj
def history(opener: _Opener, name: str, language: str | None, model: str | None) -> None:
    """Show every version of prompt NAME, oldest first."""
    for record in opener().history(name, language=language, model=model):
        labels = ",".join(record.labels)
        click.echo(
            f"v{record.version}\t{record.created_at.isoformat(timespec='seconds')}\t"
            f"{record.author or '-'}\t{labels or '-'}\t{record.note}".rstrip()
        )


@store.command()
@click.argument("name")
@click.argument("label")
@click.argument("version", type=click.IntRange(min=1))
@_language
@_model
@click.pass_obj
def label(
    opener: _Opener, name: str, label: str, version: int, language: str | None, model: str | None
) -> None:
    """Point LABEL of prompt NAME at VERSION (moving it if it points elsewhere)."""
    record = opener().set_label(name, label, version, language=language, model=model)
    click.echo(f"{label} -> {record.ref}")


@store.command()
@click.argument("name")
@click.argument("v1", type=click.IntRange(min=1))
@click.argument("v2", type=click.IntRange(min=1))
@_language
@_model
@click.pass_obj
def diff(opener: _Opener, name: str, v1: int, v2: int, language: str | None, model: str | None) -> None:
    """Show a unified diff of prompt NAME from version V1 to V2."""
    click.echo(opener().diff(name, v1, v2, language=language, model=model), nl=False)


@store.command(name="export")
@click.argument("directory", type=click.Path(file_okay=False))
@click.pass_obj
def export_(opener: _Opener, directory: str) -> None:
    """Write every prompt to DIRECTORY as YAML files (one per name, language and model)."""
    written = opener().export(directory)
    click.echo(f"exported {len(written)} prompt file(s) to {directory}")


@store.command(name="import")
@click.argument("directory", type=click.Path(file_okay=False))
@click.pass_obj
def import_(opener: _Opener, directory: str) -> None:
    """Add the versions and labels of the YAML files in DIRECTORY; already present ones are skipped."""
    result = opener().import_(directory)
    click.echo(f"added {result.versions_added} version(s), moved {result.labels_moved} label(s)")
