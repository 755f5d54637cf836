"""Groups each layer of `app` by concept, with the same names in every layer (issue 32,
item 6): `git mv` of every module in MAP, packages made with a docstring (PACKAGE_DOCS),
every reference rewritten, docs/architecture.md's tables regrouped, the import-linter
contracts written, then `ruff check --fix` and `ruff format`.

Run from the repository's root, on a clean work tree:

    python scripts/restructure.py --dry   # the moves, and modules MAP does not place
    python scripts/restructure.py         # do it; then review, test and commit

What it rewrites, in the tracked files of app/, tests/, bench/, migrations/, evals/,
docs/ and the top level (Makefile, Dockerfile, pyproject.toml, README.md, alembic.ini):

- `from app.x.y import a, b` (the module moved) and `from app.x import y, z` (modules of
  one package that now live in different packages: one statement per new package; a
  module imported under its old name keeps that name when the file uses the name for
  more than attribute access, or when its new name is taken in the file);
- `import app.x.y [as z]`, dotted `app.x.y...` anywhere (patch targets, strings, docs),
  and `domain.x` / `db.x` / `engine.x` / `api.x` / `adapters.x` without the `app.`;
- slash paths `app/x/y.py`, `app/x/pkg/` and `domain/x.py` (etc.) in any of those files;
- FIXUPS: the few lines that depend on where a file sits (e.g. `parents[1]`).

It refuses to run when a target exists, when nothing of MAP is left to move, or when
the work tree has changes. MAP may name modules that are gone (they are skipped); a
module of a layer that MAP neither moves nor keeps (STAY) is reported.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import subprocess
import sys
import textwrap
import tokenize
from collections.abc import Container, Iterator
from pathlib import Path

# --- what goes where ---------------------------------------------------------------------

LAYOUT: dict[str, dict[str, list[str]]] = {
    # layer → package → modules ("new" or "new<old": the old module's name differs)
    "app.domain": {
        "lifecycle": [
            "status",
            "moves",
            "settle",
            "steps",
            "run_changes",
            "run_patch",
            "records",
            "run_columns",
            "events",
            "evolve",
        ],
        "approvals": ["previews<approvals", "decisions"],
        "tools": [
            "specs<tools",
            "proposals",
            "retry",
            "gates",
            "pinning",
            "mcp_declarations",
            "schema_validator",
            "fast_schema",
        ],
        "model": [
            "replies<model",
            "context",
            "window<context_budget",
            "paging",
            "carry_over",
            "typed_output",
            "routing",
            "citations",
        ],
        "guardrails": ["policy<guardrails", "sensitive"],
        "limits": ["budget", "quotas", "lineage", "retention"],
        "access": ["idempotency"],
        "webhooks": ["destinations<webhooks", "signing<webhook_signing"],
        "forensics": [
            "diagnosis",
            "taxonomy<diagnosis_taxonomy",
            "replay",
            "replay_script",
        ],
    },
    "app.db": {
        "lifecycle": [
            "runs<runs_repo",
            "turns<turns_repo",
            "events<events_repo",
            "leases<leases_repo",
            "step_writes",
            "births",
            "json_rows",
        ],
        "approvals": ["previews<previews_repo", "decisions<decisions_repo"],
        "tools": [
            "mcp_declarations<mcp_declarations_repo",
            "mcp_tables",
            "switches<tool_switch_repo",
            "config_versions<config_versions_repo",
        ],
        "limits": [
            "quotas<quotas_repo",
            "quota_tables",
            "lineage<lineage_repo",
            "lineage_tables",
            "retention<retention_repo",
        ],
        "access": ["keys<keys_repo", "idempotency<idempotency_repo"],
        "webhooks": [
            "endpoints<webhooks_repo",
            "claims<webhook_claims_repo",
            "tables<webhook_tables",
        ],
        "forensics": ["diagnosis<diagnosis_repo", "replay<replay_repo"],
        "radar": [
            "technologies<technology_repo",
            "history<technology_history_repo",
            "history_tables",
        ],
    },
    "app.engine": {
        "lifecycle": ["runs", "births", "entering", "children", "continuation", "delegation"],
        "approvals": ["decisions<approvals"],
        "tools": ["mcp_declarations", "offered", "pinned_config", "gates<tool_gates"],
        "limits": ["quotas", "retention"],
        "access": ["idempotency", "keys"],
        "webhooks": ["endpoints<webhooks", "sender<process.webhook_sender"],
        "forensics": ["diagnosis", "replay"],
    },
    "app.api": {
        "schemas": [
            "runs<schemas",
            "catalog<catalog_schemas",
            "keys<key_schemas",
            "webhooks<webhook_schemas",
            "script_items",
        ],
    },
    "app.adapters": {
        "model": [
            "anthropic<anthropic_model",
            "openai<openai_model",
            "lazy<lazy_model",
            "sdk<sdk_model",
            "scripted<scripted_model",
            "provider_errors",
        ],
        "tools": [
            "http<http_tools",
            "mcp_answers",
            "mcp_listing",
            "mcp_session",
            "mcp_tools",
            "builtin<builtin_tools",
        ],
        "webhooks": ["dns<webhook_dns", "http<webhook_http"],
    },
}

#: Moves outside the concept packages. The driver leaves `engine/process`: it is the one
#: module there that imports `engine/steps`, so `process` (what a process holds) sits
#: below `steps` and `driver` above both — the two packages no longer import each other.
EXTRA_MOVES = {"app.engine.process.driver": "app.engine.driver"}

#: Modules (and packages) that stay where they are; any other module of a layer is reported.
STAY = {
    "app.domain": {"errors", "ids", "ports", "patterns", "memo"},
    "app.db": {
        "session",
        "urls",
        "embedded",
        "migrate",
        "errors",
        "clock",
        "column_types",
        "guards",
        "tables",
        "hot_pool",
        "raw",
    },
    "app.engine": {"steps", "process", "events", "off_loop", "runner", "driver"},
    "app.api": {
        "routes",
        "concurrency",
        "deps",
        "errors",
        "event_stream",
        "examples",
        "fast_json",
        "hygiene",
        "idempotency",
        "middleware",
        "problems",
        "responses",
        "views",
    },
    "app.adapters": {"clock"},
}


def _map() -> dict[str, str]:
    moves: dict[str, str] = {}
    for layer, packages in LAYOUT.items():
        for package, modules in packages.items():
            for entry in modules:
                new, _, old = entry.partition("<")
                moves[f"{layer}.{old or new}"] = f"{layer}.{package}.{new}"
    moves.update(EXTRA_MOVES)
    return moves


#: old dotted module (or package) → new dotted module (or package)
MAP = _map()

PACKAGE_DOCS = {
    "app.domain.lifecycle": "A run's state machine: statuses and their transition tables, "
    "every move, the settle rule, the next step decided from the records, a run's changes, "
    "the records and events.",
    "app.domain.approvals": "Previews of calls that need approval, and decisions on them.",
    "app.domain.tools": "Tools as the model sees them: specs, proposed calls checked, retries, "
    "the gates, pinned declarations (MCP included) and JSON Schema validation.",
    "app.domain.model": "What goes to a model and what comes back: replies, the context and its "
    "window, paging of large results, carry-over, typed output, routing, citations.",
    "app.domain.guardrails": "Guardrails: an agent's policy at three points, and what they look "
    "for (secrets, personal data, injection markers).",
    "app.domain.limits": "What a run may spend and keep: budgets, a tenant's quotas, child runs' "
    "shares (lineage), retention.",
    "app.domain.access": "Who may do what once: Idempotency-Keys.",
    "app.domain.webhooks": "Webhook destinations (the allowlist, the retry schedule) and their "
    "signatures.",
    "app.domain.forensics": "A finished run explained and replayed: diagnosis, its taxonomy, "
    "replay's comparison and script.",
    "app.db.lifecycle": "A run's rows: runs, turns and calls, events, leases, a step's one "
    "statement and the runs born with it.",
    "app.db.approvals": "Previews' rows and the conditional writes of a decision.",
    "app.db.tools": "Tools' rows: pinned MCP declarations, kill switches, config versions.",
    "app.db.limits": "Quota counters, child runs' reservations, retention's purges.",
    "app.db.access": "API keys and Idempotency-Key claims.",
    "app.db.webhooks": "Webhook endpoints, their deliveries (the outbox) and the senders' claims.",
    "app.db.forensics": "The reads of diagnosis and replay.",
    "app.db.radar": "The demo technology radar: its rows and their history.",
    "app.engine.lifecycle": "Use cases that make runs: create (child runs, continuations and "
    "delegated runs too), birth in the commit batch, checks on text entering a run.",
    "app.engine.approvals": "The approver's use cases: read, approve, reject, commit.",
    "app.engine.tools": "Tools as a process serves them: MCP declarations settled, tool lists "
    "read, pinned config versions, the gates (kill switch, rate limits).",
    "app.engine.limits": "A tenant's quotas at a run's creation, and retention's purge.",
    "app.engine.access": "API keys and Idempotency-Keys.",
    "app.engine.webhooks": "An admin's webhook endpoints, and the sender that delivers events.",
    "app.engine.forensics": "A run's diagnosis, and replay of a recorded run.",
    "app.engine.process": "What a process holds: its runtime, leases, group commit, deferred "
    "writes and its view of the database's availability.",
    "app.api.schemas": "Wire models: runs, the catalog, keys, webhooks, script items.",
    "app.adapters.model": "Model providers: the scripted model, OpenAI-compatible and Anthropic "
    "SDKs, and their failures as ModelErrors.",
    "app.adapters.tools": "Tool backends: operator HTTP tools, MCP servers, built-in tools.",
    "app.adapters.webhooks": "Webhook transport: resolving and posting to a checked address.",
}

#: (file as it is after the moves, text, replacement): lines that depend on where a file sits.
FIXUPS = [
    (
        "tests/unit/test_moves.py",
        "Path(moves.__file__).parents[1]",
        "Path(moves.__file__).parents[2]",
    ),
    (
        "tests/unit/test_domain_purity.py",
        '{"status", "budget", "steps", "proposals", "tools"}',
        '{"status", "budget", "steps", "proposals", "specs"}',
    ),
]

REWRITTEN_DIRS = ("app", "tests", "bench", "migrations", "evals", "docs", ".ci")
REWRITTEN_TOP = {"Makefile", "Dockerfile", "pyproject.toml", "README.md", "alembic.ini"}
TEXT_SUFFIXES = {".py", ".md", ".toml", ".ini", ".cfg", ".yml", ".yaml", ".txt", ".sh"}
LAYERS = ("domain", "db", "engine", "api", "adapters")
DOC = Path("docs/architecture.md")
CONTRACTS = Path("scripts/importlinter.toml")
THIS = Path("scripts/restructure.py")
LINE = 100

# --- names --------------------------------------------------------------------------------


def path_of(dotted: str) -> Path:
    """A module's file, or a package's directory."""
    base = Path(*dotted.split("."))
    return base if base.is_dir() else base.with_suffix(".py")


def exists(dotted: str) -> bool:
    base = Path(*dotted.split("."))
    return base.is_dir() or base.with_suffix(".py").is_file()


def renamed(dotted: str) -> str | None:
    """`dotted` with its longest MAP prefix (whole components) replaced; None if none."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        head = ".".join(parts[:cut])
        if head in MAP:
            return ".".join([MAP[head], *parts[cut:]])
    return None


