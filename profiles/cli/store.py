"""The ``profiles store`` commands: put, get, list, history, label, rollout, protect, diff, export, import.

A thin layer over ``PromptStore``: each command opens the store, calls one method and prints the
result. Errors the store raises on purpose are printed as ``Error: ...`` without a traceback.

Only the commands that write (``put``, ``label``, ``rollout``, ``protect``, ``unprotect`` and
``import``) may create a store; the others open it with ``create=False``, so a mistyped URL is
an error naming it, never a new empty database. ``--store`` is accepted on the group and on each
subcommand; given anywhere, it beats ``PROFILES_STORE_URL``.
"""

from __future__ import annotations

import getpass
import os
from typing import Any, BinaryIO

import click

from ..errors import ProfilesError
from ..providers.store import LATEST, StoreProvider
from ..store.location import STORE_URL_ENV, check_store_value, open_store
from .tables import echo_json, echo_table

__all__ = ["AUTHOR_ENV", "StoreCommandError", "store"]

#: Environment variable naming who writes, when `--author` is not given (else the login name).
AUTHOR_ENV = "PROFILES_AUTHOR"


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
    """Opens the store on first use, so ``--help`` and usage errors never touch the database.

    The URL is the last ``--store`` given (a subcommand's beats the group's), else
    ``PROFILES_STORE_URL``, else ``.profiles/store.db``; a value a person typed is checked first.
    """

    def __init__(self, url: str | None) -> None:
        self.url = url
        self._store: Any = None

    def __call__(self, *, write: bool = False) -> Any:
        if self._store is None:
            if self.url is not None:
                url: str | None = check_store_value(self.url)
            else:
                configured = os.environ.get(STORE_URL_ENV, "").strip()
                url = check_store_value(configured, origin=STORE_URL_ENV) if configured else None
            self._store = open_store(url, create=write)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


