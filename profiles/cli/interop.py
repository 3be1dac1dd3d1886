"""`profiles import` and `profiles export`: other tools' agent and prompt files, in and out."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import ConfigError, ExportError
from ..interop.formats import EXPORT_FORMATS, IMPORT_FORMATS
from .options import showing_warnings

__all__ = ["export", "import_"]


def _notes(notes: list[object]) -> None:
    for note in notes:
        click.echo(f"  {note}", err=True)


@click.command("import")
@click.argument("format", metavar="FORMAT", type=click.Choice(list(IMPORT_FORMATS)))
@click.argument("source", type=click.Path(path_type=Path))
@click.option("--out", "-o", "out", required=True, type=click.Path(path_type=Path, file_okay=False),
              help="Folder to write one persona file per agent or prompt into.")
@click.option("--force", is_flag=True, help="Overwrite persona files that exist already.")
@click.option("--quiet", is_flag=True, help="Print only the files written, not what was kept, dropped or derived.")
def import_(format: str, source: Path, out: Path, force: bool, quiet: bool) -> None:
    """Read another tool's agent or prompt file into persona files.

    FORMAT is crewai (agents.yaml, with tasks.yaml beside it), prompty (.prompty, v1 or v2),
    semantic-kernel (prompt YAML, agent YAML, or a prompt folder), adk (root_agent.yaml, following
    sub_agents) or agentspec (an Agent component, JSON or YAML). Every field with no persona
    equivalent is kept under metadata.FORMAT and listed; names of Python code are dropped.

    \b
    Examples:
      profiles import crewai path/to/crew/config/agents.yaml --out personas/
      profiles import prompty basic.prompty --out personas/
      profiles import adk my_agent/ --out personas/
    """
    from ..atomic import write_atomic
    from ..interop import load

    with showing_warnings():
        result = load(format, source)
    if not result.personas:
        raise ConfigError(f"{source}: no agent or prompt in it could become a persona; see the notes above")
    targets = [(out / f"{persona.stem}.yaml", persona) for persona in result.personas]
    existing = [str(path) for path, _ in targets if path.exists()]
    if existing and not force:
        raise ConfigError(f"{', '.join(existing)} exist(s) already; pass --force to overwrite, or pick another --out")
    texts = [(path, persona.to_yaml()) for path, persona in targets]  # every persona made before any is written
    if not quiet:
        _notes(result.notes)
    for (path, text), (_, persona) in zip(texts, targets, strict=True):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)
        click.echo(f"wrote {path}")
        if not quiet:
            _notes(persona.notes)


@click.command()
@click.argument("personas", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--to", "format", required=True, type=click.Choice(list(EXPORT_FORMATS)), help="The format to write.")
@click.option("--deployment", "-d", help="Export the persona as this deployment sees it (overlay, .env files, store).")
@click.option("--language", "-l", help="Answer language and template locale, e.g. en, zh.")
@click.option("--model", "-m", help="The model the prompts are for, in place of the persona's (Agent Spec needs one).")
@click.option("--base-url", help="Agent Spec: the OpenAI-compatible server the agent's llm_config points at.")
@click.option("--out", "-o", "out", type=click.Path(path_type=Path),
              help="A folder for the files (crewai writes agents.yaml and tasks.yaml), or the file to write; "
              "without it a single file is printed.")
@click.option("--force", is_flag=True, help="Overwrite files that exist already.")
def export(
    personas: tuple[Path, ...],
    format: str,
    deployment: str | None,
    language: str | None,
    model: str | None,
    base_url: str | None,
    out: Path | None,
    force: bool,
) -> None:
    """Write persona files as another tool's agent or prompt file.

    Every input stays a placeholder in the other tool's syntax; a secret is never written, only
    a reference to where it comes from. Several personas make one crew for crewai.

    \b
    Examples:
      profiles export profile_configs/summarizer.yaml --to prompty --deployment prod
      profiles export profile_configs/planner.yaml --to crewai --out crew/config/
      profiles export profile_configs/triage.yaml --to agentspec --base-url http://127.0.0.1:8000/v1
    """
    from ..atomic import write_atomic
    from ..interop.exporter import write

    if base_url and format != "agentspec":
        raise click.UsageError(f"--base-url is an Agent Spec setting; {format} files have no place for it, "
                               "so leave it out or export --to agentspec")
    options = {"base_url": base_url} if base_url else {}
    with showing_warnings():
        outputs = [
            write(list(personas) if format == "crewai" else persona, format, deployment=deployment,
                  language=language, model=model, **options)
            for persona in ([personas[0]] if format == "crewai" else personas)
        ]
    files = {name: text for produced, _ in outputs for name, text in produced.items()}
    if len(files) != sum(len(produced) for produced, _ in outputs):
        raise ExportError("two personas would be written to the same file name; export them one at a time")
    for _, notes in outputs:
        _notes(notes)
    if out is None:
        if len(files) != 1:
            raise ExportError(f"{format} writes {', '.join(files)}; give --out FOLDER to write them")
        click.echo(next(iter(files.values())), nl=False)
        return
    if len(files) == 1 and not out.is_dir() and (out.suffix or out.exists()):
        targets = {out: next(iter(files.values()))}  # a file named as such, or one that is there already
    elif out.exists() and not out.is_dir():
        raise ExportError(f"--out {out} is a file, and {format} writes {', '.join(files)}; name a folder for them")
    else:
        targets = {out / name: text for name, text in files.items()}
    existing = [str(path) for path in targets if path.exists()]
    if existing and not force:
        raise ExportError(f"{', '.join(existing)} exist(s) already; pass --force to overwrite, or pick another --out")
    for path, text in targets.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)
        click.echo(f"wrote {path}")