DOTTED = re.compile(r"(?<![\w.])(app(?:\.\w+)+)")
BARE = re.compile(r"(?<![\w./])((?:" + "|".join(LAYERS) + r")(?:\.\w+)+)")
SLASHED = re.compile(r"(?<![\w/.])((?:app/)?(?:" + "|".join(LAYERS) + r")(?:/\w+)+)(\.py|/)?")


def rewrite_text(text: str) -> str:
    """Dotted names and slash paths, each rewritten once (one pass, so a new name that
    starts with an old one is never rewritten again)."""

    def dotted(m: re.Match[str]) -> str:
        return renamed(m.group(1)) or m.group(1)

    def bare(m: re.Match[str]) -> str:
        new = renamed("app." + m.group(1))
        return new[len("app.") :] if new else m.group(1)

    def slashed(m: re.Match[str]) -> str:
        path, tail = m.group(1), m.group(2) or ""
        prefixed = path.startswith("app/")
        dotted_name = path.replace("/", ".") if prefixed else "app." + path.replace("/", ".")
        new = renamed(dotted_name)
        if new is None:
            return m.group(0)
        out = new.replace(".", "/")
        return (out if prefixed else out[len("app/") :]) + tail

    text = SLASHED.sub(slashed, text)
    text = DOTTED.sub(dotted, text)
    return BARE.sub(bare, text)


