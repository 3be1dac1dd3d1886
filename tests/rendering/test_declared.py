"""The variables a template reads, across the files it extends, includes and imports, with their places."""

from __future__ import annotations

import pytest

from profiles.rendering.renderer import Renderer


@pytest.fixture
def root(tmp_path):
    files = {
        "base.j2": "You are {{ name }}.\n{% block body %}{% endblock %}\nGoal: {{ goal }}\n",
        "child.j2": "{% extends 'base.j2' %}{% block body %}Role: {{ role }}{% endblock %}",
        "row.j2": "- {{ item }} for {{ customer }}\n",
        "list.j2": "{% for item in items %}{% include 'row.j2' %}{% endfor %}",
        "macros.j2": "{% macro sign() %}-- {{ signature }}{% endmacro %}",
        "with_context.j2": "{% import 'macros.j2' as m with context %}{{ m.sign() }}",
        "without_context.j2": "{% import 'macros.j2' as m %}{% from 'macros.j2' import sign %}x",
        "optional.j2": "{% if date is defined %}{{ date }}{% endif %}{{ tone|default('plain') }}"
        "{% if x %}{% set mood = 'up' %}{% endif %}{{ mood }}",
        "dynamic.j2": "{% include kind ~ '.j2' %}",
        "missing.j2": "{% include 'nowhere.j2' ignore missing %}{{ here }}",
        "loop_a.j2": "{{ a }}{% if deeper %}{% include 'loop_b.j2' %}{% endif %}",
        "loop_b.j2": "{{ b }}{% include 'loop_a.j2' %}",
        "choice.j2": "{% include ['none.j2', 'row.j2'] %}",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_a_child_reads_its_parents_variables(root):
    compiled = Renderer([root]).load("child.j2")
    assert compiled.declared == {"name", "goal", "role"}
    assert compiled.required == {"name", "goal", "role"}
    assert (compiled.variables["name"].template, compiled.variables["name"].line) == ("base.j2", 1)
    assert compiled.where("goal") == "template 'base.j2' line 3"
    assert compiled.where("role") == "template 'child.j2' line 1"
    assert compiled.files == ("base.j2",) and compiled.closed


def test_names_an_includer_sets_are_not_asked_of_the_caller(root):
    """`item` is the loop's; `customer` comes from outside."""
    compiled = Renderer([root]).load("list.j2")
    assert compiled.declared == {"items", "customer"}
    assert compiled.where("customer") == "template 'row.j2' line 1"


def test_imports_count_only_with_context(root):
    renderer = Renderer([root])
    assert renderer.load("with_context.j2").declared == {"signature"}
    assert renderer.load("without_context.j2").declared == frozenset()


def test_tested_defaulted_or_self_set_variables_are_optional(root):
    compiled = Renderer([root]).load("optional.j2")
    assert compiled.declared == {"date", "tone", "x", "mood"}
    assert compiled.required == {"x"}


def test_a_computed_name_leaves_the_template_open(root):
    compiled = Renderer([root]).load("dynamic.j2")
    assert not compiled.closed and compiled.declared == {"kind"}


def test_a_missing_file_and_a_cycle_are_harmless(root):
    renderer = Renderer([root])
    assert renderer.load("missing.j2").declared == {"here"}
    assert renderer.load("loop_a.j2").declared == {"a", "deeper", "b"}


def test_a_list_of_names_takes_the_first_that_exists(root):
    assert Renderer([root]).load("choice.j2").declared == {"item", "customer"}


def test_the_union_renders(root):
    """Passing exactly the declared variables renders every file."""
    renderer = Renderer([root])
    compiled = renderer.load("child.j2")
    values = {"name": "Ada", "goal": "ship", "role": "Lead", "unused": 1}
    text = renderer.render(compiled, {name: values[name] for name in compiled.declared})
    assert text == "You are Ada.\nRole: LeadGoal: ship"  # trim_blocks eats the line break after a block tag


def test_nothing_runs_while_finding_variables():
    """Working out the variables evaluates nothing (Jinja's own meta module folds constants)."""
    renderer = Renderer(())
    compiled = renderer.compile("{{ 7 ** 2000000000 }}{{ 'a' * 10**9 }}{{ x }}", "t")
    assert compiled.declared == {"x"}
