"""Model settings: the sampling and length options a persona fixes, checked, and each API's name for them.

A persona's `model_settings:` holds any of

| setting | takes | openai-chat | openai-responses | anthropic |
|---|---|---|---|---|
| temperature | 0 to 2 | `temperature` | `temperature` | left out |
| top_p | 0 to 1 | `top_p` | `top_p` | left out |
| max_tokens | an integer ≥ 1 | `max_completion_tokens` | `max_output_tokens` | `max_tokens` |
| stop | text or a list of texts | `stop` (at most 4) | left out | `stop_sequences` |
| seed | an integer | `seed` | left out | left out |
| presence_penalty | −2 to 2 | `presence_penalty` | left out | left out |
| frequency_penalty | −2 to 2 | `frequency_penalty` | left out | left out |

plus `extra:`, keys passed into the body untouched; a key of `extra` naming an API
(`anthropic: {temperature: 0.2}`) holds keys for that API only, which win over the shared ones.

"Left out" follows the APIs as their Python clients type them: Anthropic's current clients have
no temperature or top_p (current models take neither), Responses has no stop, seed or penalties.
`extra` is how to send one anyway, to a model that still takes it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ANTHROPIC_DEFAULT_MAX_TOKENS",
    "CREDENTIAL_KEYS",
    "SETTINGS",
    "SETTING_NAMES",
    "STRUCTURAL_KEYS",
    "SettingError",
    "SettingSpec",
    "api_settings",
    "check_extra",
    "check_setting",
    "setting_from_text",
]

#: What `max_tokens` is for Anthropic, which requires it, when the persona sets none.
ANTHROPIC_DEFAULT_MAX_TOKENS = 4096

#: The APIs settings are translated for (`history.APIS` names the same three).
_APIS = ("openai-chat", "openai-responses", "anthropic")

#: Most stop sequences Chat Completions takes.
MAX_CHAT_STOP = 4


class SettingError(ValueError):
    """A setting's value is not one it takes; `reason` says what it takes."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason
        super().__init__(f"model_settings.{name}: {reason}")


@dataclass(frozen=True)
class SettingSpec:
    """One setting: what values it takes, and its field in each API (None where there is none)."""

    name: str
    #: "number", "integer" or "texts" (a text or a list of texts).
    kind: str
    low: float | None
    high: float | None
    fields: Mapping[str, str | None]
    description: str

    def takes(self) -> str:
        """What the setting takes, in words, for messages."""
        if self.kind == "texts":
            return "a text or a list of texts"
        what = "an integer" if self.kind == "integer" else "a number"
        if self.low is not None and self.high is not None:
            return f"{what} from {self.low:g} to {self.high:g}"
        if self.low is not None:
            return f"{what} of at least {self.low:g}"
        return what


def _spec(
    name: str, kind: str, low: float | None, high: float | None, fields: tuple[Any, ...], description: str
) -> SettingSpec:
    return SettingSpec(name, kind, low, high, dict(zip(_APIS, fields, strict=True)), description)


#: Every setting a persona may fix, in the order the README's table lists them.
SETTINGS: dict[str, SettingSpec] = {
    spec.name: spec
    for spec in (
        _spec(
            "temperature",
            "number",
            0.0,
            2.0,
            ("temperature", "temperature", None),
            "Sampling temperature: lower is more focused, higher more varied.",
        ),
        _spec(
            "top_p",
            "number",
            0.0,
            1.0,
            ("top_p", "top_p", None),
            "Nucleus sampling: the probability mass sampled from.",
        ),
        _spec(
            "max_tokens",
            "integer",
            1,
            None,
            ("max_completion_tokens", "max_output_tokens", "max_tokens"),
            "Most tokens the reply may hold (reasoning tokens included where the API counts them).",
        ),
        _spec(
            "stop", "texts", None, None, ("stop", None, "stop_sequences"), "Text(s) that end the reply when generated."
        ),
        _spec("seed", "integer", None, None, ("seed", None, None), "Seed for best-effort reproducible sampling."),
        _spec(
            "presence_penalty",
            "number",
            -2.0,
            2.0,
            ("presence_penalty", None, None),
            "Penalty for tokens already present, encouraging new topics.",
        ),
        _spec(
            "frequency_penalty",
            "number",
            -2.0,
            2.0,
            ("frequency_penalty", None, None),
            "Penalty for tokens by how often they appeared, discouraging repetition.",
        ),
    )
}

#: The settings' names.
SETTING_NAMES: tuple[str, ...] = tuple(SETTINGS)

#: Body keys the request builder writes itself; `extra` may not replace them.
STRUCTURAL_KEYS = frozenset(
    {"model", "messages", "input", "instructions", "system", "tools", "response_format", "text", "output_config"}
)

#: Keys that would carry a credential in a body; the API key goes to the client, never the body.
CREDENTIAL_KEYS = frozenset({"api_key", "apikey", "authorization", "x_api_key", "access_token", "bearer"})