# --- Python imports -----------------------------------------------------------------------


def _name_tokens(source: str) -> list[tokenize.TokenInfo]:
    return [t for t in tokenize.generate_tokens(io.StringIO(source).readline)]


def rewrite_python(source: str) -> str:
    """Import statements first (each replaced whole), then the text of everything else."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return rewrite_text(source)
    lines = source.splitlines(keepends=True)
    tokens = _name_tokens(source)
    name_set = {t.string for t in tokens if t.type == tokenize.NAME}
    replacements: list[tuple[int, int, str]] = []  # (first line, last line, text), 1-based
    renames: dict[str, str] = {}
    taken = set(name_set)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            new = _import_from(node, lines, renames, taken, tokens)
        elif isinstance(node, ast.Import):
            new = _import(node, lines)
        else:
            continue
        if new is not None:
            replacements.append((node.lineno, node.end_lineno or node.lineno, new))
    # Everything outside the import statements is rewritten as text.
    out: list[str] = []
    line = 1
    for first, last, new in sorted(replacements):
        out.append(rewrite_text("".join(lines[line - 1 : first - 1])))
        out.append(new)
        line = last + 1
    out.append(rewrite_text("".join(lines[line - 1 :])))
    result = "".join(out)
    return _apply_renames(result, renames) if renames else result


def _indent_and_comment(node: ast.stmt, lines: list[str]) -> tuple[str, str]:
    first = lines[node.lineno - 1]
    last = lines[(node.end_lineno or node.lineno) - 1]
    indent = first[: len(first) - len(first.lstrip())]
    code_end = last.rstrip("\n")
    comment = ""
    if "#" in code_end.split(")")[-1]:
        comment = "  #" + code_end.split(")")[-1].split("#", 1)[1]
    return indent, comment


def _alias(name: str, asname: str | None) -> str:
    return f"{name} as {asname}" if asname and asname != name else name


def _import_from(
    node: ast.ImportFrom,
    lines: list[str],
    renames: dict[str, str],
    taken: set[str],
    tokens: list[tokenize.TokenInfo],
) -> str | None:
    module = node.module
    assert module is not None
    if not module.startswith("app"):
        return None
    indent, comment = _indent_and_comment(node, lines)
    moved = renamed(module)
    if moved is not None:  # the module itself moved: its names come along
        names = ", ".join(_alias(a.name, a.asname) for a in node.names)
        return f"{indent}from {moved} import {names}{comment}\n"
    groups: dict[str, list[str]] = {}
    changed = False
    for alias in node.names:
        target = MAP.get(f"{module}.{alias.name}")
        if target is None:
            groups.setdefault(module, []).append(_alias(alias.name, alias.asname))
            continue
        changed = True
        parent, leaf = target.rsplit(".", 1)
        local = alias.asname or alias.name
        if alias.asname is None and alias.name in renames:
            local = renames[alias.name]  # imported again (another function): as before
        elif (
            alias.asname is None
            and leaf != alias.name
            and leaf not in taken
            and _only_attributes(tokens, alias.name)
        ):
            renames[alias.name] = leaf
            taken.add(leaf)
            local = leaf
        groups.setdefault(parent, []).append(_alias(leaf, local))
    if not changed:
        return None
    return "".join(
        f"{indent}from {parent} import {', '.join(names)}{comment if i == 0 else ''}\n"
        for i, (parent, names) in enumerate(groups.items())
    )


def _names_outside_imports(
    tokens: list[tokenize.TokenInfo], names: Container[str]
) -> Iterator[int]:
    """Indexes of the tokens that are one of `names`, outside import statements and not
    after a dot (someone else's attribute of that name)."""
    in_import = False
    for i, tok in enumerate(tokens):
        if (
            tok.type == tokenize.NAME
            and tok.string in ("import", "from")
            and _starts_line(tokens, i)
        ):
            in_import = True
        elif tok.type == tokenize.NEWLINE:
            in_import = False
        if in_import or tok.type != tokenize.NAME or tok.string not in names:
            continue
        if not (i and tokens[i - 1].string == "."):
            yield i


def _only_attributes(tokens: list[tokenize.TokenInfo], name: str) -> bool:
    """Whether every use of `name` outside import statements is `name.attribute`: only
    then is the name safe to change throughout the file."""
    return all(
        i + 1 < len(tokens) and tokens[i + 1].string == "."
        for i in _names_outside_imports(tokens, {name})
    )


def _starts_line(tokens: list[tokenize.TokenInfo], i: int) -> bool:
    j = i - 1
    while j >= 0 and tokens[j].type in (tokenize.INDENT, tokenize.DEDENT, tokenize.NL):
        j -= 1
    return j < 0 or tokens[j].type == tokenize.NEWLINE or tokens[j].string == ":"


def _apply_renames(source: str, renames: dict[str, str]) -> str:
    """`old.attr` → `new.attr` for each module whose local name changed (names only: not
    in strings or comments, not after a dot, not inside import statements)."""
    tokens = _name_tokens(source)
    lines = source.splitlines(keepends=True)
    edits = []
    for i in _names_outside_imports(tokens, renames):
        (row, col), (_, end) = tokens[i].start, tokens[i].end
        edits.append((row, col, end, renames[tokens[i].string]))
    for row, col, end, new in sorted(edits, reverse=True):
        text = lines[row - 1]
        lines[row - 1] = text[:col] + new + text[end:]
    return "".join(lines)


def _import(node: ast.Import, lines: list[str]) -> str | None:
    if not any(renamed(a.name) for a in node.names):
        return None
    indent, comment = _indent_and_comment(node, lines)
    names = ", ".join(_alias(renamed(a.name) or a.name, a.asname) for a in node.names)
    return f"{indent}import {names}{comment}\n"


# --- the moves ----------------------------------------------------------------------------


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def planned() -> list[tuple[str, str]]:
    return [(old, new) for old, new in MAP.items() if _unmoved(old)]


def _unmoved(old: str) -> bool:
    """Whether `old` is still there: a module named as a package the moves make
    (`domain/tools.py`, not the `domain/tools/` it became)."""
    if any(new.startswith(old + ".") for new in MAP.values()):
        return Path(*old.split(".")).with_suffix(".py").is_file()
    return exists(old)


def unplaced() -> list[str]:
    """Modules of a layer that MAP neither moves nor keeps."""
    found = []
    for layer, kept in STAY.items():
        for path in sorted(Path(*layer.split(".")).iterdir()):
            name = path.stem if path.suffix == ".py" else path.name
            if path.name.startswith(("_", ".")) or not (path.suffix == ".py" or path.is_dir()):
                continue
            if path.is_dir() and not (path / "__init__.py").exists():
                continue
            dotted = f"{layer}.{name}"
            placed = dotted in MAP or any(v.startswith(dotted + ".") for v in MAP.values())
            if name not in kept and not placed and dotted not in MAP.values():
                found.append(dotted)
    return found


def refusals(moves: list[tuple[str, str]]) -> list[str]:
    why = []
    if not moves:
        why.append("nothing of MAP is left to move: already restructured?")
    for _old, new in moves:
        if exists(new) and not any(new == o for o, _ in moves):
            why.append(f"{new} exists already")
    if git("status", "--porcelain", "--untracked-files=no").strip():
        why.append("the work tree has changes: commit or stash them first")
    return why


def move(moves: list[tuple[str, str]]) -> None:
    """Each source first to a temporary name, then to its place: a new package may be
    named as an old module (`domain/tools.py` → `domain/tools/specs.py`)."""
    staged = []
    for n, (old, new) in enumerate(moves):
        src = path_of(old)
        tmp = src.with_name(f"_restructure_{n}{src.suffix}")
        git("mv", str(src), str(tmp))
        staged.append((tmp, new, src.suffix))
    for tmp, new, suffix in staged:
        dst = Path(*new.split("."))
        dst = dst.with_suffix(suffix) if suffix else dst
        _make_packages(dst.parent)
        git("mv", str(tmp), str(dst))


def _make_packages(directory: Path) -> None:
    for d in [*reversed(directory.parents), directory]:
        if d == Path(".") or d.parts[0] != "app":
            continue
        init = d / "__init__.py"
        if not init.exists():
            d.mkdir(exist_ok=True)
            dotted = ".".join(d.parts)
            doc = PACKAGE_DOCS.get(dotted, f"The {d.name} of `{'.'.join(d.parts[1:-1])}`.")
            init.write_text(docstring(doc), encoding="utf-8")
            git("add", str(init))


def docstring(doc: str) -> str:
    return '"""' + "\n".join(textwrap.wrap(doc, LINE - 4)) + '"""\n'


def wrap_long_lines(paths: list[Path]) -> None:
    """Comment and docstring lines that a longer name pushed past the line length, cut at
    their last space before it (code is left to `ruff format`)."""
    for path in paths:
        if path.suffix != ".py" or not path.exists():
            continue
        source = path.read_text(encoding="utf-8")
        prose = _prose_lines(source)
        lines = source.split("\n")
        out = []
        carried = carried_prefix = ""
        for number, line in enumerate(lines, 1):
            lead = re.match(r"(\s*)(#:? )?", line)
            prefix = lead.group(1) + (lead.group(2) or "") if lead else ""
            if carried and number in prose and line.strip() not in ("", '"""', "#", "#:"):
                line = prefix + carried + " " + line[len(prefix) :]
            elif carried:
                out.append(carried_prefix + carried)
            carried = ""
            if len(line) > LINE and number in prose:
                cut = line.rfind(" ", 0, LINE + 1)
                if cut > len(prefix):
                    line, carried, carried_prefix = line[:cut], line[cut + 1 :], prefix
            out.append(line)
        if carried:
            out.append(carried_prefix + carried)
        if out != lines:
            path.write_text("\n".join(out), encoding="utf-8")


def _prose_lines(source: str) -> set[int]:
    """Line numbers of comments and of strings standing alone (docstrings)."""
    found: set[int] = set()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return found
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.COMMENT and tok.line.strip().startswith("#"):
            found.add(tok.start[0])
        elif tok.type == tokenize.STRING and tok.string.endswith('"""'):
            before = tokens[i - 1].type if i else tokenize.NEWLINE
            if before in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.NL):
                found.update(range(tok.start[0], tok.end[0] + 1))
    return found


