"""`profiles diff` and the snapshot options of `profiles check`: how rendered prompts change.

`profiles diff PERSONA --deployment staging --deployment prod` renders the persona twice and prints
a unified diff per prompt kind. Each of `--deployment`, `--language`, `--model` given twice sets
the two sides; given once, it is the same on both. `--store-version KEY=V` given once pins that
store key on the second side only, so `--deployment prod --store-version summarizer/system=4`
shows what releasing v4 to prod would change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..errors import ConfigError, ProfilesError
from .options import parse_vars, rollout_key_option, showing_warnings, store_option, using_store
from .tables import echo_json

__all__ = ["diff", "run_snapshot"]


def _pair(name: str, values: tuple[str, ...]) -> tuple[Any, Any]:
    if len(values) > 2:
        raise click.BadParameter(
            "give it once (both sides) or twice (the first side, then the second)", param_hint=name
        )
    if not values:
        return None, None
    return (values[0], values[-1])


def _pins(text: str) -> dict[str, int]:
    """`KEY=V[,KEY=V…]` as a mapping; `-` (or an empty value) pins nothing."""
    if text.strip() in ("", "-"):
        return {}
    pins = {}
    for item in text.split(","):
        key, sep, version = item.strip().rpartition("=")
        number = version.strip().lstrip("v")
        if not sep or not key.strip() or not number.isdigit() or int(number) < 1:
            raise click.BadParameter(
                f"{item.strip()!r} is not KEY=VERSION, e.g. summarizer/system=4 (or - for none)",
                param_hint="--store-version",
            )
        pins[key.strip()] = int(number)
    return pins


@click.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--deployment", "-d", "deployments", multiple=True, help="A deployment; twice to compare two.")
@click.option("--language", "-l", "languages", multiple=True, help="A language; twice to compare two.")
@click.option("--model", "-m", "models", multiple=True, help="A model; twice to compare two.")
@click.option(
    "--store-version",
    "store_versions",
    multiple=True,
    metavar="KEY=V",
    help="Pin store keys to versions (KEY=V,KEY=V; - for none). Once: the second side only; twice: each side.",
)
@click.option("--question", "-q", help="The question passed to the prompts.")
@click.option("--var", "variables", multiple=True, metavar="KEY=VALUE", help="A template variable; repeatable.")
@click.option("--json", "as_json", is_flag=True, help="Print the sides and each prompt's diff as JSON.")
@store_option
@rollout_key_option
def diff(
    path: Path,
    deployments: tuple[str, ...],
    languages: tuple[str, ...],
    models: tuple[str, ...],
    store_versions: tuple[str, ...],
    question: str | None,
    variables: tuple[str, ...],
    as_json: bool,
    store_url: str | None,
    rollout_key: str | None,
) -> None:
    """Show how the rendered prompts of the persona in PATH differ between two contexts.

    Every prompt kind `profiles check` renders is rendered on both sides, with the persona's
    samples, and a unified diff is printed for each that differs.

    \b
    Examples:
      profiles diff persona.yaml --deployment staging --deployment prod
      profiles diff persona.yaml --language en --language zh
      profiles diff persona.yaml -d prod --store-version summarizer/system=4
    """
    from ..loader import load_profile
    from ..review import Side, diff_prompts

    given = parse_vars(variables)
    if question is not None:
        given["question"] = question
    if len(store_versions) > 2:
        raise click.BadParameter("give it once (the second side) or twice (each side)", param_hint="--store-version")
    pins = [_pins(text) for text in store_versions]
    before_pins, after_pins = ({}, pins[0]) if len(pins) == 1 else (pins[0], pins[1]) if pins else ({}, {})
    deployment = _pair("--deployment", deployments)
    language = _pair("--language", languages)
    model = _pair("--model", models)
    before = Side(deployment[0], language[0], model[0], before_pins)
    after = Side(deployment[1], language[1], model[1], after_pins)
    if before == after:
        raise click.UsageError(
            "both sides are the same; give --deployment, --language or --model twice, or --store-version"
        )
    with showing_warnings(), using_store(store_url):
        diffs = diff_prompts(load_profile(path), before, after, variables=given, rollout_key=rollout_key)
    if as_json:
        echo_json(
            {
                "before": before.label(),
                "after": after.label(),
                "prompts": [{"kind": item.kind, "changed": item.changed, "diff": item.diff} for item in diffs],
            }
        )
        return
    changed = [item for item in diffs if item.changed]
    for item in changed:
        click.echo(item.diff, nl=False)
    if not changed:
        click.echo(f"no difference in {len(diffs)} prompt(s) between {before.label()} and {after.label()}")


def run_snapshot(paths: tuple[Path, ...], write: Path | None, compare: Path | None) -> None:
    """`check --snapshot DIR` writes every rendered prompt; `--snapshot-check DIR` fails on any change."""
    from ..review import compare_snapshot, snapshot_prompts, write_snapshot

    snapshot = snapshot_prompts(paths)
    if snapshot.issues:
        raise ConfigError(snapshot.issues)
    if write is not None:
        changed, removed = write_snapshot(snapshot, write)
        click.echo(
            f"snapshot {write}: {len(snapshot.files)} prompt(s), {len(changed)} written, {len(removed)} removed"
        )
    if compare is not None:
        changes = compare_snapshot(snapshot, compare)
        for change in changes:
            click.echo(change.diff, nl=False)
        if changes:
            listing = "\n".join(f"  {change.status}: {change.name}" for change in changes)
            raise ProfilesError(
                f"{len(changes)} prompt(s) differ from the snapshot in {compare}:\n{listing}\n"
                f"review the diff above; to accept it, run "
                f"`profiles check {' '.join(map(str, paths))} --snapshot {compare}` and commit the folder"
            )
        click.echo(f"snapshot {compare}: {len(snapshot.files)} prompt(s), none changed")
