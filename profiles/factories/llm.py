"""`LLMProfileFactory`: personas written by a model on an OpenAI-compatible chat endpoint.

A run asks for personas in batches (the request is the bundled template
``templates/_factories/llm/<locale>/personas.j2``), reads the JSON out of each reply, validates
every object against :class:`~profiles.config.ProfileConfig`, asks again for the invalid ones with
the validation errors (``fix.j2`` beside it, at most ``max_fix_rounds`` times per batch), drops
duplicates by normalised name (examples included), and yields profiles as batches complete.

Batches run in waves of at most ``max_in_flight``. Every prompt of a wave is built before any
is sent, naming the personas made so far so the model can avoid them, and the replies are read
back in batch order. With batch ``i`` sent with seed ``seed + i``, the same replies therefore give
the same personas in the same order however the requests overlap (for the same ``batch_size``
and ``max_in_flight``).

Generated objects may set every plain text field of a persona (:data:`GENERATED_FIELDS`) and
nothing else: a model's reply must never name a template file, a provider key (which could pull a
secret from the environment into a persona) or template syntax.

With a sampling plan (:mod:`profiles.factories.plan`), each persona is a *slot* whose attributes
are drawn before any request: a batch asks for the personas of a few slots, listing each one's
attributes; a reply's persona is checked against its slot's draws (a contradiction is sent back
like a validation error) and keeps them under ``metadata.plan``. A slot whose persona is lost,
invalid or removed as a repeat is asked for again in a later wave, so quotas hold exactly.

Repeats are removed by a :class:`~profiles.factories.distinct.DistinctFilter`: by name always,
by near-identical wording with ``dedupe`` (a MinHash threshold), by meaning with ``embed``. Each
removal goes to ``on_removed`` with the persona it repeats, and its slot is asked for again.

Each profile's provenance names where its fields came from:
``llm:<model> request <request id> prompt <prompt hash>``; :attr:`LLMProfileFactory.generated_from`
and :class:`GeneratedProfile` give the same as an :class:`Origin` record, with the seed.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from profiles.errors import ConfigError, ConfigIssue, FactoryError
from profiles.jsonlines import lone_surrogate

from .base import ProfileFactory
from .chat import ChatClient, ChatError, ChatReply, _kind, _number, _text, _text_or_none, check_types
from .distinct import DistinctFilter, Embed, Removal
from .json_reply import normalise_name, parse_json_reply, prompt_hash
from .plan import MAX_COUNT, SamplingPlan, plan_from

if TYPE_CHECKING:
    from profiles.profile import Profile
    from profiles.profile_config import ProfileConfig

__all__ = [
    "GENERATED_FIELDS",
    "GeneratedProfile",
    "GenerationStats",
    "LLMProfileFactory",
    "Origin",
]

logger = logging.getLogger(__name__)

#: Fields a generated persona may set, with what the prompt says each means, in prompt order:
#: every plain text field of a persona (the checks in :func:`_validate` keep them plain).
FIELD_MEANINGS: Mapping[str, str] = MappingProxyType(
    {
        "name": "the persona's name, a text unique among all personas",
        "role": "what the agent is, in a few words, e.g. 'Data analyst'",
        "goal": "what the agent tries to achieve, in one or two sentences",
        "desc": "a short description of the persona's background and manner",
        "constraints": "a JSON list of rules the agent follows, each one sentence",
        "retry_goal": "optional: the goal when the agent retries after a failed answer",
        "retry_constraints": "optional: a JSON list of rules for a retry",
        "expand_prompt": "optional: extra instructions for the agent, in plain words",
        "examples": "optional: an example of a good answer by the agent, as one text",
        "language": "optional: the language the agent answers in, as a code such as en or zh",
        "model": "optional: the model the agent's prompts are written for, e.g. gpt-4o",
        "avatar": "optional: an image name or URL for the persona's avatar",
    }
)

#: Fields a generated persona may set; anything else in a reply is reported back to the model.
GENERATED_FIELDS: tuple[str, ...] = tuple(FIELD_MEANINGS)

_REQUIRED = ("name", "role")
_LIST_FIELDS = ("constraints", "retry_constraints")

#: Where the generation prompts live in a template root: ``_factories/llm/<locale>/<kind>.j2``.
#: Deeper than ``<family>/<locale>/<kind>.j2`` and starting with ``_``, so they are neither a
#: model family nor a prompt kind of profiles.
TEMPLATE_FOLDER = "_factories/llm"

#: How many taken names a prompt lists at most (the most recent); dedupe checks all of them.
MAX_AVOID_NAMES = 200

#: How many failure reasons a run keeps for its final error message.
MAX_REASONS = 20

#: Statuses that will not get better by asking again: the run stops at once.
_FATAL_STATUSES = frozenset({400, 401, 403, 404, 405, 410, 422})


@dataclass(frozen=True)
class Origin:
    """Where one generated persona came from: which model, request, prompt and seed."""

    #: The model that answered, as the server names it (the requested one if it does not say).
    model: str
    #: The server's id for the request that returned the persona.
    request_id: str | None
    #: :func:`~profiles.factories.json_reply.prompt_hash` of the messages of that request.
    prompt_hash: str
    #: The seed sent with the request (None when the factory has no seed).
    seed: int | None
    #: The batch the persona was asked for in, from 0.
    batch: int
    #: 0 for the batch's first reply, n for the reply to its n-th fix request.
    fix_round: int = 0
    #: With a sampling plan: which draw (slot, from 0) the persona was written for.
    draw: int | None = None

    def __str__(self) -> str:
        return f"llm:{self.model} request {self.request_id or 'unknown'} prompt {self.prompt_hash}"

    def as_dict(self) -> dict[str, Any]:
        """The origin as plain JSON values (``draw`` only with a plan)."""
        data = {
            "model": self.model,
            "request_id": self.request_id,
            "prompt_hash": self.prompt_hash,
            "seed": self.seed,
            "batch": self.batch,
            "fix_round": self.fix_round,
        }
        if self.draw is not None:
            data["draw"] = self.draw
        return data


@dataclass(frozen=True)
class GeneratedProfile:
    """One persona of a run: the profile, its validated fields as plain values, and its origin."""

    profile_id: Any
    profile: Profile
    #: The fields the model wrote, validated: texts, and lists of texts for the list fields; with
    #: a plan, also the fields its draws fill and ``metadata: {plan: {attribute: value}}``.
    data: Mapping[str, Any]
    origin: Origin

    def record(self) -> dict[str, Any]:
        """The persona as one JSON line: its fields (metadata included) and ``_origin``."""
        return {**self.data, "_origin": self.origin.as_dict()}


@dataclass
class GenerationStats:
    """Counts of the last run, for a summary line; updated as the run goes."""

    requested: int = 0
    made: int = 0
    batches: int = 0
    fix_requests: int = 0
    #: Objects that failed validation when first read (fixed or not).
    invalid: int = 0
    #: Objects that passed validation after a fix request.
    fixed: int = 0
    #: Personas dropped because their name was taken.
    duplicates: int = 0
    #: Personas dropped because their wording (or embedding) was too close to a kept one's.
    near_duplicates: int = 0
    #: Objects that contradicted the attributes drawn for them (fixed or not).
    contradictions: int = 0
    #: Why batches or objects were lost, a few of each kind, for the error message.
    reasons: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Job:
    index: int
    count: int
    seed: int | None
    messages: tuple[Mapping[str, str], ...]
    language: str | None
    hints: Mapping[str, str]
    #: The slots this batch asks for, in the order the prompt lists them.
    slots: tuple[int, ...] = ()
    #: Each slot's draws, with a plan.
    draws: tuple[Mapping[str, Any], ...] | None = None


@dataclass(frozen=True)
class _Candidate:
    data: dict[str, Any]
    origin: Origin
    slot: int


@dataclass
class _BatchResult:
    candidates: list[_Candidate] = field(default_factory=list)
    fix_requests: int = 0
    invalid: int = 0
    fixed: int = 0
    contradictions: int = 0
    reasons: list[str] = field(default_factory=list)


class LLMProfileFactory(ProfileFactory):
    """Creates personas with a model on an OpenAI-compatible chat-completions endpoint.

    Args:
        base_url: the API root, e.g. ``http://localhost:8000/v1`` (``/chat/completions`` is added).
        model: the model that writes the personas.
        rules: what the personas should be like, in plain words; goes into the prompt as written.
        examples: a few personas (dicts or ``ProfileConfig``) shown to the model; their names are
            taken, so a generated persona with the same name is dropped.
        count: how many personas ``create_profiles`` makes; the plan's ``count`` when None.
        batch_size: personas asked for per request.
        seed: batch ``i`` is sent with ``seed + i``; None sends no seed (the plan's ``seed`` when
            the plan has one). The plan's draws use it too (0 when there is none).
        api_key_env: the environment variable holding the API key (never shown anywhere).
        max_in_flight: requests running at once.
        max_fix_rounds: follow-up requests per batch for invalid personas.
        language: the language the personas are written in; also selects the prompt's locale and
            becomes each profile's language. A generated ``language`` field must agree with it.
        client: a ready :class:`ChatClient` (its timeouts, retries and backoff are used as they are).
        max_batches: batch requests a run may send before it gives up; by default twice the
            batches the count needs, plus two. Each batch adds at most ``max_fix_rounds`` fix
            requests, and the client retries each request on its own terms.
        timeout: seconds to wait for one reply, when the factory makes its own client.
        max_retries: tries after the first for a failed request, when the factory makes its own
            client (a connection refused before the server ever answered is not retried).
        temperature: sampling temperature; the server's default when None.
        template_dirs: folders searched for ``_factories/llm/<locale>/personas.j2`` and ``fix.j2``
            before the bundled ones, to change the prompts.
        plan: a sampling plan (:class:`~profiles.factories.plan.SamplingPlan`, the path of a plan
            file, or its data as a mapping): the attributes each persona is written for.
        dedupe: the estimated Jaccard similarity of text shingles (e.g. 0.85) at which a persona
            is removed as a near-duplicate of one already made (needs numpy); None compares names only.
        embed: a callable embedding texts (e.g. an
            :class:`~profiles.factories.embeddings.EmbeddingClient`), to remove personas whose
            texts mean the same; used with ``embedding_threshold`` (cosine).
        option_names: what the caller calls the options, e.g. ``{"max_batches": "--max-batches"}``,
            so that advice in errors names options the user can set.

    Raises:
        FactoryError: an option is out of range, or an example is not a persona.
        ConfigError: an example persona or the plan is invalid.
    """

    def __init__(
        self,
        base_url: str | None,
        model: str | None,
        *,
        rules: str,
        examples: Iterable[Mapping[str, Any] | ProfileConfig] = (),
        count: int | None = None,
        batch_size: int = 5,
        seed: int | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        max_in_flight: int = 4,
        max_fix_rounds: int = 2,
        language: str | None = None,
        client: ChatClient | None = None,
        max_batches: int | None = None,
        timeout: float = 60.0,
        max_retries: int = 4,
        temperature: float | None = None,
        template_dirs: Iterable[str | Path] = (),
        plan: SamplingPlan | str | Path | Mapping[str, Any] | None = None,
        dedupe: float | None = None,
        embed: Embed | None = None,
        embedding_threshold: float = 0.9,
        option_names: Mapping[str, str] | None = None,
    ) -> None:
        if option_names is not None and not isinstance(option_names, Mapping):
            raise FactoryError(
                "LLMProfileFactory: option_names must be a mapping of option to its name, such as "
                f"{{'base_url': '--base-url'}}, got {_kind(option_names)}."
            )
        self._names = dict(option_names or {})
        check_types("LLMProfileFactory", self._names, (
            ("base_url", base_url, "text, the server's URL such as 'http://localhost:8000/v1', or None with client=",
             _text_or_none),
            ("model", model, "text, the model's name, or None with client=", _text_or_none),
            ("api_key_env", api_key_env, "text, the name of an environment variable", _text),
            ("language", language, "text such as 'en' or 'zh', or None", _text_or_none),
            ("timeout", timeout, "a number of seconds", _number),
            ("temperature", temperature, "a number or None", lambda value: value is None or _number(value)),
            ("dedupe", dedupe, "a number between 0 and 1, or None", lambda value: value is None or _number(value)),
            ("embedding_threshold", embedding_threshold, "a number between 0 and 1", _number),
            ("plan", plan, "a SamplingPlan, the path of a plan file, its data as a mapping, or None",
             lambda value: value is None or isinstance(value, (SamplingPlan, str, Path, Mapping))),
            ("template_dirs", template_dirs, "a list of folders (texts or Paths)",
             lambda value: isinstance(value, Iterable) and not isinstance(value, (str, bytes, Mapping))),
            ("examples", examples, "a list of personas (dicts of fields or ProfileConfigs)",
             lambda value: isinstance(value, Iterable) and not isinstance(value, (str, bytes, Mapping))),
            ("client", client, "a ChatClient or None", lambda value: value is None or isinstance(value, ChatClient)),
            ("embed", embed, "a callable that embeds texts, or None", lambda value: value is None or callable(value)),
        ))
        template_dirs = tuple(template_dirs)
        for folder in template_dirs:
            if not isinstance(folder, (str, Path)):
                raise FactoryError(
                    f"LLMProfileFactory: each of {self._option('template_dirs')} must be a folder (a text or a "
                    f"Path), got {_kind(folder)}."
                )
        self.plan = plan_from(plan)
        if count is None and self.plan is not None:
            count = self.plan.count
        if count is None:
            raise FactoryError("LLMProfileFactory needs a count: how many personas to make (or a plan with count:).")
        if seed is None and self.plan is not None:
            seed = self.plan.seed
        for option, value, least in (
            ("count", count, 1),
            ("batch_size", batch_size, 1),
            ("max_in_flight", max_in_flight, 1),
            ("max_fix_rounds", max_fix_rounds, 0),
            ("max_retries", max_retries, 0),
            ("max_batches", 1 if max_batches is None else max_batches, 1),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise FactoryError(
                    f"LLMProfileFactory: {self._option(option)} must be a whole number, {least} or more, got {value!r}."
                )
        if count > MAX_COUNT:  # every persona's id and draw is held while the run lasts
            raise FactoryError(
                f"LLMProfileFactory: {self._option('count')} must be at most {MAX_COUNT:,}, got {count:,}; split a "
                "bigger population into runs with different seeds."
            )
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise FactoryError(f"LLMProfileFactory: seed must be a whole number or None, got {seed!r}.")
        if not isinstance(rules, str) or not rules.strip():
            raise FactoryError("LLMProfileFactory needs rules: a text saying what the personas should be like.")
        if language and self.plan is not None and "language" in self.plan.field_map():
            attribute = self.plan.field_map()["language"][0]
            raise FactoryError(
                f"the plan draws each persona's language (attribute {attribute!r}) and {self._option('language')} "
                f"asks for {language!r} for all; leave one of them out."
            )
        # checked now, not at the first reply: a bad threshold should fail before any request
        DistinctFilter(threshold=dedupe, embed=embed, embedding_threshold=embedding_threshold)
        if client is None:
            client = ChatClient(
                base_url or "",
                model or "",
                api_key_env=api_key_env,
                timeout=timeout,
                max_retries=max_retries,
                max_in_flight=max_in_flight,
                option_names=option_names,
            )
            self._owns_client = True
        else:
            self._owns_client = False
        self.client = client
        self.model = model or client.model
        self.rules = rules
        self.count = count
        self.batch_size = batch_size
        self.seed = seed
        self.max_in_flight = max_in_flight
        self.max_fix_rounds = max_fix_rounds
        self.max_batches = max_batches
        self.language = language
        self.temperature = temperature
        self.dedupe = dedupe
        self.embed = embed
        self.embedding_threshold = embedding_threshold
        self.template_dirs = tuple(Path(folder) for folder in template_dirs)
        self.examples: tuple[dict[str, Any], ...] = tuple(
            _example_data(example, index) for index, example in enumerate(examples, 1)
        )
        self._origins: dict[Any, Origin] = {}
        #: Counts of the last run of `create_profiles` or `generate`.
        self.stats = GenerationStats()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(client={self.client!r}, count={self.count}, "
            f"batch_size={self.batch_size}, seed={self.seed})"
        )

    def _option(self, name: str) -> str:
        return self._names.get(name, name)

    @property
    def generated_from(self) -> Mapping[Any, Origin]:
        """The origin of every profile this factory made, by profile id (a read-only view)."""
        return MappingProxyType(self._origins)

    def draws(self, count: int | None = None) -> list[dict[str, Any]]:
        """The plan's draws for a run of `count` personas (the factory's count), one per slot."""
        if self.plan is None:
            return []
        return self.plan.draw(self.count if count is None else count, 0 if self.seed is None else self.seed)

    def close(self) -> None:
        """Close the chat client's connections, if the factory made the client."""
        if self._owns_client:
            self.client.close()

    def __enter__(self) -> LLMProfileFactory:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- the ProfileFactory contract ------------------------------------------------------------

    def create_profile(
        self,
        profile_id: Any = None,
        *,
        name: str | None = None,
        role: str | None = None,
        goal: str | None = None,
        language: str | None = None,
        model: str | None = None,
        **options: Any,
    ) -> Profile:
        """Generate one persona; `name`, `role` and `goal`, when given, are asked for and kept.

        `language` is the language to write it in (the factory's by default); `model` is the
        profile's own model field, not the one that writes it. The plan, which is about a whole
        population, does not apply to one persona on demand.

        Raises:
            FactoryError: no valid persona came back within the request budget.
        """
        hints = {key: value for key, value in (("name", name), ("role", role), ("goal", goal)) if value}
        run = self._run([profile_id], hints=hints, language=language, model=model, dedupe=False, planned=False)
        try:
            return next(run).profile
        finally:
            run.close()

    def create_profiles(
        self,
        profile_ids: Iterable[Any] | None = None,
        *,
        language: str | None = None,
        model: str | None = None,
        **options: Any,
    ) -> Iterator[Profile]:
        """Yield `count` distinct personas as their batches complete (see :meth:`generate`)."""
        for generated in self.generate(profile_ids, language=language, model=model):
            yield generated.profile

    def generate(
        self,
        profile_ids: Iterable[Any] | None = None,
        *,
        language: str | None = None,
        model: str | None = None,
        previous: Iterable[Mapping[str, Any]] = (),
        first_batch: int = 0,
        on_removed: Callable[[Removal], None] | None = None,
    ) -> Iterator[GeneratedProfile]:
        """Yield `count` distinct valid personas, each with its fields and origin, as batches complete.

        Profile ids are 0, 1, 2, … or, when `profile_ids` is given, its items, one persona each.
        Personas already yielded stay yielded if the run later fails.

        To continue an interrupted run, pass what it wrote as `previous` (the records of
        :meth:`GeneratedProfile.record`, in order) and the number of batches it sent as
        `first_batch`: those personas count toward `count` and keep their ids, their names and
        texts are taken, their slots of the plan are filled, and new batches go on from
        `first_batch` (their seeds too). `on_removed` is called with each persona left out as a
        repeat of one kept (by name, wording or embedding), before its slot is asked for again.

        Raises:
            FactoryError: fewer personas than asked for came back within ``max_batches`` requests
                (the message says how many were made and why the rest failed), or the server
                refused the requests in a way another try cannot fix (bad key, wrong URL or model,
                nothing listening), or `previous` does not fit this run.
        """
        ids = list(profile_ids) if profile_ids is not None else list(range(self.count))
        return self._run(
            ids,
            hints={},
            language=language,
            model=model,
            dedupe=True,
            planned=True,
            previous=list(previous),
            first_batch=first_batch,
            on_removed=on_removed,
        )

    # -- a run ----------------------------------------------------------------------------------

    def _run(
        self,
        ids: Sequence[Any],
        *,
        hints: Mapping[str, str],
        language: str | None,
        model: str | None,
        dedupe: bool,
        planned: bool,
        previous: Sequence[Mapping[str, Any]] = (),
        first_batch: int = 0,
        on_removed: Callable[[Removal], None] | None = None,
    ) -> Iterator[GeneratedProfile]:
        target = len(ids)
        stats = self.stats = GenerationStats(requested=target)
        if target == 0:
            return
        language = language or self.language
        max_batches = self.max_batches or 2 * math.ceil(target / self.batch_size) + 2
        plan = self.plan if planned else None
        draws = self.draws(target) if plan is not None else None
        distinct = DistinctFilter(
            threshold=self.dedupe if dedupe else None,
            embed=self.embed if dedupe else None,
            embedding_threshold=self.embedding_threshold,
            # a plan that draws names decides them: two slots may draw one row's name on purpose
            names=dedupe and not (plan is not None and "name" in plan.field_map()),
        )
        if dedupe and self.examples:
            for number, (example, prepared) in enumerate(
                zip(self.examples, distinct.prepare(self.examples), strict=True), start=1
            ):
                distinct.keep(("example", number), example, prepared)
        made = self._resume(ids, previous, distinct, draws, dedupe)
        stats.made = made
        filled = {int(record["_origin"]["draw"]) for record in previous} if draws is not None else set()
        pending = [slot for slot in range(target) if slot not in filled] if draws is not None else list(
            range(made, target)
        )
        sent = first_batch
        pool = ThreadPoolExecutor(max_workers=self.max_in_flight, thread_name_prefix="profiles-llm")
        try:
            while made < target:
                if sent >= max_batches:
                    raise self._exhausted(stats, max_batches)
                wave = min(self.max_in_flight, max_batches - sent)
                groups = [pending[start : start + self.batch_size] for start in range(0, len(pending), self.batch_size)]
                avoid = distinct.taken_names[-MAX_AVOID_NAMES:] if dedupe else []
                jobs = [
                    self._job(sent + offset, group, draws, avoid, hints, language)
                    for offset, group in enumerate(groups[:wave])
                ]
                sent += len(jobs)
                # all of a wave's prompts are built before any is sent, and read back in order:
                # that is what makes a run reproducible whatever order the replies arrive in
                futures: list[Future[_BatchResult]] = [pool.submit(self._run_batch, job) for job in jobs]
                for future in futures:
                    result = future.result()
                    stats.batches += 1
                    stats.fix_requests += result.fix_requests
                    stats.invalid += result.invalid
                    stats.fixed += result.fixed
                    stats.contradictions += result.contradictions
                    _note(stats, *result.reasons)
                    prepared = distinct.prepare([candidate.data for candidate in result.candidates])
                    for candidate, prep in zip(result.candidates, prepared, strict=True):
                        near = distinct.find(candidate.data, prep) if dedupe else None
                        if near is not None:
                            if near.reason == "name":
                                stats.duplicates += 1  # counted in the summary, not listed: they crowd out causes
                            else:
                                stats.near_duplicates += 1
                            logger.info("persona %r dropped: repeats %r (%s, %.2f)", candidate.data.get("name"),
                                        near.name, near.reason, near.similarity)
                            if on_removed is not None:
                                record = {**candidate.data, "_origin": candidate.origin.as_dict()}
                                on_removed(Removal(record, near))
                            continue
                        profile_id = ids[made]
                        distinct.keep(profile_id, candidate.data, prep)
                        pending.remove(candidate.slot)
                        profile = self._build(profile_id, candidate.data, candidate.origin, hints, language, model)
                        made += 1
                        stats.made = made
                        self._origins[profile_id] = candidate.origin
                        yield GeneratedProfile(profile_id, profile, MappingProxyType(candidate.data), candidate.origin)
                        if made >= target:
                            return
        except ChatError as exc:
            if not _fatal(exc):
                raise
            if exc.fatal:
                raise FactoryError(f"made {made} of {target} persona(s): {exc}") from exc
            raise FactoryError(
                f"made {made} of {target} persona(s), then the server refused a request: {exc}"
            ) from exc
        finally:
            # stopping early (enough personas, an error, or the caller stopped reading) drops the
            # batches not yet sent; requests already running finish on their own
            pool.shutdown(wait=False, cancel_futures=True)

    def _resume(
        self,
        ids: Sequence[Any],
        previous: Sequence[Mapping[str, Any]],
        distinct: DistinctFilter,
        draws: Sequence[Mapping[str, Any]] | None,
        dedupe: bool,
    ) -> int:
        """Take in what an interrupted run wrote; return how many personas that was."""
        if not previous:
            return 0
        if len(previous) > len(ids):
            raise FactoryError(
                f"the earlier run wrote {len(previous)} persona(s), more than the {len(ids)} asked for; "
                "resume with the same count"
            )
        datas = [{key: value for key, value in record.items() if key != "_origin"} for record in previous]
        seen: set[int] = set()
        for number, record in enumerate(previous, start=1):
            if draws is None:
                continue
            slot = (record.get("_origin") or {}).get("draw")
            if not isinstance(slot, int) or not 0 <= slot < len(draws) or slot in seen:
                raise FactoryError(
                    f"persona {number} of the earlier run has no draw of this plan (draw {slot!r}); "
                    "resume with the same plan, count and seed"
                )
            if (datas[number - 1].get("metadata") or {}).get("plan") != _plain(draws[slot]):
                raise FactoryError(
                    f"persona {number} of the earlier run was written for other draws than this plan makes "
                    f"for draw {slot}; resume with the same plan, count and seed"
                )
            seen.add(slot)
        prepared = distinct.prepare(datas) if dedupe else [None] * len(datas)
        for profile_id, data, prep in zip(ids[: len(datas)], datas, prepared, strict=True):
            if dedupe:
                distinct.keep(profile_id, data, prep)
        return len(previous)

    def _job(
        self,
        index: int,
        slots: Sequence[int],
        draws: Sequence[Mapping[str, Any]] | None,
        avoid: Sequence[str],
        hints: Mapping[str, str],
        language: str | None,
    ) -> _Job:
        examples = json.dumps(list(self.examples), ensure_ascii=False, indent=2) if self.examples else ""
        slot_draws = tuple(draws[slot] for slot in slots) if draws is not None else None
        text = self._render(
            "personas",
            language,
            rules=self.rules,
            count=len(slots),
            fields=[
                {"name": name, "meaning": meaning, "required": name in _REQUIRED}
                for name, meaning in FIELD_MEANINGS.items()
            ],
            language=language,
            hints=dict(hints),
            examples=examples,
            avoid_names=list(avoid),
            personas=self._shown(slot_draws),
        )
        seed = None if self.seed is None else self.seed + index
        return _Job(
            index, len(slots), seed, ({"role": "user", "content": text},), language, dict(hints),
            tuple(slots), slot_draws,
        )

    def _shown(self, draws: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
        """Each slot's draws as the prompts list them."""
        if draws is None or self.plan is None:
            return []
        return [
            {
                "number": number,
                "attributes": self.plan.describe(draw),
                "echo": json.dumps(_plain(self.plan.echoed(draw)), ensure_ascii=False),
            }
            for number, draw in enumerate(draws, start=1)
        ]

    def _render(self, kind: str, locale: str | None, **variables: Any) -> str:
        """Render the `kind` template of the generation prompts with the variables it declares."""
        from profiles.errors import TemplateNotFoundError
        from profiles.rendering.renderer import get_renderer
        from profiles.rendering.templates import locale_chain

        renderer = get_renderer(self.template_dirs)
        tried = [f"{TEMPLATE_FOLDER}/{code}/{kind}.j2" for code in locale_chain(locale)]
        for name in tried:
            try:
                compiled = renderer.load(name)
                break
            except TemplateNotFoundError:
                continue
        else:
            roots = ", ".join(str(root) for root in renderer.roots)
            raise TemplateNotFoundError(f"no {kind!r} prompt for the LLM factory; tried {', '.join(tried)} in {roots}")
        return renderer.render(compiled, {name: variables[name] for name in compiled.declared if name in variables})

    def _ask(self, messages: Sequence[Mapping[str, str]], seed: int | None) -> ChatReply:
        return self.client.complete(messages, seed=seed, temperature=self.temperature)

    def _run_batch(self, job: _Job) -> _BatchResult:
        """Ask for one batch, then for fixes of what was invalid; runs on a worker thread.

        Positions index the job's slots. ``asked`` is what the latest request asked for, in the
        order it listed them; a reply's objects fill those positions in order, except that with a
        plan an object that contradicts its position's draws but fits another open position's
        takes that one (models reorder). Positions left open are asked for again in a later wave.
        """
        result = _BatchResult()
        messages = list(job.messages)
        where = f"batch {job.index}"
        asked = list(range(len(job.slots)))
        try:
            reply = self._ask(messages, job.seed)
        except ChatError as exc:
            if _fatal(exc):
                raise
            result.reasons.append(f"{where}: {exc}")
            return result
        for fix_round in range(self.max_fix_rounds + 1):
            problem = ""
            try:
                parsed = parse_json_reply(reply.content)
                objects = parsed.objects
                for dropped in parsed.problems:
                    logger.info("%s (request %s): %s", where, reply.request_id, dropped)
            except FactoryError as exc:
                objects, problem = [], exc.message
            open_positions = list(asked)
            invalid: list[tuple[int, dict[str, Any], list[str]]] = []
            for order, item in enumerate(objects):
                if not open_positions:
                    logger.info("%s (request %s): %d persona(s) more than asked for ignored", where,
                                reply.request_id, len(objects) - order)
                    break
                position = self._place(item, order, asked, open_positions, job)
                open_positions.remove(position)
                data, problems, contradicted = self._check(item, job, position)
                result.contradictions += contradicted
                if problems:
                    invalid.append((position, item, problems))
                    continue
                origin = Origin(
                    model=reply.model or self.model,
                    request_id=reply.request_id,
                    prompt_hash=prompt_hash(messages),
                    seed=job.seed,
                    batch=job.index,
                    fix_round=fix_round,
                    draw=job.slots[position] if job.draws is not None else None,
                )
                result.candidates.append(_Candidate(data, origin, job.slots[position]))
                result.fixed += fix_round > 0
            if fix_round == 0:
                result.invalid += len(invalid)
            if not invalid and not problem:
                break
            if fix_round == self.max_fix_rounds:
                if problem:
                    result.reasons.append(f"{where}: no usable reply after {fix_round} fix request(s): {problem}")
                for _, _, problems in invalid:
                    result.reasons.append(
                        f"{where}: a persona was still invalid after {fix_round} fix request(s): {'; '.join(problems)}"
                    )
                break
            # a fix asks for the invalid ones again; the ones simply missing wait for a later wave
            asked = [position for position, _, _ in invalid] if invalid else open_positions
            fix = self._render(
                "fix",
                job.language,
                problem=problem,
                invalid=[
                    {
                        # escaped when it holds a lone surrogate, which no request body can carry as is
                        "json": json.dumps(item, ensure_ascii=lone_surrogate(item) is not None, default=str),
                        "problems": problems,
                        "attributes": self._attributes_text(job, position),
                    }
                    for position, item, problems in invalid
                ],
                personas=[] if invalid else self._shown([job.draws[p] for p in asked] if job.draws else None),
                count=len(asked),
            )
            messages = [
                *messages,
                {"role": "assistant", "content": reply.content},
                {"role": "user", "content": fix},
            ]
            try:
                reply = self._ask(messages, job.seed)
            except ChatError as exc:
                if _fatal(exc):
                    raise
                result.reasons.append(f"{where}: fix request failed: {exc}")
                break
            finally:
                result.fix_requests += 1
        return result

    def _attributes_text(self, job: _Job, position: int) -> str:
        if job.draws is None or self.plan is None:
            return ""
        return "; ".join(f"{item['name']}: {item['value']}" for item in self.plan.describe(job.draws[position]))

    def _place(self, item: Mapping[str, Any], order: int, asked: Sequence[int], open_positions: Sequence[int],
               job: _Job) -> int:
        """The position a reply's object fills: its place in the request, or the open one it fits."""
        preferred = asked[order] if order < len(asked) and asked[order] in open_positions else open_positions[0]
        if job.draws is None or self.plan is None:
            return preferred
        if self.plan.agrees(item, job.draws[preferred]):
            return preferred
        for position in open_positions:
            if self.plan.agrees(item, job.draws[position]):
                return position
        return preferred

    def _check(self, item: Mapping[str, Any], job: _Job, position: int) -> tuple[dict[str, Any], list[str], bool]:
        """A reply's object as persona data, every problem with it, and whether it contradicted its draws."""
        item = dict(item)
        draw = job.draws[position] if job.draws is not None and self.plan is not None else None
        plan_problems: list[str] = []
        if draw is not None:
            assert self.plan is not None
            checked = self.plan.check(item, draw)
            item.pop("attributes", None)
            for name, value in checked.fill.items():
                item.setdefault(name, value)
                if item[name] in (None, ""):
                    item[name] = value
            plan_problems = checked.problems
        data, problems = _validate({**item, **job.hints})
        if job.language and isinstance(data.get("language"), str):
            if data["language"].strip().casefold() != job.language.strip().casefold():
                problems.append(
                    f"field 'language': the personas are asked for in {job.language!r}, but this one says "
                    f"{data['language']!r}; set it to {job.language!r} or leave it out"
                )
        problems.extend(plan_problems)
        if draw is not None:
            data["metadata"] = {"plan": _plain(draw)}
        return data, problems, bool(plan_problems)

    def _build(
        self,
        profile_id: Any,
        data: Mapping[str, Any],
        origin: Origin,
        hints: Mapping[str, str],
        language: str | None,
        model: str | None,
    ) -> Profile:
        from profiles.profile_config import ProfileConfig

        config = ProfileConfig.from_data(data, origin=str(origin))
        return config.create_profile(profile_id, language=language, model=model, overrides=dict(hints))

    def _exhausted(self, stats: GenerationStats, max_batches: int) -> FactoryError:
        reasons = "; ".join(reason.rstrip(".") for reason in stats.reasons) or (
            "the replies held fewer personas than asked for"
        )
        repeats = f"{stats.duplicates} duplicate(s) dropped"
        if stats.near_duplicates:
            repeats += f", {stats.near_duplicates} near-duplicate(s) removed"
        return FactoryError(
            f"made {stats.made} of {stats.requested} persona(s) in {stats.batches} batch request(s) and "
            f"{stats.fix_requests} fix request(s) ({self._option('max_batches')}={max_batches}), "
            f"{repeats}; the rest failed: {reasons}. "
            f"Raise {self._option('max_batches')}, ask for fewer personas, or make the rules easier to follow."
        )


def _fatal(exc: ChatError) -> bool:
    """Whether asking again cannot help: nothing listens, or the server refuses such requests."""
    return exc.fatal or exc.status in _FATAL_STATUSES


def _plain(value: Any) -> Any:
    """A draw as JSON values (tuples as lists), as metadata keeps it."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def _note(stats: GenerationStats, *reasons: str) -> None:
    """Keep a few reasons of each run; the message that lists them must stay readable."""
    room = MAX_REASONS - len(stats.reasons)
    if room > 0:
        stats.reasons.extend(reasons[:room])


def _split(total: int, size: int) -> list[int]:
    """Batch sizes that add up to `total`, each at most `size`: 12 by 5 is [5, 5, 2]."""
    full, rest = divmod(total, size)
    return [size] * full + ([rest] if rest else [])


def _validate(item: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Return a generated object's fields as plain values, and every problem found in it.

    Problems are phrased for the model: they are sent back in the fix request.
    """
    from profiles.profile_config import ProfileConfig
    from profiles.rendering.renderer import has_template_syntax

    problems: list[str] = []
    reported: set[str] = set()
    data: dict[str, Any] = {}
    for key, value in item.items():
        if key not in GENERATED_FIELDS:
            problems.append(f"field '{key}': not a persona field; use only {', '.join(GENERATED_FIELDS)}")
            continue
        if isinstance(value, str):
            value = value.strip()
        elif isinstance(value, list):
            value = [entry.strip() if isinstance(entry, str) else entry for entry in value]
            value = [entry for entry in value if entry != ""]
        elif isinstance(value, Mapping):
            # a mapping would be read as a dynamic field: a model must not choose providers or keys
            kind = "a list of texts" if key in _LIST_FIELDS else "text"
            problems.append(f"field '{key}': expected {kind}, got an object")
            reported.add(key)
            continue
        texts = value if isinstance(value, list) else [value]
        surrogate = lone_surrogate(texts)
        if surrogate is not None:  # `\ud800` alone in the reply's JSON: no character, and no line can hold it
            code = surrogate[1]
            problems.append(f"field '{key}': holds {code}, half of a surrogate pair; write the character itself")
            reported.add(key)
            continue
        if any(isinstance(text, str) and has_template_syntax(text) for text in texts):
            problems.append(f"field '{key}': holds template marks ({{{{, {{% or {{#); write plain text")
            reported.add(key)
            continue
        if value in ("", [], None):
            continue
        data[key] = value
    try:
        ProfileConfig(**data)
    except ConfigError as exc:
        problems.extend(
            f"field '{issue.field}': is required" if issue.code == "identity_missing" else str(issue)
            for issue in exc.issues
            if issue.field not in reported
        )
    if not problems and not normalise_name(data["name"]):
        problems.append("field 'name': has no letters or digits; give a real name")
    return data, problems


def _example_data(example: Mapping[str, Any] | ProfileConfig, index: int) -> dict[str, Any]:
    """An example persona as the plain generated fields the prompt shows.

    Dynamic fields and texts holding template marks are left out: the model is asked for plain
    text, and a provider's value may be a secret.
    """
    from profiles.dynconfig import ConfigInfo
    from profiles.profile_config import ProfileConfig

    if isinstance(example, Mapping):
        try:
            example = ProfileConfig(**dict(example))
        except ConfigError as exc:
            raise ConfigError(
                [
                    ConfigIssue(issue.message, f"examples[{index}]" + (f".{issue.field}" if issue.field else ""))
                    for issue in exc.issues
                ]
            ) from None
    if not isinstance(example, ProfileConfig):
        raise FactoryError(
            f"example persona {index} is {type(example).__name__}; give a dict of fields or a ProfileConfig."
        )
    from profiles.rendering.renderer import has_template_syntax

    data: dict[str, Any] = {}
    for name in GENERATED_FIELDS:
        value = getattr(example, name)
        if value is None or isinstance(value, ConfigInfo):  # dynamic values are not shown to a model
            continue
        # template marks are left out: the prompt tells the model to write none
        if isinstance(value, tuple):
            value = [item for item in value if not has_template_syntax(item)]
        elif has_template_syntax(value):
            continue
        if value:
            data[name] = value
    return data
