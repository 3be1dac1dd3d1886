"""The commands over persona files: `render`, `validate`, `check`, `explain` and `schema`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from ..errors import ConfigError
from ..history import APIS
from ..jsonlines import loads as load_json
from .options import (
    parse_vars,
    read_history,
    refuse_undecodable,
    refuse_unsendable,
    rollout_key_option,
    showing_warnings,
    store_option,
    typed_vars,
    using_store,
)

__all__ = ["check", "explain", "render", "schema", "validate"]

KINDS = ("system", "user", "write_memory")

#: Arguments of `format_messages` and `to_request` that have an option of their own, not a `--var`.
_LAYOUT_OPTIONS = {
    "history": "use --history FILE",
    "style": "use --style",
    "api": "use --request API",
    "settings": "set model_settings: in the persona",
    "unsupported": "settings an API does not take are left out of its request",
}


def _pick_options(command: Any) -> Any:
    """`--name` and `--index`: which persona of a file of several `---` documents."""
    command = click.option(
        "--index",
        type=click.IntRange(min=1),
        help="In a file of several personas, the one at this place (1 is the first).",
    )(command)
    return click.option(
        "--name", "persona_name", metavar="NAME", help="In a file of several personas, the one named NAME."
    )(command)


@click.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--question", "-q", help="The question passed to the prompts.")
@click.option(
    "--var",
    "variables",
    multiple=True,
    metavar="KEY=VALUE",
    help="A template variable, or an input of the prompt (question, most_recent_memories, thought, …; "
    "resources and tools as JSON, is_retry_chat as true/false); repeatable.",
)
@click.option("--language", "-l", help="Answer language and template locale, e.g. en, zh, zh-TW.")
@click.option("--model", "-m", help="The model the prompts are for.")
@click.option(
    "--deployment",
    "-d",
    help="The deployment (dev, prod, a customer, …): picks the persona's overlay and .env.<deployment>. "
    "Default: $PROFILES_DEPLOYMENT.",
)
@click.option(
    "--kind",
    default="all",
    show_default=True,
    help="Which prompt to render: system, user, write_memory, react, a kind from a template root, or all.",
)
@click.option("--strict", is_flag=True, help="Refuse variables the templates do not use.")
@click.option("--json", "as_json", is_flag=True, help="Print the prompts as a JSON object.")
@click.option(
    "--messages",
    "as_messages",
    is_flag=True,
    help="Print the chat messages as JSON: the prompts in the persona's message layout, with --history in its slot.",
)
@click.option(
    "--style",
    type=click.Choice(["openai", "anthropic"]),
    default="openai",
    show_default=True,
    help="With --messages: OpenAI's message list, or Anthropic's {system, messages}.",
)
@click.option(
    "--request",
    "request_api",
    type=click.Choice(APIS),
    help="Print the whole request body for this API as JSON: messages, tools, output schema and model settings.",
)
@click.option(
    "--history",
    "history_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="A JSON file holding a list of chat turns ({role, content}, OpenAI Chat shape), for --messages and --request.",
)
@_pick_options
@store_option
@rollout_key_option
def render(
    path: Path,
    question: str | None,
    variables: tuple[str, ...],
    language: str | None,
    model: str | None,
    deployment: str | None,
    kind: str,
    strict: bool,
    as_json: bool,
    as_messages: bool,
    style: str,
    request_api: str | None,
    history_file: Path | None,
    persona_name: str | None,
    index: int | None,
    store_url: str | None,
    rollout_key: str | None,
) -> None:
    """Render the prompts of the persona in PATH, as text, chat messages or a request body.

    A --var value is read by the type its input declares (--var max_steps=8 is the integer 8
    when 'inputs:' says integer; arrays and mappings are JSON).

    With --kind all (the default), a prompt that comes out empty (the user prompt without a
    question, say) is left out, and a line on standard error says which were.

    \b
    Examples:
      profiles render profile_configs/planner.yaml --var agents="Searcher, Coder" -q "Plan a trip"
      profiles render profile_configs/summarizer.yaml --deployment prod --kind system
      profiles render profile_configs/triage.yaml --messages --var ticket="My invoice is wrong"
      profiles render profile_configs/triage.yaml --request anthropic --var ticket="Site down" --var max_labels=2
      profiles render team.yaml --name Grace --var most_recent_memories="Asked about invoices"
    """
    from ..loader import load_profile

    given = parse_vars(variables)
    for option, text in (("--question", question), ("--language", language), ("--model", model),
                         ("--deployment", deployment)):
        refuse_undecodable(text, option, option)
    if as_messages and request_api:
        raise click.UsageError("give --messages or --request, not both")
    if (as_messages or request_api) and kind != "all":
        raise click.UsageError("--kind renders one prompt; --messages and --request render the persona's layout")
    if history_file is not None and not (as_messages or request_api):
        raise click.UsageError("--history goes with --messages or --request")
    history = read_history(history_file) if history_file is not None else None
    if question is not None and "question" in given:
        raise click.UsageError("give the question once: --question or --var question=…, not both")
    for reserved, instead in (("strict", "--strict"), ("kind", "--kind")):
        if reserved in given:
            raise click.BadParameter(
                f"{reserved!r} names an option of rendering, not a variable; use {instead}", param_hint="--var"
            )
    if question is not None:
        given["question"] = question
    with showing_warnings(), using_store(store_url):  # e.g. an unknown model, shown once
        config = load_profile(path, name=persona_name, index=index)
        profile = config.create_profile(
            language=language, model=model, deployment=deployment, rollout_key=rollout_key
        )
    given = typed_vars(getattr(profile, "inputs", {}), given)
    if as_messages or request_api:
        for reserved, instead in _LAYOUT_OPTIONS.items():
            if reserved in given:
                raise click.BadParameter(
                    f"{reserved!r} names an option of --messages and --request, not a variable; {instead}",
                    param_hint="--var",
                )
        values = _inputs("system", given)  # resources and tools as JSON, is_retry_chat as true/false
        asked = values.pop("question", None)
        if request_api:
            out = profile.to_request(asked, api=request_api, history=history, strict=strict, **values)
        else:
            out = profile.format_messages(asked, history=history, style=style, strict=strict, **values)
        click.echo(json.dumps(out, ensure_ascii=False, indent=2))
        return
    known = profile.known_kinds() if hasattr(profile, "known_kinds") else KINDS
    if kind != "all" and kind not in known:
        raise click.BadParameter(
            f"{kind!r} is not a prompt kind; known kinds are {', '.join(known)}, all", param_hint="--kind"
        )
    kinds = KINDS if kind == "all" else (kind,)
    together = strict and kind == "all" and hasattr(profile, "check_strict")
    if together:  # a variable the system prompt uses need not be used by the write-memory prompt too
        profile.check_strict(kinds, _inputs("system", given))
    prompts = {}
    skipped = []
    for name in kinds:
        text = profile.format_prompt(name, strict=strict and not together, **_inputs(name, given))
        if kind == "all" and not text.strip():
            skipped.append(name)
            continue
        prompts[name] = text
    if skipped:
        click.echo(_skipped(skipped), err=True)
    if as_json:
        click.echo(json.dumps(prompts, ensure_ascii=False, indent=2))
        return
    for number, (name, text) in enumerate(prompts.items()):
        if len(prompts) > 1:
            click.echo(("\n" if number else "") + f"===== {name} prompt =====")
        click.echo(text)


def _inputs(kind: str, given: dict[str, str]) -> dict[str, Any]:
    """`--var` values as a prompt kind takes them: JSON for resources and tools, true/false for flags."""
    from ..rendering.templates import PROMPT_INPUTS

    values: dict[str, Any] = dict(given)
    for name in ("resources", "tools"):
        if name in values:
            try:
                values[name] = load_json(values[name])
            except ValueError as exc:
                raise click.BadParameter(
                    f"{name} must be JSON, e.g. {name}='[{{\"content\": \"…\"}}]' ({exc})", param_hint="--var"
                ) from None
            refuse_unsendable(values[name], name, "--var")
    for name, default in PROMPT_INPUTS.get(kind, {}).items():
        if isinstance(default, bool) and name in values:
            values[name] = _flag(name, values[name])
    return values


def _flag(name: str, text: Any) -> bool:
    words = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False, "0": False}
    value = words.get(str(text).strip().lower())
    if value is None:
        raise click.BadParameter(f"{name} must be true or false, got {text!r}", param_hint="--var")
    return value


def _skipped(kinds: list[str]) -> str:
    from ..rendering.templates import PROMPT_INPUTS

    def one(kind: str) -> str:
        inputs = [name for name in PROMPT_INPUTS.get(kind, {}) if name not in ("resources", "tools", "tool_names")]
        return f"{kind} (give {', '.join(inputs)})" if inputs else kind

    names = " and ".join(one(kind) for kind in kinds)
    what = "prompts" if len(kinds) > 1 else "prompt"
    return f"skipped the empty {what} {names}: pass the question with --question, the rest with --var NAME=…"


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
def validate(paths: tuple[Path, ...]) -> None:
    """Check persona files (or folders of them) without rendering; list every problem, exit 2 if any.

    Every field is validated, every template and field template is compiled, and a variable or
    prompt kind that looks like a typo of a known one is an error with a did-you-mean hint. One
    line per persona: a file of several `---` documents prints FILE#N for each.

    \b
    Example:
      profiles validate profile_configs/
    """
    from ..loader import load_persona_files
    from ..validate import validate_config

    problems = []
    checked = 0
    with showing_warnings():  # e.g. an input no template reads
        files = load_persona_files(list(paths))
    for loaded in files:
        problems.extend(loaded.issues)
        checked += bool(loaded.issues)
        for index, config in enumerate(loaded.configs, start=1):
            checked += 1
            issues = validate_config(config)
            if issues:
                problems.extend(issues)
                continue
            click.echo(f"ok {loaded.label(index)}")
    if problems:
        raise ConfigError(problems)
    if not checked:
        raise ConfigError("no persona files (*.yaml, *.yml) found; name a file or a folder that holds some")


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--snapshot",
    "snapshot_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write every rendered prompt (each persona × deployment × kind) to files in DIR.",
)
@click.option(
    "--snapshot-check",
    "snapshot_check_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Compare every rendered prompt with the snapshot in DIR; list and diff what changed, exit 2 if any.",
)
@store_option
def check(
    paths: tuple[Path, ...], snapshot_dir: Path | None, snapshot_check_dir: Path | None, store_url: str | None
) -> None:
    """Load and render every persona in PATHS with its samples; list every problem, exit 2 if any.

    \b
    Examples:
      profiles check profile_configs/
      profiles check profile_configs/ --snapshot prompts.snapshot/
      profiles check profile_configs/ --snapshot-check prompts.snapshot/
    """
    from ..check import check_paths
    from .review import run_snapshot

    with showing_warnings(), using_store(store_url):
        report = check_paths(paths)
        for file in report.checked:
            click.echo(f"ok {file}")
        if not report.ok:
            raise ConfigError(report.issues)
        if snapshot_dir is not None or snapshot_check_dir is not None:
            run_snapshot(paths, snapshot_dir, snapshot_check_dir)


@click.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--deployment",
    "-d",
    help="The deployment to explain the persona for. Default: $PROFILES_DEPLOYMENT.",
)
@click.option("--language", "-l", help="Answer language and template locale, e.g. en, zh, zh-TW.")
@click.option("--model", "-m", help="The model the prompts are for.")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as a JSON array.")
@_pick_options
@store_option
@rollout_key_option
def explain(
    path: Path,
    deployment: str | None,
    language: str | None,
    model: str | None,
    as_json: bool,
    persona_name: str | None,
    index: int | None,
    store_url: str | None,
    rollout_key: str | None,
) -> None:
    """Show each field of the persona in PATH, its value and where it came from.

    Sources read like `yaml:profile_configs/summarizer.yaml:12`, `overlay staging: …:31`,
    `env:SUMMARY_PROFILE_NAME from profile_configs/.env.prod`, `store:summarizer/name v3
    label=production` (the label of the deployment's chain that matched, and the rollout arm when
    the label is rolled out) or `default`. Templates from the store and the stored prompts they
    include follow as `templates.<kind>` and `include store:<name>`. Secrets show as ***.

    \b
    Example:
      profiles explain profile_configs/summarizer.yaml --deployment prod
    """
    from ..explanation import explain as explain_persona
    from ..loader import load_profile

    with showing_warnings(), using_store(store_url):  # e.g. an unknown deployment, shown once
        config = load_profile(path, name=persona_name, index=index)
        rows = explain_persona(
            config, deployment=deployment, language=language, model=model, rollout_key=rollout_key
        )
    if as_json:
        click.echo(json.dumps([row.to_dict() for row in rows], ensure_ascii=False, indent=2))
        return
    _print_table(rows)


#: Longest value shown in a table cell; `--json` shows values whole.
TABLE_VALUE_CHARS = 70


def _print_table(rows: list[Any]) -> None:
    from rich.console import Console  # imported here: only `explain` draws tables
    from rich.table import Table

    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    table.add_column("field", no_wrap=True)
    table.add_column("value", overflow="fold")
    table.add_column("source", no_wrap=True)
    for row in rows:
        value = row.value
        if value is None:
            shown = "-"
        elif isinstance(value, (list, tuple)):
            shown = "; ".join(str(item) for item in value)
        else:
            shown = str(value)
        shown = " ".join(shown.split())
        if len(shown) > TABLE_VALUE_CHARS:
            shown = shown[: TABLE_VALUE_CHARS - 1] + "…"
        table.add_row(row.field, shown, row.source, style="dim" if row.value is None else None)
    # a pipe or a test has no width of its own; wide enough that sources are never cut
    console = Console(width=None if sys.stdout.isatty() else 200, highlight=False, markup=False)
    with console.capture() as captured:
        console.print(table)
    click.echo("\n".join(line.rstrip() for line in captured.get().splitlines()))


@click.command()
def schema() -> None:
    """Print the JSON Schema of persona files, for editors and CI.

    \b
    Example:
      profiles schema > schema/persona.schema.json

    \b
    Point an editor at it with a modeline at the top of a persona file:
      # yaml-language-server: $schema=../schema/persona.schema.json
    """
    from ..schema import persona_schema

    click.echo(json.dumps(persona_schema(), indent=2, ensure_ascii=False))
