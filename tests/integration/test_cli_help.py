"""`python -m app --help` and every command's `--help`, run as a user runs them: each
command says what it does, and each option what it means and its default (or that it is
required)."""

from __future__ import annotations

import argparse
import re
from concurrent.futures import ThreadPoolExecutor

from app.cli import parser
from tests.support.processes import run_cli


def _commands(at: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    for action in at._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found += _commands(child, (*path, name))
    return found


COMMANDS = _commands(parser())


def _options(help_text: str) -> dict[str, str]:
    """Each option of the help's `options:` section with its help, unwrapped."""
    section = help_text.split("\noptions:\n", 1)[1]
    entries = re.split(r"\n(?=  -)", "\n" + section)
    return {
        match[1]: " ".join(entry.split()[1:])
        for entry in entries
        if (match := re.match(r"\s*(-[-\w]+)", entry))
    }


def test_every_command_and_option_says_what_it_is_and_its_default() -> None:
    assert len(COMMANDS) >= 12
    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = list(pool.map(lambda path: run_cli(*path, "--help"), COMMANDS))
    problems = []
    for path, answer in zip(COMMANDS, answers, strict=True):
        name = " ".join(("python -m app", *path))
        if answer.returncode != 0 or not answer.stdout.startswith(f"usage: {name}"):
            problems.append(f"{name} --help: exit {answer.returncode} {answer.stderr[-300:]}")
            continue
        description = answer.stdout.split("\n\n", 2)[1]
        if len(description.split()) < 3:
            problems.append(f"{name}: says nothing of what it does")
        for option, text in _options(answer.stdout).items():
            if option != "-h" and not re.search(r"\b(default|required)\b", text):
                problems.append(f"{name} {option}: no default stated: {text!r}")
    assert problems == []


def test_each_command_has_a_line_in_its_parents_help() -> None:
    listed = run_cli("--help").stdout
    for path in COMMANDS:
        if len(path) == 1:
            assert re.search(rf"^    {re.escape(path[0])}\b", listed, re.MULTILINE), path