def check_setting(name: str, value: Any) -> Any:
    """`value` checked for setting `name`; a tuple of stop texts becomes a list.

    Raises:
        SettingError: the value has the wrong type or is out of range.
        KeyError: `name` is not a setting.
    """
    spec = SETTINGS[name]
    if spec.kind == "texts":
        if isinstance(value, str):
            if not value:
                raise SettingError(name, "must not be empty text")
            return value
        if isinstance(value, (list, tuple)) and value and all(isinstance(item, str) and item for item in value):
            return list(value)
        raise SettingError(name, f"takes {spec.takes()}, each non-empty, got {_shown(value)}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SettingError(name, f"takes {spec.takes()}, got {_shown(value)}")
    if spec.kind == "integer" and not isinstance(value, int):
        if not (isinstance(value, float) and value.is_integer()):
            raise SettingError(name, f"takes {spec.takes()}, got {value!r}")
        value = int(value)
    if isinstance(value, float) and not math.isfinite(value):
        raise SettingError(name, f"takes {spec.takes()}, got {value!r}")
    if (spec.low is not None and value < spec.low) or (spec.high is not None and value > spec.high):
        raise SettingError(name, f"takes {spec.takes()}, got {value!r}")
    return value


def setting_from_text(name: str, value: Any) -> Any:
    """A setting's value as a provider gave it (text, as `.env` files hold it) made typed and checked.

    `"0.2"` becomes 0.2 for temperature, `"256"` 256 for max_tokens; stop texts stay text. A value
    that is already typed (a default in the persona) is checked as it is.

    Raises:
        SettingError: the text is not a value the setting takes.
    """
    spec = SETTINGS[name]
    if isinstance(value, str) and spec.kind != "texts":
        text = value.strip()
        try:
            value = int(text) if spec.kind == "integer" else float(text)
        except ValueError:
            raise SettingError(name, f"takes {spec.takes()}, got the text {_shown(value)}") from None
    return check_setting(name, value)


def _normal(key: str) -> str:
    return key.strip().lower().replace("-", "_")


def check_extra(value: Any) -> dict[str, Any]:
    """Check `model_settings.extra`: JSON data under text keys, none written by the builder or holding a key.

    Raises:
        SettingError: naming the key and what to change.
    """
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise SettingError("extra", "expected a mapping of request body key to value")
    try:
        plain = json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise SettingError("extra", f"must be plain JSON data ({exc})") from None
    for key, item in plain.items():
        if key in _APIS:
            if not isinstance(item, dict):
                raise SettingError("extra", f"{key!r} names an API: its value is a mapping of keys for that API only")
            for inner, value_of_inner in item.items():
                _check_extra_key(inner, f"{key}.{inner}")
                _check_nested_keys(value_of_inner, f"{key}.{inner}")
        else:
            _check_extra_key(key, key)
            _check_nested_keys(item, key)
    return plain


def _check_nested_keys(value: Any, where: str) -> None:
    """Refuse a credential's key anywhere inside an `extra` value (`extra_headers: {Authorization: …}`)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if _normal(key) in CREDENTIAL_KEYS:
                raise SettingError(
                    "extra",
                    f"{f'{where}.{key}'!r} would put a credential into the request body; give the API key to your "
                    "client instead",
                )
            _check_nested_keys(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_nested_keys(item, f"{where}[{index}]")


def _check_extra_key(key: str, where: str) -> None:
    if key in STRUCTURAL_KEYS:
        raise SettingError(
            "extra", f"{where!r} is written from the persona itself (its prompts, tools or output_schema); remove it"
        )
    if _normal(key) in CREDENTIAL_KEYS:
        raise SettingError(
            "extra", f"{where!r} would put a credential into the request body; give the API key to your client instead"
        )


def api_settings(
    api: str,
    values: Mapping[str, Any],
    extra: Mapping[str, Any] | None = None,
    *,
    unsupported: str = "drop",
) -> dict[str, Any]:
    """The body keys `values` (setting name → checked value) and `extra` become for `api`.

    A setting `api` has no field for is left out, or with `unsupported="error"` refused. Anthropic
    requires `max_tokens`: `ANTHROPIC_DEFAULT_MAX_TOKENS` when the persona sets none. `extra`'s
    shared keys come next, then its keys for `api`, each winning over what came before.

    Raises:
        SettingError: a setting `api` lacks with `unsupported="error"`, or more stop texts than Chat takes.
    """
    body: dict[str, Any] = {}
    for name, value in values.items():
        if value is None:
            continue
        field = SETTINGS[name].fields[api]
        if field is None:
            if unsupported == "error":
                raise SettingError(
                    name, f"{api} has no such request field; remove it, or send it under model_settings.extra.{api}"
                )
            continue
        if name == "stop":
            stops = [value] if isinstance(value, str) else list(value)
            if api == "openai-chat" and len(stops) > MAX_CHAT_STOP:
                raise SettingError(name, f"openai-chat takes at most {MAX_CHAT_STOP} stop texts, got {len(stops)}")
            value = stops if api == "anthropic" else value
        body[field] = value
    if api == "anthropic" and "max_tokens" not in body:
        body["max_tokens"] = ANTHROPIC_DEFAULT_MAX_TOKENS
    for key, item in (extra or {}).items():
        if key not in _APIS:
            body[key] = item
    own = (extra or {}).get(api)
    if isinstance(own, Mapping):
        body.update(own)
    return body


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"
