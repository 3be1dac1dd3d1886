"""The formats interop reads and writes, and the module that handles each."""

from __future__ import annotations

__all__ = ["EXPORT_FORMATS", "IMPORT_FORMATS"]

#: The formats `load` reads, and the module (of `profiles.interop`) that reads each.
IMPORT_FORMATS: dict[str, str] = {
    "crewai": "crewai",
    "prompty": "prompty",
    "semantic-kernel": "semantic_kernel",
    "adk": "adk",
    "agentspec": "agentspec",
}

#: The formats `export` writes; each module's `write` does it.
EXPORT_FORMATS: tuple[str, ...] = ("crewai", "prompty", "agentspec", "adk")
