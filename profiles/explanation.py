"""`explain`: where each field of a persona comes from, for one context.

The answer to "why is the summarizer called Plato in prod?", for a persona file, a config or a
profile: one `ExplainRow` per field naming the YAML file and line, the deployment overlay, the env
key and the file that gave it, the store version and label, or the default. Secrets show as `***`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import ConfigError, ConfigIssue, FactoryError
from .loader import load_profile
from .profile import DefaultProfile
from .profile_config import ProfileConfig
from .provenance import ExplainRow, explain_profile

__all__ = ["explain"]


def explain(
    persona: str | Path | ProfileConfig | DefaultProfile,
    *,
    deployment: str | None = None,
    language: str | None = None,
    model: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    rollout_key: str | None = None,
    name: str | None = None,
    index: int | None = None,
) -> list[ExplainRow]:
    """Where each field of a persona comes from for one context.

    `persona` is a persona file's path, a `ProfileConfig`, or an already created profile (then the
    context arguments are not used). The deployment falls back to `PROFILES_DEPLOYMENT`, as in
    `create_profile`; so does the rollout key, to `PROFILES_ROLLOUT_KEY`. In a file of several
    `---` personas, `name` or `index` (from 1) picks one, as in `load_profile` and `--name`/`--index`.

    Raises:
        ConfigError: the persona file is invalid, or holds several personas and none was picked.
        ResolutionError: a field cannot be resolved.
    """
    if isinstance(persona, (str, Path)):
        persona = load_profile(persona, name=name, index=index)
    elif name is not None or index is not None:
        raise ConfigError(ConfigIssue(
            f"name= and index= pick a persona in a file; a {type(persona).__name__} is one persona already, "
            "so leave them out"
        ))
    if isinstance(persona, DefaultProfile):
        return explain_profile(persona)
    if not isinstance(persona, ProfileConfig):
        persona = load_profile(persona)
    profile = persona.create_profile(
        language=language, model=model, deployment=deployment, overrides=overrides, rollout_key=rollout_key
    )
    if not isinstance(profile, DefaultProfile):
        raise FactoryError(
            f"the persona's factory made a {type(profile).__name__}, which keeps no provenance; "
            "explain the persona without its factory"
        )
    return explain_profile(profile)
