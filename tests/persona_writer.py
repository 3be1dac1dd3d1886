"""A scripted model for the chat server that writes personas, repeats and contradictions in known proportions.

`PersonaWriter` answers the LLM factory's prompts the way a model would, deterministically: it
reads how many personas a request asks for (and, with a sampling plan, each one's attributes),
and writes that many, each one a pure function of the request's seed and its position in the
reply. In a batch's first reply:

- position 2, when the seed is even, contradicts its attributes (a wrong echo, or a wrong
  mapped field), if it has any;
- position 3, when the seed is a multiple of 3, is a near-duplicate of position 0: the same texts
  with one word changed, under a new name (estimated similarity about 0.9);
- position 4, when the seed is 1 modulo 4, takes position 0's name with texts of its own;
- every other persona is valid and its texts share almost nothing with any other's.

Replies to fix requests are always valid and new. The writer counts what it wrote, so a test can
compare the factory's figures with what was really sent.
"""

from __future__ import annotations

import json
import random
import re
import threading
from typing import Any

from tests.llm_server import Reply

__all__ = ["PersonaWriter", "parse_attributes"]

_CONSONANTS = "bcdfghjklmnprstvwz"
_VOWELS = "aeiou"


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(rng.randint(2, 4)))


def _texts(key: str) -> dict[str, str]:
    rng = random.Random(key)
    return {
        "role": f"{_word(rng).title()} {_word(rng)}",
        "goal": " ".join(_word(rng) for _ in range(12)) + ".",
        "desc": " ".join(_word(rng) for _ in range(24)) + ".",
    }


def _name(key: str, suffix: str) -> str:
    rng = random.Random("name:" + key)
    return f"{_word(rng).title()} {_word(rng).title()} {suffix}"


_LINE = re.compile(r"^(\d+)\. (.+)$")


def parse_attributes(text: str) -> dict[str, Any]:
    """`a: 1; b: "x"` (with `(its "f" field)` notes) → {"a": 1, "b": "x"}."""
    attributes: dict[str, Any] = {}
    for part in text.split("; "):
        name, _, value = part.partition(": ")
        value = re.sub(r'( \(its "[^"]+" field[^)]*\))+$', "", value.strip())
        try:
            attributes[name.strip()] = json.loads(value)
        except ValueError:
            attributes[name.strip()] = value
    return attributes


class PersonaWriter:
    """Answers persona requests; `fields` maps plan attributes to the persona fields they fill."""

    def __init__(
        self,
        *,
        fields: dict[str, str] | None = None,
        delay: float = 0.0,
        rows_fields: dict[str, dict[str, str]] | None = None,
    ) -> None:
        self.fields = dict(fields or {})
        self.rows_fields = dict(rows_fields or {})
        self.delay = delay
        self._lock = threading.Lock()
        self.near_duplicates = 0
        self.contradictions = 0
        self.name_duplicates = 0
        self.written = 0
        #: Every persona written, in no particular order across threads.
        self.personas: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        seed = body.get("seed", 0)
        prompt = messages[-1]["content"]
        if len(messages) == 1:
            slots = self._slots(prompt, "has its own attributes")
            if not slots:
                slots = [{}] * int(re.search(r"Write (\d+) distinct", prompt).group(1))
            out = self._first(seed, slots)
        else:
            round_ = len(messages) // 2
            slots = [parse_attributes(line) for line in re.findall(r"^   Its attributes: (.+)$", prompt, re.M)]
            if not slots:
                slots = self._slots(prompt, "Write these personas")
            if not slots:
                slots = [{}] * int(re.search(r"JSON array of the (\d+) corrected", prompt).group(1))
            out = [self._valid(f"{seed}:fix{round_}:{index}", f"{seed}-f{round_}-{index}", draw)
                   for index, draw in enumerate(slots)]
        with self._lock:
            self.written += len(out)
            self.personas.extend(out)
        return Reply(json.dumps(out, ensure_ascii=False), delay=self.delay)

    def _slots(self, prompt: str, marker: str) -> list[dict[str, Any]]:
        if marker not in prompt:
            return []
        section = prompt.split(marker, 1)[1].split("\n\n", 1)[0]
        slots = []
        for line in section.splitlines():
            match = _LINE.match(line)
            if match:
                slots.append(parse_attributes(match.group(2)))
        return slots

    def _valid(self, key: str, suffix: str, draw: dict[str, Any]) -> dict[str, Any]:
        persona: dict[str, Any] = {"name": _name(key, suffix), **_texts(key)}
        echo = {}
        for attribute, value in draw.items():
            if attribute in self.fields:
                persona[self.fields[attribute]] = value
            else:
                echo[attribute] = value
                for persona_field, column in self.rows_fields.get(attribute, {}).items():
                    persona[persona_field] = value[column]
        if draw:
            persona["attributes"] = echo
        return persona

    def _first(self, seed: int, slots: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for position, draw in enumerate(slots):
            key, suffix = f"{seed}:{position}", f"{seed}-{position}"
            persona = self._valid(key, suffix, draw)
            if position == 2 and seed % 2 == 0 and draw:
                self._contradict(persona, draw)
                with self._lock:
                    self.contradictions += 1
            elif position == 3 and seed % 3 == 0:
                persona.update({name: value for name, value in out[0].items() if name in ("role", "goal", "desc")})
                words = persona["desc"].split()
                words[5] = "zz" + words[5][2:]
                persona["desc"] = " ".join(words)
                with self._lock:
                    self.near_duplicates += 1
            elif position == 4 and seed % 4 == 1 and "name" not in self.fields.values():
                persona["name"] = out[0]["name"]
                with self._lock:
                    self.name_duplicates += 1
            out.append(persona)
        return out

    def _contradict(self, persona: dict[str, Any], draw: dict[str, Any]) -> None:
        echo = persona.get("attributes") or {}
        for attribute, value in echo.items():
            if isinstance(value, bool):
                echo[attribute] = not value
            elif isinstance(value, (int, float)):
                echo[attribute] = value + 1
            elif isinstance(value, list):
                echo[attribute] = value[:1] + ["zzz-not-drawn"]
            else:
                echo[attribute] = f"not {value}"
            return
        for attribute, persona_field in self.fields.items():
            persona[persona_field] = f"not-{draw[attribute]}"
            return
