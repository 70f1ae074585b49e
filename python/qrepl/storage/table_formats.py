"""The file formats of a publisher table (DESIGN.md §10: a table qrepl cannot read exactly is
refused when it is published, in one line). The publisher's trigger reads a table's new data
files directly, so every file it may meet must be one it reads: Parquet or ORC. A table is
refused when its `write.format.default` or `write.delete.format.default` names another format
(Avro: Spark here has no Avro reader) or when its current data or delete files (Iceberg's
`files` metadata table) are of another format."""

from __future__ import annotations

READABLE_FORMATS = ("parquet", "orc")
FORMAT_PROPERTIES = ("write.format.default", "write.delete.format.default")


def _properties(spark, table: str) -> dict[str, str]:
    return {r[0]: r[1] for r in spark.sql(f"show tblproperties {table}").collect()}


def property_refusal(spark, table: str) -> str | None:
    """What of `table`'s format properties qrepl cannot read (`table` validated by the caller),
    or None: a metadata read only."""
    props = _properties(spark, table)
    unreadable = [
        f"{p}={props[p]}"
        for p in FORMAT_PROPERTIES
        if p in props and str(props[p]).strip().lower() not in READABLE_FORMATS
    ]
    return ", ".join(unreadable) or None


def format_refusal(spark, table: str) -> str | None:
    """The one-line refusal of publishing `table` (an existing table, named in full and
    validated by the caller), or None when its properties and its current files are all of a
    format qrepl reads."""
    found = []
    unreadable = property_refusal(spark, table)
    if unreadable:
        found.append(f"table property {unreadable}")
    if _is_iceberg(spark, table):
        formats = sorted(
            {str(r[0]).lower() for r in spark.sql(f"select distinct file_format from {table}.files").collect()}
            - set(READABLE_FORMATS)
        )
        if formats:
            found.append(f"{', '.join(formats)} data files")
    if not found:
        return None
    return (
        f"table {table} holds or writes a file format qrepl cannot read ({'; '.join(found)}): qrepl reads "
        f"{' and '.join(f.capitalize() if f == 'parquet' else f.upper() for f in READABLE_FORMATS)} files; "
        f"set its format properties to parquet and rewrite its files (rewrite_data_files with "
        f"'rewrite-all'='true') before publishing it"
    )


def run_refusal(spark, table: str) -> str | None:
    """Before a queue-reader run: the one line naming a publisher table whose format properties
    were changed to a format qrepl cannot read after it was published (a metadata read only;
    the files themselves were checked when it was published)."""
    if not spark.catalog.tableExists(table):
        return None  # the run says what is missing, as before
    unreadable = property_refusal(spark, table)
    if not unreadable:
        return None
    return (
        f"publisher table {table} now writes a file format qrepl cannot read ({unreadable}): set it back "
        f"to parquet or orc and rewrite any files written since (rewrite_data_files with 'rewrite-all'='true') "
        f"before the next run"
    )


def _is_iceberg(spark, table: str) -> bool:
    provider = [r for r in spark.sql(f"describe table extended {table}").collect() if r[0] == "Provider"]
    return bool(provider) and str(provider[0][1]).strip().lower() == "iceberg"
