"""The README and docs/ hold together without a server: every code block is run, loaded or
marked as not (tests/support/doc_blocks.py), every YAML config block loads through the
real loader, every sample output parses, every relative link leads to a file of the
repository, and docs/config.md lists every config key and variable the code has, with
the code's defaults. (The blocks that run are run by
tests/integration/test_docs_walkthroughs.py.)"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.adapters.tools.builtin.tech_radar import SPECS
from app.config.files import DEMO_CONFIG_PATH, load_config, parse_config
from tests.support import config_reference as ref
from tests.support.doc_blocks import ROOT, SHELL, blocks, documents, relative_links
from tests.support.doc_shapes import parse_sample

DOCS = documents()
IDS = [str(p.relative_to(ROOT)) for p in DOCS]
CONFIG_PAGE = ROOT / "docs" / "config.md"
#: Defaults the code computes, stated in words on the page.
COMPUTED = {"tools.<name>.requires_approval": "risk: high", "TOOLGATE_INSTANCE_ID": "hostname:pid"}


@pytest.mark.parametrize("document", DOCS, ids=IDS)
def test_every_block_is_run_loaded_or_marked(document: Path) -> None:
    found = blocks(document)  # raises on an unknown, misplaced or unexplained marker
    for block in found:
        if block.lang in SHELL and block.kind == "not-run":
            assert len(block.why) >= 8, f"{block.where}: say why it is not run"


def test_the_readme_walk_through_is_run() -> None:
    kinds = [b.kind for b in blocks(ROOT / "README.md")]
    assert kinds.count("run") >= 8 and kinds.count("output") >= 4


@pytest.mark.parametrize("document", DOCS, ids=IDS)
def test_sample_outputs_parse(document: Path) -> None:
    for block in blocks(document):
        if block.lang == "json":
            try:
                parse_sample(block.text)
            except ValueError as exc:
                raise AssertionError(f"{block.where}: not JSON (with …): {exc}") from None


def _demo() -> dict[str, Any]:
    return yaml.safe_load(DEMO_CONFIG_PATH.read_text())


def _merged(config: dict[str, Any], fragment: dict[str, Any]) -> dict[str, Any]:
    config = dict(config)
    for section, value in fragment.items():
        if isinstance(value, dict) and isinstance(config.get(section), dict):
            config[section] = {**config[section], **value}
        else:
            config[section] = value
    return config


@pytest.mark.parametrize("document", DOCS, ids=IDS)
def test_config_blocks_load_through_the_config_loader(document: Path, tmp_path: Path) -> None:
    """A fragment is added to the demo config with the document's fragments before it, as
    a reader adds them to a config as they read."""
    config = _demo()
    for block in blocks(document):
        if block.kind == "config":
            written = tmp_path / "config.yaml"
            written.write_text(block.text)
            load_config(written, builtin_tools=SPECS)
        elif block.kind == "config-fragment":
            config = _merged(config, yaml.safe_load(block.text))
            parse_config(config, builtin_tools=SPECS)
        elif block.kind == "not-config":
            yaml.safe_load(block.text)


@pytest.mark.parametrize("document", DOCS, ids=IDS)
def test_relative_links_lead_to_files_of_the_repository(document: Path) -> None:
    broken = []
    for line, target in relative_links(document):
        path = (document.parent / target.split("#", 1)[0]).resolve()
        if not path.is_relative_to(ROOT) or not path.exists():
            broken.append(f"{document.name}:{line} {target}")
    assert broken == []


def _default_matches(cell: str, code: Any) -> bool:
    if code in (ref.UNSET, ref.REQUIRED):
        return cell.startswith(code)
    shown = re.match(r"`([^`]*)`", cell)
    if shown is None:
        return False
    value = yaml.safe_load(shown[1])
    return value == code and (type(value) is bool) == (type(code) is bool)


def _checked_row(name: str, cells: list[str] | None, kind: Any, default: Any) -> list[str]:
    if cells is None:
        return [f"{name}: not on the page"]
    problems = []
    if not cells[1].startswith(ref.type_words(kind)):
        problems.append(f"{name}: type {cells[1]!r}, expected {ref.type_words(kind)}")
    if name in COMPUTED:
        if COMPUTED[name] not in cells[2]:
            problems.append(f"{name}: default {cells[2]!r} should say {COMPUTED[name]!r}")
    elif not _default_matches(cells[2], default):
        problems.append(f"{name}: default {cells[2]!r}, the code's is {default!r}")
    return problems


def test_config_page_lists_every_key_with_type_default_and_example() -> None:
    rows = ref.rows(CONFIG_PAGE)
    problems = []
    for path, (field, kind) in ref.config_keys().items():
        cells = rows.get(path)
        problems += _checked_row(path, cells, kind, ref.default_of(field))
        if cells is not None:
            example = yaml.safe_load(cells[3].strip("`").replace("\\|", "|"))
            leaf = path.rsplit(".", 1)[-1]
            if not (isinstance(example, dict) and list(example) == [leaf]):
                problems.append(f"{path}: example {cells[3]!r} is not `{leaf}: …`")
    assert problems == []


def test_config_page_lists_every_variable_with_type_and_default() -> None:
    rows = ref.rows(CONFIG_PAGE)
    problems = []
    for name, (field, kind) in ref.variables().items():
        problems += _checked_row(name, rows.get(name), kind, ref.default_of(field))
    missing = sorted(ref.other_variables() - set(rows))
    assert (problems, missing) == ([], [])


def test_config_page_names_nothing_the_code_lacks() -> None:
    known = set(ref.config_keys()) | set(ref.variables()) | ref.other_variables()
    listed = {n for n in ref.rows(CONFIG_PAGE) if re.match(r"^(TOOLGATE_|[a-z_]+\.)", n)}
    assert listed - known == set()
