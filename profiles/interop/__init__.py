"""Other tools' agent and prompt files, read into personas and written from them.

```python
from profiles import interop

result = interop.load("crewai", "examples/interop/crewai/research_crew")
for persona in result.personas:
    print(persona.stem, persona.config.create_profile().get_role())  # researcher {{ topic }} Senior Data Researcher
    for note in persona.notes:
        print(" ", note)  # what was derived, renamed, kept as metadata or dropped
print(interop.export("profile_configs/triage.yaml", "agentspec")["iris.agentspec.json"])
```

| format | reads | writes |
|---|---|---|
| `crewai` | `agents.yaml` (+ `tasks.yaml` beside it) | `agents.yaml`, `tasks.yaml` |
| `prompty` | `.prompty` files, v1 and v2 front matter | `.prompty` (v2) |
| `semantic-kernel` | prompt YAML, prompt folders (`skprompt.txt`), agent YAML | – |
| `adk` | an `LlmAgent` config (`root_agent.yaml`, following `sub_agents`) | `root_agent.yaml` |
| `agentspec` | an Open Agent Spec `Agent` (JSON or YAML) | `.agentspec.json` / `.yaml` |

Files are read as untrusted, like persona files: with the project's bounded YAML and JSON
readers, file references confined to the file's folder, and nothing executed or imported; names
of Python code in them are reported and dropped. One module per format.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, ConfigIssue
from .formats import EXPORT_FORMATS, IMPORT_FORMATS

if TYPE_CHECKING:
    from ._draft import ImportedPersona, ImportResult, Note

__all__ = ["EXPORT_FORMATS", "IMPORT_FORMATS", "ImportResult", "ImportedPersona", "Note", "export", "load"]

def __getattr__(name: str) -> Any:
    # the result types load with the readers, so `profiles --help` does not pay for them
    if name in ("ImportResult", "ImportedPersona", "Note"):
        from . import _draft

        return getattr(_draft, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _module(name: str) -> Any:
    return import_module(f".{name}", __name__)


def load(format: str, path: str | Path) -> ImportResult:
    """Read another tool's file (or folder) as personas, each validated like a persona file.

    Raises:
        ConfigError: the format is unknown, or the file is unreadable or malformed (file and line).
    """
    if format not in IMPORT_FORMATS:
        raise ConfigError(
            ConfigIssue(f"unknown format {format!r}; the formats are {', '.join(IMPORT_FORMATS)}", file=str(path))
        )
    from ..safe_yaml import as_path

    reader: Callable[[Path], ImportResult] = _module(IMPORT_FORMATS[format]).read
    return reader(as_path(path, kind=f"{format} file"))


def export(persona: Any, format: str, **options: Any) -> dict[str, str]:
    """The other tool's file(s) for a persona file or `ProfileConfig` (a list of them: a CrewAI crew), by name.

    `options`: `deployment`, `language`, `model`, and for `agentspec` `base_url`. Notes on what
    was written in, converted or left out come with `profiles.interop.exporter.write`.

    Raises:
        ExportError: the format is unknown, or the persona cannot be written in it.
    """
    from .exporter import export_files

    return export_files(persona, format, **options)
