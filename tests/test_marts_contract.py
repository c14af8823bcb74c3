"""The marts match their documented contract (sql/marts/marts.yaml): columns, and a grain that identifies rows."""

import duckdb
import pytest
import yaml

from flows.paths import SQL_DIR

CONTRACT = yaml.safe_load((SQL_DIR / "marts" / "marts.yaml").read_text())["models"]


def test_every_mart_sql_file_has_a_contract():
    assert sorted(p.stem for p in (SQL_DIR / "marts").glob("*.sql")) == sorted(CONTRACT)


@pytest.mark.parametrize("model", sorted(CONTRACT))
def test_columns_are_documented_and_grain_is_unique(flow_run, model):
    con = duckdb.connect(str(flow_run.warehouse), read_only=True)
    try:
        built = [r[0] for r in con.execute(
            "select column_name from information_schema.columns where table_schema = 'marts' and table_name = ? "
            "order by ordinal_position", [model]).fetchall()]
        grain = CONTRACT[model]["grain"]
        duplicates = con.execute(
            f"select {', '.join(grain)}, count(*) from marts.{model} group by all having count(*) > 1").fetchall()
        rows = con.execute(f"select count(*) from marts.{model}").fetchall()[0][0]
    finally:
        con.close()
    documented = set(CONTRACT[model]["columns"])
    assert sorted(set(built) - documented) == [], "undocumented columns"
    assert sorted(documented - set(built)) == [], "documented columns the mart no longer has"
    assert duplicates == []
    # a first run has nothing to compare with: changes is empty then (tests/test_changes.py fills it)
    assert rows > 0 or model == "changes"
