"""Where the docs name what the program has, they name all of it, as it is: the README's
account of the demo config names every demo agent, route and built-in tool; a schema a doc
gives a demo agent is the demo's; docs/config.md's list of sections is the config's."""

from __future__ import annotations

import re

import yaml

from app.adapters.tools.builtin.tech_radar import SPECS
from app.config.files import DEMO_CONFIG_PATH
from app.config.models import AppConfig
from tests.support.doc_blocks import ROOT, SHELL, blocks, documents

DEMO = yaml.safe_load(DEMO_CONFIG_PATH.read_text())


def _paragraph(text: str, start: str) -> str:
    """The paragraph (or list item) that holds `start`."""
    at = text.index(start)
    begin = max(text.rfind("\n\n", 0, at), text.rfind("\n- ", 0, at))
    end = min(i for i in (text.find("\n\n", at), text.find("\n- ", at), len(text)) if i >= 0)
    return text[begin:end]


def test_the_readme_s_account_of_the_demo_config_names_all_of_it() -> None:
    account = _paragraph((ROOT / "README.md").read_text(), "shipped demo config")
    names = [*DEMO["agents"], *DEMO["models"], *SPECS]
    assert [n for n in names if f"`{n}`" not in account] == []


def test_a_schema_a_doc_gives_a_demo_agent_is_the_demo_s() -> None:
    differ, seen = [], 0
    for document in documents():
        for block in blocks(document):
            if block.lang != "yaml":
                continue
            agents = (yaml.safe_load(block.text) or {}).get("agents") or {}
            for name, agent in agents.items():
                if name in DEMO["agents"] and "output_schema" in (agent or {}):
                    seen += 1
                    if agent["output_schema"] != DEMO["agents"][name]["output_schema"]:
                        differ.append(f"{block.doc}:{block.line} {name}")
    assert differ == [] and seen > 0


def test_the_config_page_lists_every_section() -> None:
    text = (ROOT / "docs" / "config.md").read_text()
    listing = _paragraph(text, "A YAML file with up to")
    count = re.search(r"up to (\w+) sections", listing)
    words = {"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
    sections = set(AppConfig.model_fields)
    assert {s for s in sections if f"`{s}`" not in listing} == set()
    assert count is not None and words.get(count[1]) == len(sections)


def test_a_doc_showing_a_config_fragment_says_the_config_file_replaces_the_demo_s() -> None:
    """A fragment is read as something to add; the file `TOOLGATE_CONFIG` names is the whole
    config, so a reader who writes the fragment alone loses the demo's agents."""
    silent = [
        str(document.relative_to(ROOT))
        for document in documents()
        if any(b.kind == "config-fragment" for b in blocks(document))
        and not re.search(r"replaces\**\s+the\s+demo\s+config", document.read_text())
    ]
    assert silent == []


def test_a_doc_starting_a_server_where_make_run_listens_says_to_stop_it_first() -> None:
    """`make run` serves on 127.0.0.1:8000; a second server there fails to bind, or a
    reader's commands reach the first one."""
    silent = [
        f"{block.doc}:{block.line}"
        for document in documents()
        for block in blocks(document)
        if block.lang in SHELL
        and re.search(r"-m app serve\b(?![^\n]*--host)[^\n]*--port 8000\b", block.text)
        and not re.search(r"stop\s+a\s+`make\s+run`", document.read_text())
    ]
    assert silent == []
