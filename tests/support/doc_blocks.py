"""The fenced code blocks and relative links of the README and `docs/*.md`, and what each
block is for.

A block's purpose comes from its language and an optional marker on the line right above
its opening fence, an HTML comment that renders as nothing:

- `sh` / `bash` / `shell`: **run** by default, in one bash session per document (variables
  set by a block carry to the next). `<!-- doc: not-run: why -->` keeps one out, with a
  reason; `<!-- doc: run-any-status -->` runs it without failing on an HTTP error status
  (a block that shows an error on purpose).
- `yaml`: a **whole config file** by default, loaded by the real loader.
  `<!-- doc: config-fragment -->` is merged into the demo config first (sections replace
  the demo's entries of the same name); `<!-- doc: not-config: why -->` is some other YAML.
- `json`: by default the **output** of the run block before it (the last JSON value that
  block printed), compared in shape. `<!-- doc: example: why -->` is a body no command in
  the document prints (one a backend receives, say).
- Any other language is prose-like (`text`, `python`, `sql`, a tree) and is not run; it
  must not hold a `curl` command, which belongs in an `sh` block.

An unknown marker, a reason left out, or a marker on the wrong language is an error: a
block is never skipped without saying so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHELL = frozenset({"sh", "bash", "shell"})
#: marker kind -> (languages it applies to, whether it needs a reason)
MARKERS: dict[str, tuple[frozenset[str], bool]] = {
    "not-run": (SHELL, True),
    "run-any-status": (SHELL, False),
    "config-fragment": (frozenset({"yaml"}), False),
    "not-config": (frozenset({"yaml"}), True),
    "example": (frozenset({"json"}), True),
}
DEFAULT = {**dict.fromkeys(SHELL, "run"), "yaml": "config", "json": "output"}

_FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w-]*)\s*$")
_MARKER = re.compile(r"^\s*<!--\s*doc:\s*(?P<kind>[\w-]+)\s*(?::\s*(?P<why>.*?))?\s*-->\s*$")
_LINK = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)\)")


class DocFormatError(AssertionError):
    """A block whose marker is unknown, misplaced or without its reason."""


@dataclass(frozen=True)
class Block:
    doc: str  # path relative to the repository
    line: int  # 1-based line of the opening fence
    lang: str
    kind: str  # run, run-any-status, not-run, config, config-fragment, ..., other
    text: str
    why: str = ""

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def documents() -> list[Path]:
    """The README and every page under docs/, in a reader's order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(path: Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    doc = str(path.relative_to(ROOT))
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, lang = opening["indent"], opening["lang"].lower()
        end = i + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        body = [line.removeprefix(indent) for line in lines[i + 1 : end]]
        marker = _MARKER.match(lines[i - 1]) if i > 0 else None
        found.append(_block(doc, i + 1, lang, "\n".join(body) + "\n", marker))
        i = end + 1
    return found


def _block(doc: str, line: int, lang: str, text: str, marker: re.Match[str] | None) -> Block:
    where = f"{doc}:{line}"
    if marker is None:
        kind = DEFAULT.get(lang, "other")
        if kind == "other" and re.search(r"(^|\s)curl\s", text):
            raise DocFormatError(f"{where}: a curl command in a ```{lang} block; use ```sh")
        return Block(doc, line, lang, kind, text)
    kind, why = marker["kind"], (marker["why"] or "").strip()
    if kind not in MARKERS:
        raise DocFormatError(f"{where}: unknown marker 'doc: {kind}' (known: {sorted(MARKERS)})")
    languages, needs_reason = MARKERS[kind]
    if lang not in languages:
        raise DocFormatError(f"{where}: 'doc: {kind}' does not apply to a ```{lang} block")
    if needs_reason and not why:
        raise DocFormatError(f"{where}: 'doc: {kind}' needs a reason: <!-- doc: {kind}: why -->")
    return Block(doc, line, lang, kind, text, why)


def relative_links(path: Path) -> list[tuple[int, str]]:
    """(line, target) of each Markdown link that is not to another site or an anchor here.
    Links inside code blocks are not links."""
    found: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if _FENCE.match(line) or line.strip() == "```":
            fenced = not fenced
            continue
        if fenced:
            continue
        for match in _LINK.finditer(line):
            target = match["target"]
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target) and not target.startswith("#"):
                found.append((number, target))
    return found
