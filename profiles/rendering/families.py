"""Which model family a model name belongs to, from ordered pattern rules in configuration.

A family names the folder of templates tuned to a model's format (`templates/granite/…`). Rules
are read from `families.yaml` at the top of each template root, the user's roots first, so a
user's rule wins over a bundled one:

```yaml
rules:
  - match: "granite-3.3*"     # fnmatch pattern, case-insensitive, on the whole model name
    family: granite33
  - match: "*granite*"
    family: granite
```

The first matching rule wins. A model no rule matches, or whose family has no folder in any
root, warns once per model name and uses `default`: a typo in a model name should be seen, but
not flood an agent's log on every render.
"""

from __future__ import annotations

import fnmatch
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import replace as _replace
from pathlib import Path
from typing import Any

from ..callers import warn_at_caller
from ..errors import ConfigError, ConfigIssue
from .templates import DEFAULT_FAMILY, FAMILIES_FILE

__all__ = ["FamilyRule", "FamilyRules", "UnknownModelWarning", "load_family_rules"]

#: Largest rules file read, in bytes.
MAX_RULES_BYTES = 200_000

_FAMILY_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


class UnknownModelWarning(UserWarning):
    """Warned once per model name when no family rule (or no family folder) serves it."""


@dataclass(frozen=True)
class FamilyRule:
    """One rule: model names matching `pattern` (fnmatch, case-insensitive) belong to `family`."""

    pattern: str
    family: str
    origin: str = "<code>"

    def matches(self, model: str) -> bool:
        return fnmatch.fnmatchcase(model.lower(), self.pattern.lower())


_warned: set[str] = set()
_warned_lock = threading.Lock()


def _warn_once(model: str, message: str) -> None:
    with _warned_lock:
        if model in _warned:
            return
        _warned.add(model)
    warn_at_caller(message, UnknownModelWarning)


class FamilyRules:
    """Ordered rules plus the families that have templates; answers are cached per model name.

    `known` is the set of family folders found in the roots; a rule naming another family is
    treated like no match, so a missing folder never silently drops to a half-set of templates.
    """

    #: How many model names keep their answer; agent servers see few distinct models.
    CACHE_SIZE = 1024

    def __init__(self, rules: Iterable[FamilyRule], known: Iterable[str]) -> None:
        self.rules = tuple(rules)
        self.known = frozenset(known) | {DEFAULT_FAMILY}
        self._cache: dict[str, str] = {}

    def family_for(self, model: str | None, *, secret: bool = False) -> str:
        """The family of `model`: the first matching rule's, else `default` with a warning.

        A `secret` model name (read from a credential-like key, say) is not named in the warning.
        """
        if not model:
            return DEFAULT_FAMILY
        family = self._cache.get(model)
        if family is None:
            family = self._match(model, "*** (a secret model name)" if secret else repr(model))
            if len(self._cache) >= self.CACHE_SIZE:
                self._cache.clear()
            self._cache[model] = family
        return family

    def _match(self, model: str, shown: str) -> str:
        for rule in self.rules:
            if rule.matches(model):
                if rule.family in self.known:
                    return rule.family
                _warn_once(
                    model,
                    f"model {shown} matches family {rule.family!r} ({rule.origin}), but no template "
                    f"root has a {rule.family}/ folder; using {DEFAULT_FAMILY!r}. "
                    "Add the folder or fix the rule.",
                )
                return DEFAULT_FAMILY
        _warn_once(
            model,
            f"no template family matches model {shown}; using {DEFAULT_FAMILY!r}. Add a rule "
            f"(match: pattern, family: name) to {FAMILIES_FILE} in a template root "
            "if it needs its own templates.",
        )
        return DEFAULT_FAMILY


def load_family_rules(roots: Iterable[Path]) -> FamilyRules:
    """Read `families.yaml` of each root, in root order, and list the family folders present."""
    rules: list[FamilyRule] = []
    known: set[str] = set()
    for root in roots:
        root = Path(root)
        path = root / FAMILIES_FILE
        if path.is_file():
            rules.extend(_read_rules(path))
        if root.is_dir():
            known.update(
                child.name for child in root.iterdir() if child.is_dir() and _FAMILY_NAME.match(child.name)
            )
    return FamilyRules(rules, known)


def _read_rules(path: Path) -> list[FamilyRule]:
    from ..safe_yaml import read_documents

    file = str(path)
    if path.stat().st_size > MAX_RULES_BYTES:
        raise ConfigError(ConfigIssue(f"over the {MAX_RULES_BYTES}-byte limit for a rules file", file=file))
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(ConfigIssue(f"cannot read family rules: not UTF-8 text ({exc.reason})", file=file)) from None
    # the persona files' reader: duplicate keys are refused, and YAML errors carry their line
    documents, problems, _ = read_documents(text, file)
    if problems:  # duplicate keys, keys that are not text
        raise ConfigError([_replace(issue, file=file) for issue in problems])
    held = [index for index, document in enumerate(documents) if document is not None]
    if not held:
        return []
    found: list[tuple[str, tuple[Any, ...], str]] = []  # (field, path in the file, message)
    data, at = documents[held[0]], held[0]
    if len(held) > 1:
        found.append(("", (), "holds several YAML documents; keep the rules in one"))
    elif not isinstance(data, dict) or not isinstance(data.get("rules"), list):
        found.append(("rules" if isinstance(data, dict) and "rules" in data else "", ("rules",),
                      "expected a mapping with one key, 'rules', holding a list of {match, family}"))
    else:
        found.extend((str(key), (key,), f"unknown key {str(key)!r}; a rules file holds only 'rules'")
                     for key in data if key != "rules")
    if found:
        raise ConfigError(_placed(text, at, file, found, keys={(key,) for key in data if key != "rules"}
                                  if isinstance(data, dict) else set()))
    rules = []
    for index, item in enumerate(data["rules"]):
        where = f"rules.{index}"
        if not isinstance(item, dict) or set(item) != {"match", "family"}:
            extra = sorted(str(key) for key in item if key not in ("match", "family")) if isinstance(item, dict) else []
            also = f" (remove {', '.join(repr(key) for key in extra)})" if extra else ""
            found.append((where, ("rules", index), f"each rule is a mapping with exactly 'match' and 'family'{also}"))
            continue
        pattern, family = item["match"], item["family"]
        if not isinstance(pattern, str) or not pattern.strip():
            found.append((f"{where}.match", ("rules", index, "match"),
                          "'match' must be a non-empty fnmatch pattern, e.g. 'granite*'"))
            continue
        if not isinstance(family, str) or not _FAMILY_NAME.match(family):
            found.append((f"{where}.family", ("rules", index, "family"),
                          f"'family' {family!r} must be a folder name of lower-case letters, digits, '_', '.', '-'"))
            continue
        rules.append(FamilyRule(pattern.strip(), family, f"{file} rule {index + 1}"))
    if found:
        raise ConfigError(_placed(text, at, file, found, keys=set()))
    return rules


def _placed(text: str, document: int, file: str, found: list[tuple[str, tuple[Any, ...], str]],
            keys: set[tuple[Any, ...]]) -> list[ConfigIssue]:
    """The problems as issues at their lines, found by composing the file again: only on failure."""
    from ..safe_yaml import locator

    locate = locator(text, document, keys)
    issues = []
    for field, loc, message in found:
        line, column = locate(loc) if loc else (None, None)
        issues.append(ConfigIssue(message, field, file, line, column))
    return issues
