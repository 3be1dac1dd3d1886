"""DB-GPT: a persona as a DB-GPT `ProfileConfig` whose profile renders through agent-profiles.

```python
from dbgpt.agent import ConversableAgent
from profiles.adapters.dbgpt import to_profile_config

agent = ConversableAgent(profile=to_profile_config("profile_configs/summarizer.yaml", deployment="prod"))
```

The config carries the persona's name and role (what DB-GPT shows and routes by) and a profile
factory, DB-GPT's own extension point: every profile a DB-GPT agent asks for renders its system,
user and write-memory prompts through the persona (templates, sandbox, deployments, store), and
resolves the persona again at each call, so DB-GPT's ten-second profile cache never serves a
stale value. DB-GPT's `resource_prompt`, `out_schema` and `now_time` go to the persona's system
prompt. A persona with a language of its own keeps it; one without takes the agent's. DB-GPT needs
packages it does not declare, the `dbgpt` extra lists them (its OpenAI client needs `openai`).
"""

from __future__ import annotations

from typing import Any

from ._common import Provenance, as_profile, framework, guarded, provenance_of

__all__ = ["to_profile_config"]

_EXTRA = "dbgpt"

_CLASSES: dict[str, Any] = {}


def _classes() -> tuple[type, type]:
    """The DB-GPT `Profile` and `ProfileFactory` this adapter gives, made once DB-GPT is imported."""
    if _CLASSES:
        return _CLASSES["profile"], _CLASSES["factory"]
    base = framework("dbgpt.agent.core.profile.base", _EXTRA, "dbgpt")

    class PersonaProfile(base.Profile):  # type: ignore[misc, name-defined]
        """A DB-GPT profile whose prompts the persona renders."""

        def __init__(self, config: Any, deployment: str | None, language: str | None, model: str | None) -> None:
            self._config = config
            self._deployment = deployment
            # a profile made already is used as it is: its language and model were chosen when it was made
            made = not hasattr(config, "create_profile")
            self._language = None if made or config.language is not None else language
            self._model = None if made or config.model is not None else model

        def _profile(self) -> Any:
            return as_profile(self._config, deployment=self._deployment, language=self._language,
                              model=self._model)

        @property
        def provenance(self) -> Provenance:
            return provenance_of(self._profile())

        def get_name(self) -> str:
            return str(guarded(self._profile(), "name", "DB-GPT agent's name"))

        def get_role(self) -> str:
            return str(guarded(self._profile(), "role", "DB-GPT agent's role"))

        def get_goal(self) -> str | None:
            return guarded(self._profile(), "goal", "DB-GPT agent's goal")

        def get_retry_goal(self) -> str | None:
            return guarded(self._profile(), "retry_goal", "DB-GPT agent's retry goal")

        def get_constraints(self) -> list[str] | None:
            value = guarded(self._profile(), "constraints", "DB-GPT agent's constraints")
            return list(value) if value is not None else None

        def get_retry_constraints(self) -> list[str] | None:
            value = guarded(self._profile(), "retry_constraints", "DB-GPT agent's retry constraints")
            return list(value) if value is not None else None

        def get_description(self) -> str | None:
            return guarded(self._profile(), "desc", "DB-GPT agent's description")

        def get_expand_prompt(self) -> str | None:
            return guarded(self._profile(), "expand_prompt", "DB-GPT agent's expand prompt")

        def get_examples(self) -> str | None:
            return guarded(self._profile(), "examples", "DB-GPT agent's examples")

        def get_system_prompt_template(self) -> str:
            return str(self._profile().get_system_prompt_template())

        def get_user_prompt_template(self) -> str:
            return str(self._profile().get_user_prompt_template())

        def get_write_memory_template(self) -> str:
            return str(self._profile().get_write_memory_template())

        def format_system_prompt(
            self,
            template_env: Any = None,
            question: str | None = None,
            language: str = "en",
            most_recent_memories: str | None = None,
            resource_vars: dict[str, Any] | None = None,
            is_retry_chat: bool = False,
            **kwargs: Any,
        ) -> str:
            given = {**(resource_vars or {}), **kwargs}
            return str(self._profile().format_system_prompt(
                question,
                most_recent_memories=most_recent_memories or None,
                resource_prompt=given.pop("resource_prompt", None) or None,
                out_schema=given.pop("out_schema", None) or None,
                now_time=given.pop("now_time", None) or None,
                is_retry_chat=is_retry_chat,
                **given,
            ))

        def format_user_prompt(
            self,
            template_env: Any = None,
            question: str | None = None,
            language: str = "en",
            most_recent_memories: str | None = None,
            resource_vars: dict[str, Any] | None = None,
            **kwargs: Any,
        ) -> str:
            given = {key: value for key, value in {**(resource_vars or {}), **kwargs}.items()
                     if key not in ("resource_prompt", "out_schema", "now_time", "is_retry_chat")}
            return str(self._profile().format_user_prompt(question, most_recent_memories=most_recent_memories or None,
                                                          **given))

    class PersonaFactory(base.ProfileFactory):  # type: ignore[misc, name-defined]
        """DB-GPT's profile factory for one persona and deployment."""

        def __init__(self, config: Any, deployment: str | None) -> None:
            self.config = config
            self.deployment = deployment

        @property
        def provenance(self) -> Provenance:
            return provenance_of(as_profile(self.config, deployment=self.deployment))

        def create_profile(
            self,
            profile_id: int,
            name: str | None = None,
            role: str | None = None,
            goal: str | None = None,
            prefer_prompt_language: str | None = None,
            prefer_model: str | None = None,
        ) -> Any:
            return PersonaProfile(self.config, self.deployment, prefer_prompt_language, prefer_model)

    _CLASSES.update(profile=PersonaProfile, factory=PersonaFactory)
    return PersonaProfile, PersonaFactory


def to_profile_config(persona: Any, *, deployment: str | None = None, profile_id: int = 0) -> Any:
    """A DB-GPT `ProfileConfig` for a persona file or `ProfileConfig` of ours (or a profile, used as it is).

    `config.factory.provenance` (and each DB-GPT profile's `provenance`) names the persona file,
    deployment and store versions.

    Raises:
        AdapterError: DB-GPT is missing.
        SecretError: the name or role is a secret the persona does not allow out.
    """
    from ..loader import load_profile

    base = framework("dbgpt.agent.core.profile.base", _EXTRA, "dbgpt")
    _, factory_class = _classes()
    config = load_profile(persona) if isinstance(persona, (str, bytes)) or hasattr(persona, "__fspath__") else persona
    profile = as_profile(config, deployment=deployment)
    return base.ProfileConfig(
        profile_id=profile_id,
        name=str(guarded(profile, "name", "DB-GPT agent's name")),
        role=str(guarded(profile, "role", "DB-GPT agent's role")),
        goal=guarded(profile, "goal", "DB-GPT agent's goal"),
        desc=guarded(profile, "desc", "DB-GPT agent's description"),
        factory=factory_class(config, deployment),
    )