def rewrite_docstrings() -> None:
    """Existing packages whose role changes say so (PACKAGE_DOCS)."""
    for dotted, doc in PACKAGE_DOCS.items():
        init = Path(*dotted.split(".")) / "__init__.py"
        if init.exists():
            init.write_text(docstring(doc), encoding="utf-8")


def files() -> list[Path]:
    found = []
    for name in git("ls-files").splitlines():
        path = Path(name)
        if path == THIS or not path.is_file():
            continue
        in_dirs = path.parts[0] in REWRITTEN_DIRS and (
            path.suffix in TEXT_SUFFIXES or path.parts[0] == ".ci"
        )
        if in_dirs or (len(path.parts) == 1 and path.name in REWRITTEN_TOP):
            found.append(path)
    return found


def rewrite_files() -> list[Path]:
    changed = []
    for path in files():
        text = path.read_text(encoding="utf-8")
        if path == DOC:
            new = regroup_doc(text)
        elif path.suffix == ".py":
            new = rewrite_python(text)
        else:
            new = rewrite_text(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def fixups() -> None:
    for name, old, new in FIXUPS:
        path = Path(name)
        if path.exists() and old in (text := path.read_text(encoding="utf-8")):
            path.write_text(text.replace(old, new), encoding="utf-8")
        elif path.exists():
            print(f"fixup not applied (text not found): {name}: {old}", file=sys.stderr)


# --- docs/architecture.md -----------------------------------------------------------------

HEADING = re.compile(r"^### `([\w/]+)/`")
CELL_NAME = re.compile(r"`([\w/]+)\.py`")


def regroup_doc(text: str) -> str:
    """The module tables regrouped: one `###` heading per package, each existing row (its
    text rewritten) under its module's new package, the new packages' headings from
    PACKAGE_DOCS right after their layer's. Prose outside the tables is rewritten as text."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if HEADING.match(line))
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    # old sections: heading path → (heading line, prose lines, rows)
    sections: list[tuple[str, list[str], list[str]]] = []
    for line in lines[start:end]:
        found = HEADING.match(line)
        if found:
            sections.append((found.group(1), [line], []))
        elif line.startswith("| `"):
            sections[-1][2].append(line)
        elif not line.startswith(("| module", "|---")):
            sections[-1][1].append(line)
    order: list[str] = []
    heads: dict[str, list[str]] = {}
    rows: dict[str, list[str]] = {}
    for key, head, _ in sections:
        package = _package_of_heading(key)
        new_package = renamed(package) or package
        order.append(new_package)
        new_key = _heading_key(new_package)
        title = head[0].replace(f"`{key}/`", f"`{new_key}/`", 1)
        if new_package in PACKAGE_DOCS:  # a package whose role changed says its new one
            title = f"### `{new_key}/` — {_lower(_title(new_package))}"
        head = [title, *head[1:]]
        heads[new_package] = [rewrite_text(h) if i else h for i, h in enumerate(head)]
    for key, _, section_rows in sections:
        package = _package_of_heading(key)
        for row in section_rows:
            for target, row_text in _split_row(package, row):
                rows.setdefault(target, []).append(row_text)
    placed: dict[str, int] = {}
    for package in sorted((p for p in rows if p not in heads), key=_layout_index):
        heads[package] = [f"### `{_heading_key(package)}/` — {_lower(_title(package))}", ""]
        layer = package.rsplit(".", 1)[0]
        at = order.index(layer) + 1 + placed.get(layer, 0)
        placed[layer] = placed.get(layer, 0) + 1
        order.insert(at, package)
    out: list[str] = []
    for package in dict.fromkeys(order):
        head = heads[package]
        while head and head[-1] == "":
            head = head[:-1]
        out += [*head, "", "| module | role |", "|---|---|", *rows.get(package, []), ""]
    before = [rewrite_text(line) for line in lines[:start]]
    after = [rewrite_text(line) for line in lines[end:]]
    return "\n".join([*before, *out, *after])


def _title(package: str) -> str:
    return PACKAGE_DOCS.get(package, package).split(":")[0].rstrip(".")


def _layout_index(package: str) -> int:
    names = [f"{layer}.{p}" for layer, packages in LAYOUT.items() for p in packages]
    return names.index(package) if package in names else len(names)


def _lower(text: str) -> str:
    """The first letter small, unless the word is an acronym (`API keys`)."""
    return text if text[1:2].isupper() else text[:1].lower() + text[1:]


def _package_of_heading(key: str) -> str:
    return "app" if key == "app" else "app." + key.replace("/", ".")


def _heading_key(package: str) -> str:
    return "app" if package == "app" else package[len("app.") :].replace(".", "/")


def _split_row(package: str, row: str) -> list[tuple[str, str]]:
    """The row under each new package of the modules its first cell names (the text
    after the first cell rewritten)."""
    cells = row.split("|")
    first, rest = cells[1], "|".join(cells[2:])
    rest = rewrite_text(rest)
    by_target: dict[str, list[str]] = {}
    for name in CELL_NAME.findall(first):
        old = f"{package}.{name.replace('/', '.')}"
        new = renamed(old) or old
        parent, leaf = new.rsplit(".", 1)
        by_target.setdefault(parent, []).append(f"`{leaf}.py`")
    return [(target, f"| {', '.join(names)} |{rest}") for target, names in by_target.items()]


# --- import-linter ------------------------------------------------------------------------


def write_contracts() -> None:
    """The contracts (scripts/importlinter.toml) appended to pyproject.toml, and
    `lint-imports` to `make test` and `make lint`."""
    pyproject = Path("pyproject.toml")
    text = pyproject.read_text(encoding="utf-8")
    if "[tool.importlinter]" not in text:
        pyproject.write_text(
            text.rstrip("\n") + "\n\n" + CONTRACTS.read_text(encoding="utf-8"), encoding="utf-8"
        )
    makefile = Path("Makefile")
    text = makefile.read_text(encoding="utf-8")
    lint = "\t$(BIN)/ruff check app tests migrations bench\n"
    if "lint-imports" not in text:
        text = text.replace(lint, lint + "\t$(BIN)/lint-imports\n")
        makefile.write_text(text, encoding="utf-8")


# --- main ---------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry", action="store_true", help="list the moves and do nothing")
    args = parser.parse_args()
    if not Path("app").is_dir() or not Path(".git").exists():
        print("run from the repository's root", file=sys.stderr)
        return 2
    moves = planned()
    gone = sorted(set(MAP) - {old for old, _ in moves})
    for old, new in moves:
        print(f"{path_of(old)} -> {new.replace('.', '/')}{'' if path_of(old).is_dir() else '.py'}")
    for old in gone:
        print(f"(gone, skipped) {old}")
    for dotted in unplaced():
        print(f"(not in MAP, stays) {dotted}", file=sys.stderr)
    if args.dry:
        return 0
    why = refusals(moves)
    if why:
        print("refused:\n  " + "\n  ".join(why), file=sys.stderr)
        return 1
    move(moves)
    rewrite_docstrings()
    changed = rewrite_files()
    fixups()
    write_contracts()
    ruff = [sys.executable, "-m", "ruff"]
    targets = ["app", "tests", "migrations", "bench"]
    # The import order first; lines still too long are cut below, then checked again.
    subprocess.run(
        [*ruff, "check", "--fix", "--exit-zero", "--quiet", *targets],
        check=False,
        stdout=subprocess.DEVNULL,
    )
    subprocess.run([*ruff, "format", "--quiet", *targets], check=False)
    wrap_long_lines(changed + [Path(f) for f in git("diff", "--name-only", "HEAD").split()])
    subprocess.run([*ruff, "check", "--quiet", *targets], check=False)
    print(
        f"{len(moves)} moved, {len(changed)} files rewritten. Now: make lint, the tests, one "
        "commit; then its hash in .git-blame-ignore-revs (git rev-parse HEAD >> "
        ".git-blame-ignore-revs) in a commit of its own."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
