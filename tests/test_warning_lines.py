"""The library's warnings name the caller's line, not a line inside the library.

A fixed stacklevel was right for one call path only: UnknownModelWarning raised under
format_system_prompt, a deployment warning under explain, named a file of profiles/.
"""

from __future__ import annotations

import uuid
import warnings
from pathlib import Path

import pytest

import profiles
from profiles import (
    DynConfig,
    ProfileConfig,
    StaleStoreWarning,
    StoreProvider,
    UnknownDeploymentWarning,
    UnknownModelWarning,
    UnusedInputWarning,
    load_profile,
)
from profiles.store import PromptStore

HERE = str(Path(__file__).resolve())


def _line_of(marker: str) -> int:
    """The line of this file holding `marker`, so the test does not hard-code line numbers."""
    lines = Path(HERE).read_text(encoding="utf-8").splitlines()
    return next(number for number, text in enumerate(lines, 1) if text.rstrip().endswith(f"# {marker}"))


def _one(caught: list[warnings.WarningMessage], category: type[Warning]) -> warnings.WarningMessage:
    (found,) = [warning for warning in caught if issubclass(warning.category, category)]
    return found


def test_an_unknown_model_is_warned_at_the_callers_line():
    model = f"no-such-model-{uuid.uuid4().hex}"
    config = ProfileConfig(name="Ada", role="Reviewer", model=model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config.create_profile().format_system_prompt()  # unknown-model
    found = _one(caught, UnknownModelWarning)
    assert (found.filename, found.lineno) == (HERE, _line_of("unknown-model"))
    other = f"no-such-model-{uuid.uuid4().hex}"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config.create_profile(model=other).format_messages(question="q")  # unknown-model-messages
    found = _one(caught, UnknownModelWarning)
    assert (found.filename, found.lineno) == (HERE, _line_of("unknown-model-messages"))


def test_deployment_and_input_warnings_name_the_callers_line(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("name: Ada\nrole: Reviewer\ndeployments:\n  prod: {goal: Check.}\n"
                    "inputs:\n  unread: {type: string}\n", encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config = load_profile(path)  # load
    assert (_one(caught, UnusedInputWarning).filename, _one(caught, UnusedInputWarning).lineno) == (
        HERE, _line_of("load"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config.create_profile(deployment="qa")  # create
    found = _one(caught, UnknownDeploymentWarning)
    assert (found.filename, found.lineno) == (HERE, _line_of("create"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        profiles.explain(path, deployment="uat")  # explain
    found = _one(caught, UnknownDeploymentWarning)
    assert (found.filename, found.lineno) == (HERE, _line_of("explain"))


def test_a_stale_store_is_warned_at_the_callers_line(tmp_path, monkeypatch):
    from profiles import providers

    path = tmp_path / "store.db"
    url = f"sqlite:///{path}"
    with PromptStore(url) as store:
        store.put("summarizer/name", "Plato", label="production")
    provider = StoreProvider(url, ttl=0)
    monkeypatch.setitem(providers._providers, "store_lines", provider)
    config = ProfileConfig(name=DynConfig("Ada", key="summarizer/name", provider="store_lines"), role="Reviewer")
    assert config.create_profile(deployment="prod").get_name() == "Plato"
    provider.close()
    path.write_bytes(b"this is no longer a database" * 200)
    with pytest.warns(StaleStoreWarning) as caught:
        config.create_profile(deployment="prod")  # stale
    found = _one(list(caught), StaleStoreWarning)
    assert (found.filename, found.lineno) == (HERE, _line_of("stale"))