def _take_store(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:
        ctx.ensure_object(_Opener).url = value


_STORE_HELP = (
    "Store URL (sqlite:///file.db or postgresql+psycopg://...) or the path of an existing store file. "
    "Beats PROFILES_STORE_URL; without either, .profiles/store.db in the working directory."
)
_store = click.option(
    "--store", metavar="URL", default=None, expose_value=False, callback=_take_store, help=_STORE_HELP
)
_language = click.option("--language", "-l", default=None, help="Language tag, e.g. zh-TW (empty: any).")
_model = click.option("--model", "-m", default=None, help="Model name, e.g. gpt-4o (empty: any).")
_json = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
_expect = click.option(
    "--expect",
    type=click.IntRange(min=0),
    default=None,
    metavar="V",
    help="Move the label only if it still points at version V (0: only if it does not exist yet).",
)
_force = click.option("--force", is_flag=True, help="Move the label even if it is protected (`store protect`).")
_note = click.option("--note", default="", help="Why: kept with the version or the label move.")
_author = click.option("--author", default=None, help=f"Who (default: ${AUTHOR_ENV}, else your login name).")


def _who(author: str | None) -> str:
    if author is not None:
        return author
    configured = os.environ.get(AUTHOR_ENV, "").strip()
    if configured:
        return configured
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name, e.g. in a container without a passwd entry
        return ""


@click.group(name="store", cls=_StoreGroup)
@click.option("--store", "store_url", metavar="URL", default=None, help=_STORE_HELP)
@click.pass_context
def store(ctx: click.Context, store_url: str | None) -> None:
    """Keep versioned, labelled prompts in a SQLite or PostgreSQL store.

    \b
    Examples:
      profiles store put summarizer/name --label production --file name.txt
      profiles store label summarizer/name production 2 --expect 1
      profiles store history summarizer/name
      profiles store --store sqlite:///team.db list --json
    """
    opener = _Opener(store_url)
    ctx.obj = opener
    ctx.call_on_close(opener.close)


def _read_content(source: BinaryIO) -> str:
    """The text to store, read no further than the most a version may hold (a huge pipe stays unread)."""
    from ..store.keys import MAX_CONTENT_BYTES

    where = getattr(source, "name", "<stdin>")
    try:
        raw = source.read(MAX_CONTENT_BYTES + 1)
    except OSError as exc:  # a disk error, or a file the system cannot read (/proc/self/mem)
        raise ProfilesError(f"{where}: cannot read the file ({exc.strerror or exc}); check it") from None
    if len(raw) > MAX_CONTENT_BYTES:
        raise ProfilesError(
            f"{where}: over {MAX_CONTENT_BYTES:,} bytes, the most a stored prompt holds; shorten it or split it "
            "into several prompts"
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProfilesError(f"{where}: not UTF-8 text ({exc}); convert it to UTF-8") from exc


def _version_data(record: Any) -> dict[str, Any]:
    return {
        "name": record.name,
        "language": record.language,
        "model": record.model,
        "version": record.version,
        "created_at": record.created_at.isoformat(),
        "author": record.author,
        "note": record.note,
        "labels": list(record.labels),
        "content": record.content,
    }


def _move_data(move: Any) -> dict[str, Any]:
    return {
        "label": move.label,
        "seq": move.seq,
        "from": move.from_version,
        "to": move.to_version,
        "from_arms": [{"version": v, "weight": w} for v, w in move.from_arms],
        "to_arms": [{"version": v, "weight": w} for v, w in move.to_arms],
        "moved_at": move.moved_at.isoformat(),
        "author": move.author,
        "note": move.note,
        "undoes": move.undoes,
    }


def _time(moment: Any) -> str:
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


@store.command()
@click.argument("name")
@click.option(
    "--file", "-f", "source", type=click.File("rb"), default="-", help="Read the content from F ('-': stdin)."
)
@_language
@_model
@click.option("--label", default=None, help="Point this label at the new version (or the unchanged newest).")
@_expect
@_force
@_note
@_author
@_store
@click.pass_obj
def put(
    opener: _Opener,
    name: str,
    source: BinaryIO,
    language: str | None,
    model: str | None,
    label: str | None,
    expect: int | None,
    force: bool,
    note: str,
    author: str | None,
) -> None:
    """Add a new version of prompt NAME; text equal to the newest version adds none.

    \b
    Examples:
      profiles store put summarizer/name --label production --file name.txt --note "first name"
      echo "Socrates" | profiles store put summarizer/name
    """
    content = _read_content(source)
    if not content.strip():  # refused before the store is opened, so a failed put creates nothing
        raise ProfilesError(
            f"the content for {name} is empty; a prompt needs text (give --file FILE or pipe the text in)"
        )
    record = opener(write=True).put(
        name,
        content,
        language=language,
        model=model,
        author=_who(author),
        note=note,
        label=label,
        expect=expect,
        force=force,
    )
    labels = f" ({', '.join(record.labels)})" if record.labels else ""
    if record.unchanged:
        click.echo(f"unchanged (v{record.version}): {record.ref} already holds this text{labels}")
    else:
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
@click.option(
    "--rollout-key", default=None, metavar="KEY", help="For a rolled-out label: the version this key gets."
)
@_json
@_store
@click.pass_obj
def get(
    opener: _Opener,
    name: str,
    language: str | None,
    model: str | None,
    label: str | None,
    version: int | None,
    deployment: str | None,
    rollout_key: str | None,
    as_json: bool,
) -> None:
    """Print the best matching version of prompt NAME (language, then model fallbacks).

    \b
    Examples:
      profiles store get summarizer/name --label production
      profiles store get summarizer/name --deployment staging --json
    """
    matched = label
    if deployment is not None:
        if label is not None or version is not None:
            raise click.UsageError("give --deployment, --label or --version, not several")
        chain = StoreProvider().chain_for(deployment)
        record, matched = opener().find(
            name,
            language=language,
            model=model,
            labels=[None if item == LATEST else item for item in chain],
            rollout_key=rollout_key,
        )
    else:
        record = opener().get(
            name, language=language, model=model, label=label, version=version, rollout_key=rollout_key
        )
    if as_json:
        data = _version_data(record)
        if version is None:
            data["matched_label"] = matched if matched is not None else LATEST
        echo_json(data)
        return
    click.echo(record.content, nl=False)


@store.command(name="list")
@_json
@_store
@click.pass_obj
def list_(opener: _Opener, as_json: bool) -> None:
    """List every prompt: name, language, model, versions and labels.

    \b
    Example:
      profiles store list --json
    """
    summaries = opener().list()
    if as_json:
        echo_json(
            [
                {
                    "name": summary.name,
                    "language": summary.language,
                    "model": summary.model,
                    "versions": summary.latest_version,
                    "updated_at": summary.updated_at.isoformat(),
                    "labels": dict(summary.labels),
                    "rollouts": {
                        label: [{"version": v, "weight": w} for v, w in arms] for label, arms in summary.rollouts
                    },
                }
                for summary in summaries
            ]
        )
        return
    echo_table(
        ("name", "language", "model", "versions", "labels"),
        [
            (
                summary.name,
                summary.language,
                summary.model,
                summary.latest_version,
                " ".join(summary.label_text(label, version) for label, version in summary.labels),
            )
            for summary in summaries
        ],
    )


@store.command()
@click.argument("name")
@_language
@_model
@_json
@_store
@click.pass_obj
def history(opener: _Opener, name: str, language: str | None, model: str | None, as_json: bool) -> None:
    """Show every version of prompt NAME, oldest first, and every move of its labels.

    \b
    Example:
      profiles store history summarizer/name
    """
    opened = opener()
    records = opened.history(name, language=language, model=model)
    moves = opened.moves(name, language=language, model=model)
    if as_json:
        echo_json({"versions": [_version_data(record) for record in records], "moves": [_move_data(m) for m in moves]})
        return
    echo_table(
        ("version", "time", "author", "note", "labels"),
        [
            (f"v{record.version}", _time(record.created_at), record.author, record.note, ", ".join(record.labels))
            for record in records
        ],
    )
    if moves:
        click.echo("")
        echo_table(
            ("label", "move", "from", "to", "time", "author", "note"),
            [
                (move.label, f"#{move.seq}", move.before, move.after, _time(move.moved_at), move.author, move.note)
                for move in moves
            ],
            title="label moves",
        )


@store.command()
@click.argument("name")
@click.argument("label")
@click.argument("version", type=click.IntRange(min=1), required=False)
@click.option("--undo", is_flag=True, help="Move LABEL back to where it pointed before its last move.")
@_language
@_model
@_expect
@_force
@_note
@_author
@_store
@click.pass_obj
def label(
    opener: _Opener,
    name: str,
    label: str,
    version: int | None,
    undo: bool,
    language: str | None,
    model: str | None,
    expect: int | None,
    force: bool,
    note: str,
    author: str | None,
) -> None:
    """Point LABEL of prompt NAME at VERSION (moving it if it points elsewhere); every move is recorded.

    \b
    Examples:
      profiles store label summarizer/name production 2 --expect 1 --note "release 2"
      profiles store label summarizer/name production --undo
    """
    if undo == (version is not None):
        raise click.UsageError("give VERSION, or --undo without a VERSION")
    if undo:
        move = opener(write=True).undo_label(
            name, label, language=language, model=model, expect=expect, force=force, author=_who(author), note=note
        )
        if move.to_version is None:
            click.echo(f"{label} removed from {name} (undid move #{move.undoes})")
        else:
            click.echo(f"{label} -> {name} {move.after} (undid move #{move.undoes})")
        return
    assert version is not None
    record = opener(write=True).set_label(
        name, label, version, language=language, model=model, expect=expect, force=force, author=_who(author), note=note
    )
    click.echo(f"{label} -> {record.ref}")


def _arm(text: str) -> tuple[int, int]:
    version, sep, weight = text.partition("=")
    try:
        if not sep:
            raise ValueError
        return int(version.strip().lstrip("v")), int(weight.strip().rstrip("%"))
    except ValueError:
        raise click.BadParameter(f"{text!r} is not VERSION=WEIGHT, e.g. 3=90", param_hint="ARMS") from None


@store.command()
@click.argument("name")
@click.argument("label")
@click.argument("arms", nargs=-1, required=True)
@_language
@_model
@_expect
@_force
@_note
@_author
@_store
@click.pass_obj
def rollout(
    opener: _Opener,
    name: str,
    label: str,
    arms: tuple[str, ...],
    language: str | None,
    model: str | None,
    expect: int | None,
    force: bool,
    note: str,
    author: str | None,
) -> None:
    """Point LABEL of prompt NAME at several versions with weights (ARMS: VERSION=WEIGHT ...).

    A lookup with a rollout key (create_profile(rollout_key=...), PROFILES_ROLLOUT_KEY) gets the
    same version for the same key every time, in proportion to the weights; without a key, the
    first version. Move the label to one version to end the rollout.

    \b
    Example:
      profiles store rollout summarizer/name production 1=90 2=10
    """
    parsed = [_arm(item) for item in arms]
    placed = opener(write=True).rollout(
        name, label, parsed, language=language, model=model, expect=expect, force=force, author=_who(author), note=note
    )
    total = sum(arm.weight for arm in placed)
    shares = ", ".join(f"v{arm.record.version} ({arm.weight * 100 / total:g}%)" for arm in placed)
    click.echo(f"{label} -> {placed[0].record.name} {shares}")


@store.command()
@click.argument("labels", nargs=-1)
@_author
@_json
@_store
@click.pass_obj
def protect(opener: _Opener, labels: tuple[str, ...], author: str | None, as_json: bool) -> None:
    """Protect LABELS in the whole store: moving one then needs --force. Without LABELS, list them.

    \b
    Examples:
      profiles store protect production
      profiles store protect --json
    """
    if labels:
        opened = opener(write=True)
        for item in labels:
            changed = opened.protect(item, author=_who(author))
            click.echo(f"protected {item}" if changed else f"{item} was protected already")
        return
    found = opener().protected_labels()
    if as_json:
        echo_json([{"label": p.label, "protected_at": p.protected_at.isoformat(), "author": p.author} for p in found])
        return
    echo_table(("label", "since", "by"), [(p.label, _time(p.protected_at), p.author) for p in found])


@store.command()
@click.argument("labels", nargs=-1, required=True)
@_store
@click.pass_obj
def unprotect(opener: _Opener, labels: tuple[str, ...]) -> None:
    """Lift the protection of LABELS.

    \b
    Example:
      profiles store unprotect production
    """
    opened = opener(write=True)
    for item in labels:
        click.echo(f"unprotected {item}" if opened.unprotect(item) else f"{item} was not protected")


@store.command()
@click.argument("name")
@click.argument("v1", type=click.IntRange(min=1))
@click.argument("v2", type=click.IntRange(min=1))
@_language
@_model
@_json
@_store
@click.pass_obj
def diff(
    opener: _Opener, name: str, v1: int, v2: int, language: str | None, model: str | None, as_json: bool
) -> None:
    """Show a unified diff of prompt NAME from version V1 to V2.

    \b
    Example:
      profiles store diff summarizer/name 1 2
    """
    text = opener().diff(name, v1, v2, language=language, model=model)
    if as_json:
        echo_json({"name": name, "from": v1, "to": v2, "diff": text})
        return
    click.echo(text, nl=False)


@store.command(name="export")
@click.argument("directory", type=click.Path(file_okay=False))
@_json
@_store
@click.pass_obj
def export_(opener: _Opener, directory: str, as_json: bool) -> None:
    """Write every prompt to DIRECTORY as YAML files (one per name, language and model).

    \b
    Example:
      profiles store export prompts/
    """
    written = opener().export(directory)
    if as_json:
        echo_json({"directory": directory, "files": [str(path) for path in written]})
        return
    click.echo(f"exported {len(written)} prompt file(s) to {directory}")


@store.command(name="import")
@click.argument("directory", type=click.Path(file_okay=False))
@_force
@_author
@_store
@click.pass_obj
def import_(opener: _Opener, directory: str, force: bool, author: str | None) -> None:
    """Add the versions and labels of the YAML files in DIRECTORY; already present ones are skipped.

    \b
    Example:
      profiles store import prompts/
    """
    result = opener(write=True).import_(directory, force=force, author=_who(author))
    click.echo(f"added {result.versions_added} version(s), moved {result.labels_moved} label(s)")
