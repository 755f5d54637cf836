"""The command line's shape: every command and option of `python -m app`, each with a help
text that states its default (or that it is required). `app.cli` holds what they do."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

Command = Callable[[Any, argparse.Namespace], int]

DESCRIPTION = """Toolgate: an HTTP service that runs agents whose model only proposes.
Commands that touch the database use TOOLGATE_DATABASE_URL, or, when it is unset, an
embedded Postgres under TOOLGATE_DATA_DIR (default: .data). Every TOOLGATE_* variable and
config key is described in docs/config.md."""


def build(commands: Mapping[str, Command]) -> argparse.ArgumentParser:
    """The parser; `commands` maps each command's name ("db upgrade", ...) to its function,
    set as `func` on the parsed arguments."""
    root = argparse.ArgumentParser(prog="python -m app", description=DESCRIPTION)
    sub = root.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help: str, group: Any = sub) -> argparse.ArgumentParser:
        full = name if group is sub else f"{group.dest.removesuffix('_command')} {name}"
        made = group.add_parser(name, help=help, description=help)
        made.set_defaults(func=commands[full])
        return made

    _serving(command("serve", "serve the HTTP API; each process also runs the driver"))
    _serving(
        command(
            "quickstart",
            "what `make run` does: migrate, seed the demo tenant, create the demo key once "
            "(kept in TOOLGATE_DATA_DIR/demo-key.json) and print it, then serve",
        ),
        driver=False,
    )
    command("worker", "the driver alone: advance runnable runs and recover expired leases")
    db = _group(sub, "db", "the database's schema and retention")
    command("upgrade", "migrate the database to the newest schema", db)
    purge = command("purge", "apply the config's retention now; print what it removed (JSON)", db)
    purge.add_argument(
        "--dry-run",
        action="store_true",
        help="count what would be removed and remove nothing (default: off, remove)",
    )
    _keys(
        command(
            "create",
            "create an API key; it is printed once",
            _group(sub, "keys", "API keys: the first admin key (admins make more over HTTP)"),
        )
    )
    seed = command(
        "seed",
        "load the demo radar into a tenant (running it again adds nothing)",
        _group(sub, "demo", "the demo tenant's data"),
    )
    seed.add_argument("--tenant", required=True, help="the tenant to load it into (required)")
    command("openapi", "print the OpenAPI document (needs no database)")
    command("console-schema", "print the console's schema.js, made from the OpenAPI document")
    _eval(command("eval", "measure a model route's tool choice on a dataset (calls the model)"))
    _replay(
        command(
            "replay",
            "re-execute a finished run's recorded model turns against the current code, config "
            "and tools in a scratch tenant; print `no difference` (exit 0) or the first "
            "differing transition (exit 1)",
        )
    )
    _audit(sub, command)
    return root


def _audit(sub: Any, command: Callable[..., argparse.ArgumentParser]) -> None:
    verify = command(
        "verify",
        "recompute every tenant's audit chain (or one's); exit 1 naming the first entry "
        "that does not match, 0 when every chain holds",
        _group(sub, "audit", "the audit chain of decisions and operator actions"),
    )
    verify.add_argument("--tenant", help="verify this tenant's chain only (default: every one)")


def _group(sub: Any, name: str, help: str) -> Any:
    parser = sub.add_parser(name, help=help, description=help)
    return parser.add_subparsers(dest=f"{name}_command", required=True, metavar="COMMAND")


def _serving(parser: argparse.ArgumentParser, *, driver: bool = True) -> None:
    parser.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (default: 127.0.0.1)"
    )
    parser.add_argument("--port", type=int, default=8000, help="the port (default: 8000)")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="server processes, each a full replica; one per core (default: 1)",
    )
    if driver:
        parser.add_argument(
            "--no-driver",
            action="store_true",
            help="run no background driver in this process: it still advances the runs its "
            "own requests create (default: off, the driver runs)",
        )


def _keys(create: argparse.ArgumentParser) -> None:
    create.add_argument("--tenant", required=True, help="the key's tenant (required)")
    create.add_argument(
        "--subject", required=True, help="whom the key stands for, e.g. a user (required)"
    )
    create.add_argument(
        "--roles", required=True, help="comma-separated, of caller,approver,admin (required)"
    )
    create.add_argument(
        "--scopes",
        default=None,
        help='comma-separated scopes; "" for none (default: every scope, also of tools '
        "added later)",
    )
    create.add_argument(
        "--name", default=None, help="shown in key lists, 1-100 characters (default: the subject)"
    )


def _eval(evaluate: argparse.ArgumentParser) -> None:
    evaluate.add_argument(
        "--dataset", required=True, help="the cases, as JSON lines (required; see evals/README.md)"
    )
    evaluate.add_argument("--route", required=True, help="the model route to evaluate (required)")
    evaluate.add_argument("--trials", type=int, default=3, help="runs of each case (default: 3)")
    evaluate.add_argument(
        "--out",
        type=Path,
        default=None,
        help="a folder for report.json and report.md (default: none, print only)",
    )


def _replay(replay: argparse.ArgumentParser) -> None:
    replay.add_argument("run_id", metavar="RUN_ID", help="the finished run to replay (required)")
    replay.add_argument(
        "--tenant",
        default=None,
        help="the run's tenant (default: found by the run id in any tenant)",
    )
    replay.add_argument(
        "--side-effects",
        action="store_true",
        help="let the replay call HTTP and MCP tools with side effects, which act on their "
        "real backends again (default: off, a run that called one is not replayed)",
    )
