"""The migrations build exactly the schema app/db/tables.py declares, compared two ways:
Alembic's autogenerate (columns, types, nullability, server defaults, indexes with their
expressions, unique and foreign-key constraints), and Postgres' own catalog of a migrated
database against that of one made from the table definitions, which also covers what
autogenerate leaves out (partial-index predicates, CHECK constraints, primary keys,
triggers and the functions they run, types, storage parameters such as a fillfactor).
Postgres normalises both sides' definitions the same way, so a textual comparison of its
catalog is exact.

Column order is not compared: Postgres appends every added column at the end of its table
and cannot move it, and the code never reads columns by position.

Synchronous tests, like test_database.py: each makes its own databases."""

from __future__ import annotations

import asyncio
from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import CheckConstraint, MetaData, PrimaryKeyConstraint, text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from app.db import migrate
from app.db.tables import metadata
from tests.support.dbserver import fresh_database

_OURS = "n.nspname = 'public' AND c.relname NOT LIKE 'alembic_version%'"
CATALOG = {
    "relations": f"""
        SELECT c.relname, c.relkind, obj_description(c.oid, 'pg_class'),
               array_to_string(c.reloptions, ',')
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE {_OURS}""",
    "columns": f"""
        SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
               pg_get_expr(d.adbin, d.adrelid), co.collname, a.attidentity, a.attgenerated,
               col_description(c.oid, a.attnum)
        FROM pg_attribute a
        JOIN pg_class c ON c.oid = a.attrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        LEFT JOIN pg_collation co ON co.oid = a.attcollation
        WHERE {_OURS} AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped""",
    # Primary keys, unique, CHECK, foreign-key and exclusion constraints, in full.
    "constraints": f"""
        SELECT c.relname, k.conname, k.contype, pg_get_constraintdef(k.oid)
        FROM pg_constraint k
        JOIN pg_class c ON c.oid = k.conrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE {_OURS}""",
    # Each index's whole definition: columns or expressions, method, uniqueness, predicate.
    "indexes": f"""
        SELECT c.relname, pg_get_indexdef(i.indexrelid)
        FROM pg_index i
        JOIN pg_class c ON c.oid = i.indexrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE {_OURS}""",
    "triggers": f"""
        SELECT c.relname, t.tgname, pg_get_triggerdef(t.oid)
        FROM pg_trigger t
        JOIN pg_class c ON c.oid = t.tgrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE {_OURS} AND NOT t.tgisinternal""",
    # Functions in full (a trigger's body is one): name, arguments and definition.
    "functions": """
        SELECT p.proname, pg_get_function_identity_arguments(p.oid), pg_get_functiondef(p.oid)
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public'""",
    "types": """
        SELECT t.typname, t.typtype FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
        WHERE n.nspname = 'public' AND t.typtype IN ('e', 'd', 'r', 'm')""",
}
Catalog = dict[str, set[tuple[Any, ...]]]


async def catalog_of(engine: AsyncEngine) -> Catalog:
    async with engine.connect() as connection:
        return {
            kind: {tuple(row) for row in await connection.execute(text(sql))}
            for kind, sql in CATALOG.items()
        }


def differences(migrated: Catalog, declared: Catalog) -> dict[str, dict[str, list[Any]]]:
    """Per kind of object, what only one side has (kinds where both agree left out)."""
    found = {}
    for kind in CATALOG:
        only_migrated = sorted(migrated[kind] - declared[kind], key=repr)
        only_declared = sorted(declared[kind] - migrated[kind], key=repr)
        if only_migrated or only_declared:
            found[kind] = {"migrated": only_migrated, "declared": only_declared}
    return found


async def _compare(
    migrated_url: str, declared_url: str, declared: MetaData
) -> tuple[list[Any], dict[str, dict[str, list[Any]]]]:
    migrated_db = create_async_engine(migrated_url)
    declared_db = create_async_engine(declared_url)
    try:
        await migrate.upgrade(migrated_db)
        async with declared_db.begin() as connection:
            await connection.run_sync(declared.create_all)
        async with migrated_db.connect() as connection:
            autogenerate = await connection.run_sync(
                lambda sync: compare_metadata(
                    MigrationContext.configure(
                        sync, opts={"compare_type": True, "compare_server_default": True}
                    ),
                    declared,
                )
            )
        return autogenerate, differences(
            await catalog_of(migrated_db), await catalog_of(declared_db)
        )
    finally:
        await migrated_db.dispose()
        await declared_db.dispose()


def compare(server_url: str, declared: MetaData) -> tuple[list[Any], dict[str, Any]]:
    """(autogenerate's diff, the catalogs' differences) between a database migrated to head
    and one made from `declared`."""
    with fresh_database(server_url) as migrated_url, fresh_database(server_url) as declared_url:
        return asyncio.run(_compare(migrated_url, declared_url, declared))


def test_the_migrations_at_head_build_exactly_the_declared_tables(
    db_server: tuple[str, str],
) -> None:
    autogenerate, catalogs = compare(db_server[1], metadata)
    assert autogenerate == []
    assert catalogs == {}


def test_the_catalog_comparison_sees_what_autogenerate_does_not(
    db_server: tuple[str, str],
) -> None:
    """Declared tables that differ from the migrations in a partial index's predicate, a
    CHECK constraint and a primary key's column order: autogenerate reports none of it."""
    altered = MetaData(naming_convention=metadata.naming_convention)
    for table in metadata.sorted_tables:
        table.to_metadata(altered)
    (open_expiry,) = [i for i in altered.tables["preview"].indexes if "open" in str(i.name)]
    open_expiry.dialect_options["postgresql"]["where"] = text("status = 'pending'")
    altered.tables["run"].append_constraint(CheckConstraint("steps >= 0", name="steps"))
    altered.tables["tool_rate"].append_constraint(
        PrimaryKeyConstraint("tool", "tenant_id", "window_start")
    )

    autogenerate, catalogs = compare(db_server[1], altered)

    assert autogenerate == []
    declared_only = {row[1] for row in catalogs["constraints"]["declared"]}
    migrated_only = {row[1] for row in catalogs["constraints"]["migrated"]}
    assert declared_only == {"ck_run_steps", "pk_tool_rate"}
    assert migrated_only == {"pk_tool_rate"}
    [(_, predicate)] = [r for r in catalogs["indexes"]["declared"] if "open_expiry" in r[1]]
    assert "WHERE ((status)::text = 'pending'::text)" in predicate
    assert {r[0] for r in catalogs["indexes"]["migrated"]} == {
        "ix_preview_open_expiry",
        "pk_tool_rate",
    }
