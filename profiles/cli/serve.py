"""`profiles serve` (the web studio, the HTTP API and MCP over HTTP) and `profiles mcp` (MCP over stdio).

Both need the `serve` extra; without it they say how to install it, and nothing else is imported.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import click

from ..errors import ServeError
from .options import store_option, using_store

__all__ = ["mcp", "serve"]

#: What the `serve` extra brings, by import name.
_EXTRA_MODULES = ("fastapi", "uvicorn", "mcp", "fastapi_offline", "multipart")


def _need_extra(command: str) -> None:
    missing = [name for name in _EXTRA_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise ServeError(
            f"`profiles {command}` needs the serve extra ({', '.join(missing)} missing): "
            "pip install 'agent-profiles[serve]'"
        )


@click.command()
@click.argument("folder", type=click.Path(path_type=Path))
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on. Only 127.0.0.1 by default; another (0.0.0.0: every one) must be asked for.",
)
@click.option(
    "--port",
    "-p",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port to listen on; 0 picks a free one (printed at start).",
)
@click.option(
    "--store",
    "store_url",
    metavar="URL",
    default=None,
    help="Prompt store to serve (sqlite:///file.db, postgresql+psycopg://…). Wins over PROFILES_STORE_URL; "
    "without either, .profiles/store.db in the working directory.",
)
@click.option("--read-only", is_flag=True, help="Refuse every write (put, label), whatever the token.")
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="Also answer requests for this host name (behind a proxy, or with --host 0.0.0.0); "
    "'*' answers any. Repeatable.",
)
@click.option(
    "--store-cache",
    type=click.FloatRange(0, 3600),
    default=1.0,
    show_default=True,
    metavar="SECONDS",
    help="Keep each store read this long (0: ask the database every time). Writes through this server "
    "are seen at once; changes made elsewhere within SECONDS.",
)
@click.option(
    "--log-level",
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
    default="info",
    show_default=True,
    help="How much the server logs.",
)
def serve(
    folder: Path,
    host: str,
    port: int,
    store_url: str | None,
    read_only: bool,
    allow_hosts: tuple[str, ...],
    store_cache: float,
    log_level: str,
) -> None:
    """Serve the personas in FOLDER and the prompt store: the web studio at /, the HTTP API under
    /api (described at /docs and /openapi.json), and the personas' prompts over MCP at /mcp/.

    Every write needs the token in PROFILES_SERVE_TOKEN; when it is unset, a random one is made up
    and printed. Reads need none. Stop with Ctrl-C.

    \b
    Examples:
      profiles serve profile_configs/
      profiles serve profile_configs/ --store postgresql+psycopg://app@db/prompts --port 9000
      profiles serve profile_configs/ --read-only
      PROFILES_STORE_URL=http://127.0.0.1:8765 profiles render profile_configs/summarizer.yaml
    """
    _need_extra("serve")
    from ..serve.server import serve as run
    from ..serve.settings import make_settings

    settings = make_settings(
        folder,
        store=store_url,
        read_only=read_only,
        host=host,
        port=port,
        allow_hosts=allow_hosts,
        store_cache=store_cache,
    )
    try:
        run(settings, announce=lambda line: click.echo(line, err=line.startswith("Warning")), log_level=log_level)
    except KeyboardInterrupt:  # Ctrl-C is how a server is stopped: not a failure
        click.echo("Stopped.", err=True)


@click.command(name="mcp")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--deployment", "-d", help="The deployment the prompts are for. Default: $PROFILES_DEPLOYMENT.")
@click.option("--language", "-l", help="Answer language and template locale, e.g. en, zh-TW.")
@click.option("--model", "-m", help="The model the prompts are for.")
@store_option
def mcp(path: Path, deployment: str | None, language: str | None, model: str | None, store_url: str | None) -> None:
    """Serve the personas in PATH (a folder, or one persona file) as MCP prompts over stdio.

    Each persona is a prompt (its chat messages), and so is each of its prompt kinds
    (`summarizer.system`); arguments are the inputs the persona declares, with their
    descriptions and whether they are required. A system prompt goes out as a user message
    whose content `_meta` names its role ({"agent-profiles/role": "system"}). `profiles serve`
    answers the same over HTTP at /mcp/.

    \b
    An MCP client's configuration, e.g.:
      {"command": "profiles", "args": ["mcp", "/path/to/profile_configs"]}
    """
    _need_extra("mcp")
    from ..loader import PERSONA_SUFFIXES
    from ..serve.mcp_prompts import PromptCatalog, serve_stdio
    from ..serve.personas import PersonaFolder, RenderContext

    if path.is_file():
        if not path.name.endswith(PERSONA_SUFFIXES):  # it would only ever be left out: serve nothing
            raise ServeError(
                f"{path} is not a persona file ({', '.join(PERSONA_SUFFIXES)}); give a persona file or a folder of them"
            )
        folder, only = path.parent, path.name
    elif path.is_dir():
        folder, only = path, None
    else:
        raise ServeError(f"{path} is not there; give a folder of persona files or one persona file")
    from ..resolve import choose_deployment

    choose_deployment(deployment)  # a bad name now, not every persona left out of prompts/list later
    catalog = PromptCatalog(PersonaFolder(folder), RenderContext.of(deployment, language, model), only=only)
    with using_store(store_url):
        serve_stdio(catalog)
