"""docs/architecture.md's package table kept in step with the code (issue 33, item 6).

The table names each layer with its Python and Java packages. This test fails when they drift
apart: a layer added, renamed or given other packages in tests/unit/test_layers.py's LAYERS
(which the layer checks enforce on the code), a package added under pyjms/ or
java/src/main/java/org/pyjms/shim, or one removed, and the doc not changed to match; or
the other way round. It reads files only: no JVM.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.unit.test_layers import LAYERS

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
JAVA_ROOT = ROOT / "java" / "src" / "main" / "java"
#: the header row of the doc's package table
TABLE_HEADER = "| layer | name | Python packages | Java packages |"


@dataclass(frozen=True)
class LayerRow:
    """One row of the doc's package table."""

    number: int
    name: str
    python: tuple[str, ...]
    java: tuple[str, ...]


def package_table(text: str) -> list[LayerRow]:
    """The rows of the table under TABLE_HEADER (names in backquotes, in order)."""
    lines = [line.strip() for line in text.splitlines()]
    assert TABLE_HEADER in lines, f"the package table ({TABLE_HEADER}) is missing"
    rows = []
    for line in lines[lines.index(TABLE_HEADER) + 2 :]:  # after the header and its |---| line
        if not line.startswith("|"):
            break
        number, name, python, java = (cell.strip() for cell in line.strip("|").split("|"))
        rows.append(LayerRow(int(number), name, _quoted(python), _quoted(java)))
    return rows


def _quoted(cell: str) -> tuple[str, ...]:
    return tuple(re.findall(r"`([^`]+)`", cell))


def python_packages(package_dir: Path) -> set[str]:
    """The packages and modules right under the pyjms package (pyjms.api, pyjms.errors, ...)."""
    found = set()
    for path in package_dir.iterdir():
        if path.is_dir() and (path / "__init__.py").exists():
            found.add(f"pyjms.{path.name}")
        elif path.suffix == ".py" and path.name != "__init__.py":
            found.add(f"pyjms.{path.stem}")
    return found


def java_packages(java_root: Path) -> set[str]:
    """The Java packages of the shim: every directory under org/pyjms that holds a .java file."""
    return {
        ".".join(f.parent.relative_to(java_root).parts) for f in (java_root / "org" / "pyjms").rglob("*.java")
    }


def drift(
    rows: list[LayerRow],
    layers: tuple[tuple[str, tuple[str, ...]], ...],
    python: set[str],
    java: set[str],
) -> list[str]:
    """Where the table differs from the layers and the packages on disk, one line each."""
    out = []
    documented = [(row.number, row.name, row.python) for row in rows]
    expected = [(i, name, prefixes) for i, (name, prefixes) in enumerate(layers, 1)]
    if documented != expected:
        out.append(f"the table's layers {documented} are not LAYERS in tests/unit/test_layers.py {expected}")
    in_table = {p for row in rows for p in row.python}
    out += [f"{p} is in the table but not under pyjms/" for p in sorted(in_table - python)]
    out += [f"{p} is under pyjms/ but not in the table" for p in sorted(python - in_table)]
    java_in_table = {p for row in rows for p in row.java}
    out += [f"{p} is in the table but has no Java source" for p in sorted(java_in_table - java)]
    out += [f"{p} has Java sources but is not in the table" for p in sorted(java - java_in_table)]
    return out


def test_the_architecture_doc_names_every_layer_and_package() -> None:
    rows = package_table(DOC.read_text(encoding="utf-8"))
    assert drift(rows, LAYERS, python_packages(ROOT / "pyjms"), java_packages(JAVA_ROOT)) == []


def test_the_layer_diagram_numbers_the_layers_of_the_table() -> None:
    text = DOC.read_text(encoding="utf-8")
    diagram = text[text.index("## The layers") : text.index(TABLE_HEADER)]
    numbers = sorted({int(n) for n in re.findall(r"│ (\d+)  ", diagram)})
    assert numbers == [row.number for row in package_table(text)]


# ---------------------------------------------------------------------------- the check can fail

_TABLE = f"""
{TABLE_HEADER}
|---|---|---|---|
| 1 | errors | `pyjms.errors` | |
| 2 | wire | `pyjms.bridge` | `org.pyjms.shim` |
"""


def test_a_package_missing_from_the_table_or_from_the_code_is_named() -> None:
    rows = package_table(_TABLE)
    layers = (("errors", ("pyjms.errors",)), ("wire", ("pyjms.bridge",)))
    assert drift(rows, layers, {"pyjms.errors", "pyjms.bridge"}, {"org.pyjms.shim"}) == []
    assert drift(rows, layers, {"pyjms.errors", "pyjms.bridge", "pyjms.aio"}, {"org.pyjms.shim.delay"}) == [
        "pyjms.aio is under pyjms/ but not in the table",
        "org.pyjms.shim is in the table but has no Java source",
        "org.pyjms.shim.delay has Java sources but is not in the table",
    ]


def test_a_layer_the_table_misses_is_named() -> None:
    rows = package_table(_TABLE)
    layers = (("errors", ("pyjms.errors",)), ("wire", ("pyjms.bridge",)), ("client", ("pyjms.api",)))
    problems = drift(rows, layers, {"pyjms.errors", "pyjms.bridge"}, {"org.pyjms.shim"})
    assert len(problems) == 1 and problems[0].startswith("the table's layers")


def test_packages_on_disk_are_found(tmp_path: Path) -> None:
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "__init__.py").write_text("")
    (tmp_path / "data").mkdir()  # no __init__.py: not a package
    (tmp_path / "errors.py").write_text("")
    (tmp_path / "__init__.py").write_text("")
    assert python_packages(tmp_path) == {"pyjms.api", "pyjms.errors"}
    shim = tmp_path / "java" / "org" / "pyjms" / "shim"
    (shim / "delay").mkdir(parents=True)
    (shim / "Channel.java").write_text("")
    (shim / "delay" / "DueMover.java").write_text("")
    assert java_packages(tmp_path / "java") == {"org.pyjms.shim", "org.pyjms.shim.delay"}
