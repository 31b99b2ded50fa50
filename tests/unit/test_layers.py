"""The layer contract of pyjms (issue 13), checked on the source with ``ast``.

Layers, bottom up; a module may import only from its own layer or below:

1. errors: ``pyjms.errors`` and ``pyjms.reasons``, the reason codes errors carry;
2. wire: ``pyjms.bridge`` (JVM, classpath, codec, error translation, the Python/Java contract);
3. client: ``pyjms.api`` (factory, context, producer, consumer, message, destination and the
   extension points features and providers plug into);
4. features: ``pyjms.rules``, ``pyjms.delay``, ``pyjms.browse``, ``pyjms.dlq``, ``pyjms.otel``
   (OpenTelemetry tracing, imported only by a user who turns it on);
5. providers: ``pyjms.providers`` (and ``pyjms.broker``, its public re-export);
6. asyncio: ``pyjms.aio``, the asyncio API, built only on the public synchronous API (the
   client and browse with mark) as nats.py builds JetStream on its public client; besides
   those it takes only the JVM thread attachment (``pyjms.bridge.jvm``) and the errors
   (test_aio_is_built_on_the_public_api), and only the entry points may import it;
7. entry points: ``pyjms.spark``, ``pyjms.cli``.

The package root ``pyjms`` is the public facade and may import from any layer; no layer may
import the facade. Besides the direction of imports, the test refuses an import cycle between
modules, a pyjms import inside a function (the JVM start, jpype, and the optional extra pyspark
are the allowed lazy imports) and reads of another package's private members (``x._name``
where ``x`` is not ``self``/``cls`` and ``_name`` is defined only in another top-level package).
Above the client (the providers aside) no module imports the wire's record format
(``pyjms.bridge.codec``) or touches a raw Java object (``.java``, ``jvm.shim()``, ``jclass``,
``pyjms.bridge.java_types``): pyjms.api.bulk declares what the features and Spark move in bulk.
No module is over MAX_MODULE_LINES lines (issue 33: modules by responsibility; a module
that grows past it is split by what its parts do, not by shaving comments).
The checks are plain functions over a source tree, so the tests at the end feed them small
synthetic trees that break each rule, to show that the contract can fail.
"""

from __future__ import annotations

import ast
import textwrap
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "pyjms"

#: (layer name, module prefixes), bottom up; docs/architecture.md's package table names the same
#: (tests/unit/test_architecture_doc.py)
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("errors", ("pyjms.errors", "pyjms.reasons", "pyjms.version")),
    ("wire", ("pyjms.bridge",)),
    ("client", ("pyjms.api",)),
    # pyjms.otel: OpenTelemetry tracing (the otel extra), a feature on the client's public
    # extension points; no layer imports it, so only instrument() brings opentelemetry in
    ("features", ("pyjms.rules", "pyjms.delay", "pyjms.browse", "pyjms.dlq", "pyjms.otel")),
    ("providers", ("pyjms.providers", "pyjms.broker")),
    ("asyncio", ("pyjms.aio",)),
    # pyjms.conformance: the conformance kit, on the public API of every layer below (the
    # admin service's attributes, browse with mark, the DLQ handler), under the CLI
    ("entry points", ("pyjms.spark", "pyjms.cli", "pyjms.conformance", "pyjms.__main__")),
)
FACADE = "pyjms"
#: modules a function may import lazily: the optional extras and the JVM start
LAZY_ALLOWED = ("pyspark", "jpype")


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the imported pyjms module (or the lazy non-pyjms module)
    line: int
    in_function: bool
    type_only: bool  # under ``if TYPE_CHECKING:``


@dataclass
class Tree:
    """The modules of one package tree, parsed."""

    root_package: str
    modules: dict[str, ast.Module] = field(default_factory=dict)
    packages: set[str] = field(default_factory=set)  # modules that are packages (__init__)

    @classmethod
    def load(cls, root: Path, root_package: str = "pyjms") -> Tree:
        tree = cls(root_package)
        for path in sorted(root.rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            name = ".".join([root_package, *parts])
            tree.modules[name] = ast.parse(path.read_text(encoding="utf-8"), str(path))
            if is_package:
                tree.packages.add(name)
        return tree

    @classmethod
    def from_sources(cls, sources: dict[str, str], root_package: str = "pyjms") -> Tree:
        """A synthetic tree: {"pyjms/api/context.py": "source", ...}."""
        tree = cls(root_package)
        for rel, src in sources.items():
            parts = rel.removesuffix(".py").split("/")
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            name = ".".join(parts)
            tree.modules[name] = ast.parse(textwrap.dedent(src), rel)
            if is_package:
                tree.packages.add(name)
        return tree

    def resolve(self, name: str) -> str | None:
        """The module a dotted name refers to (a module, or the package holding a name)."""
        while name:
            if name in self.modules:
                return name
            name = name.rpartition(".")[0]
        return None

    def top_package(self, module: str) -> str:
        """``pyjms.api.context`` -> ``pyjms.api``; ``pyjms.errors`` -> ``pyjms.errors``."""
        return ".".join(module.split(".")[:2])


def layer_of(module: str) -> int | None:
    """The layer index of a module (None for the facade)."""
    if module == FACADE:
        return None
    for i, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return i
    raise AssertionError(f"module {module} is in no layer: add it to LAYERS in tests/unit/test_layers.py")


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(tree: Tree) -> list[Import]:
    """Every import of a tree's module (and every lazy import of anything, for rule c)."""
    found: list[Import] = []
    for module, node in tree.modules.items():
        package = module if module in tree.packages else module.rpartition(".")[0]

        def visit(n: ast.AST, in_function: bool, type_only: bool) -> None:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                in_function = True
            if isinstance(n, ast.If) and _is_type_checking(n.test):
                for child in n.body:
                    visit(child, in_function, True)
                for child in n.orelse:
                    visit(child, in_function, type_only)
                return
            names: list[str] = []
            if isinstance(n, ast.Import):
                names = [a.name for a in n.names]
            elif isinstance(n, ast.ImportFrom):
                base = n.module or ""
                if n.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (n.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                names = (
                    [f"{base}.{a.name}" for a in n.names]
                    if base.split(".")[0] == tree.root_package
                    else [base]
                )
            for name in names:
                if name.split(".")[0] == tree.root_package:
                    target = tree.resolve(name)
                    if target is not None:
                        found.append(Import(module, target, n.lineno, in_function, type_only))
                elif in_function:
                    found.append(Import(module, name, n.lineno, True, type_only))
            for child in ast.iter_child_nodes(n):
                visit(child, in_function, type_only)

        visit(node, False, False)
    return found


def _with_parents(tree: Tree, target: str, importer: str) -> list[str]:
    """Importing a.b.c runs a.b's __init__ first: it is a dependency too, unless it is the
    importer's own package (already being imported) or the facade."""
    out = [target]
    parts = target.split(".")
    for i in range(2, len(parts)):
        parent = ".".join(parts[:i])
        if parent in tree.modules and not importer.startswith(parent + "."):
            out.append(parent)
    return out


def upward_imports(tree: Tree) -> list[str]:
    """(a) Imports of a higher layer (and of the facade, from anything but the facade)."""
    bad = []
    for imp in imports(tree):
        if imp.target.split(".")[0] != tree.root_package:
            continue
        source = layer_of(imp.module)
        if source is None:
            continue  # the facade may import anything
        for target in _with_parents(tree, imp.target, imp.module):
            to = layer_of(target)
            if to is None or to > source:
                to_name = "the facade" if to is None else f"layer '{LAYERS[to][0]}'"
                bad.append(
                    f"{imp.module}:{imp.line} (layer '{LAYERS[source][0]}') imports {target} ({to_name})"
                )
    return bad


def dependency_graph(tree: Tree) -> dict[str, set[str]]:
    """Module -> modules it makes Python run (type-only imports left out)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for imp in imports(tree):
        if imp.type_only or imp.target.split(".")[0] != tree.root_package:
            continue
        for target in _with_parents(tree, imp.target, imp.module):
            if target != imp.module and target != tree.root_package:
                graph[imp.module].add(target)
    return graph


def cycles(tree: Tree) -> list[list[str]]:
    """(b) Strongly connected components of more than one module (Tarjan)."""
    graph = dependency_graph(tree)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(tree.modules):
        if v not in index:
            strong(v)
    return out


def function_imports(tree: Tree) -> list[str]:
    """(c) Imports inside a function: of pyjms modules always, of others unless allowed."""
    bad = []
    for imp in imports(tree):
        if not imp.in_function:
            continue
        if imp.target.split(".")[0] in LAZY_ALLOWED:
            continue
        bad.append(f"{imp.module}:{imp.line} imports {imp.target} inside a function")
    return bad


def _defined_private_names(tree: Tree) -> dict[str, set[str]]:
    """Top-level package -> the private names its modules define (attributes, methods, slots,
    module globals)."""
    defined: dict[str, set[str]] = defaultdict(set)
    for module, node in tree.modules.items():
        names = defined[tree.top_package(module)]
        for n in ast.walk(node):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(n.name)
            elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
                names.add(n.attr)
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.add(n.id)
            elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
                names.add(n.target.id)
            elif isinstance(n, ast.Assign):
                for t in n.targets:
                    if (
                        isinstance(t, ast.Name)
                        and t.id == "__slots__"
                        and isinstance(n.value, (ast.Tuple, ast.List))
                    ):
                        names.update(e.value for e in n.value.elts if isinstance(e, ast.Constant))
    return {k: {n for n in v if n.startswith("_") and not n.startswith("__")} for k, v in defined.items()}


def private_reads(tree: Tree) -> list[str]:
    """(d) ``x._name`` where x is not self/cls and ``_name`` is defined only in other packages,
    or x is a module of another package (best effort: no type inference)."""
    defined = _defined_private_names(tree)
    bad = []
    for module, node in tree.modules.items():
        here = tree.top_package(module)
        own = defined.get(here, set())
        # names bound to modules of other packages by this module's imports
        module_aliases: dict[str, str] = {}
        for n in ast.walk(node):
            if isinstance(n, ast.ImportFrom) and n.module and n.module.split(".")[0] == tree.root_package:
                for a in n.names:
                    full = f"{n.module}.{a.name}"
                    if full in tree.modules:
                        module_aliases[a.asname or a.name] = full
            elif isinstance(n, ast.Import):
                for a in n.names:
                    if a.asname and a.name in tree.modules:
                        module_aliases[a.asname] = a.name
        for n in ast.walk(node):
            if not (isinstance(n, ast.Attribute) and n.attr.startswith("_") and not n.attr.startswith("__")):
                continue
            base = n.value
            if isinstance(base, ast.Name) and base.id in ("self", "cls"):
                continue
            if isinstance(base, ast.Name) and base.id in module_aliases:
                if tree.top_package(module_aliases[base.id]) != here:
                    bad.append(f"{module}:{n.lineno} reads {base.id}.{n.attr} of {module_aliases[base.id]}")
                continue
            if n.attr in own:
                continue
            owners = sorted(p for p, names in defined.items() if n.attr in names)
            if owners:
                bad.append(f"{module}:{n.lineno} reads .{n.attr} (defined in {', '.join(owners)})")
    return bad


def module_lines(root: Path) -> dict[str, int]:
    return {
        str(p.relative_to(root.parent)): len(p.read_text(encoding="utf-8").splitlines())
        for p in sorted(root.rglob("*.py"))
    }


#: the most lines a module may have (issue 33), counted as module_lines counts them
MAX_MODULE_LINES = 500


def long_modules(root: Path, most: int = MAX_MODULE_LINES) -> list[str]:
    """(g) The modules under ``root`` of more than ``most`` lines."""
    return [f"{path}: {lines} lines" for path, lines in module_lines(root).items() if lines > most]


# ---------------------------------------------------------------------------- the contract


#: The delay processor is being split into parts (issue 13, item 7); until then it still reads
#: these private members of the client, which keeps them for it. The public API it moves to:
#: JMSContext.channel / .factory / .provider / .send_routed, Message.encode / .from_record /
#: .get_message_token, JMSConsumer's wire receiver, pyjms.api.forward.forward_entry. Remove
#: this once pyjms.delay reads none of them (and the aliases in pyjms.api).
@pytest.fixture(scope="module")
def pyjms_tree() -> Tree:
    return Tree.load(ROOT)


def test_every_module_has_a_layer(pyjms_tree: Tree) -> None:
    # layer_of raises for a module in no layer (test_a_module_outside_every_layer_fails)
    assert {m for m in pyjms_tree.modules if layer_of(m) is None} == {FACADE}


def test_imports_go_only_downward(pyjms_tree: Tree) -> None:
    assert upward_imports(pyjms_tree) == []


def test_no_import_cycle(pyjms_tree: Tree) -> None:
    assert cycles(pyjms_tree) == []


def test_no_pyjms_import_inside_a_function(pyjms_tree: Tree) -> None:
    assert function_imports(pyjms_tree) == []


def test_no_private_reads_across_packages(pyjms_tree: Tree) -> None:
    assert private_reads(pyjms_tree) == []


def test_no_module_is_over_500_lines() -> None:
    assert long_modules(ROOT) == []
    assert "pyjms/api/context.py" in module_lines(ROOT)  # the check saw the package


#: what pyjms.aio may import besides itself: the public synchronous API it is built on, the
#: errors, and the JVM attachment of its worker threads
AIO_MAY_IMPORT = ("pyjms.api", "pyjms.browse", "pyjms.errors", "pyjms.reasons", "pyjms.bridge.jvm")


def aio_imports_beyond_the_public_api(tree: Tree) -> list[str]:
    bad = []
    for imp in imports(tree):
        if not imp.module.startswith("pyjms.aio") or imp.target.split(".")[0] != tree.root_package:
            continue
        if imp.target.startswith("pyjms.aio") or any(
            imp.target == p or imp.target.startswith(p + ".") for p in AIO_MAY_IMPORT
        ):
            continue
        bad.append(f"{imp.module}:{imp.line} imports {imp.target}")
    return bad


def test_aio_is_built_on_the_public_api(pyjms_tree: Tree) -> None:
    assert aio_imports_beyond_the_public_api(pyjms_tree) == []
    assert any(m.startswith("pyjms.aio.") for m in pyjms_tree.modules)  # the check saw the package


def test_aio_reaching_below_the_public_api_fails() -> None:
    tree = _tree(
        pyjms__aio__init="",
        pyjms__aio__context="from pyjms.bridge.channel import Channel\n",
        pyjms__bridge__init="",
        pyjms__bridge__channel="class Channel: pass\n",
    )
    assert aio_imports_beyond_the_public_api(tree) == ["pyjms.aio.context:1 imports pyjms.bridge.channel"]


#: the layers that may use the wire's record format (pyjms.bridge.codec) and raw Java objects:
#: the wire itself, the client (pyjms.api.bulk declares what the layers above move in bulk) and
#: the providers (their own shim classes)
WIRE_LAYERS = ("pyjms.bridge", "pyjms.api", "pyjms.providers")


def _above_the_wire(module: str) -> bool:
    return module != FACADE and not any(module == p or module.startswith(p + ".") for p in WIRE_LAYERS)


def codec_imports(tree: Tree) -> list[str]:
    """(e) Imports of the wire's record format above the client: the layers above pack and read
    records only through pyjms.api (Message.encode, pyjms.api.bulk)."""
    return [
        f"{imp.module}:{imp.line} imports {imp.target}"
        for imp in imports(tree)
        if imp.target == f"{tree.root_package}.bridge.codec" and _above_the_wire(imp.module)
    ]


#: what reaches a raw Java object: a typed channel's ``.java``, the JVM's classes
#: (``jvm.shim()``, ``jclass``), the Protocols of Java objects
_RAW_JAVA_ATTRIBUTES = ("java", "shim", "jclass")


def raw_java_uses(tree: Tree) -> list[str]:
    """(f) Raw Java objects above the client: ``x.java``, ``jvm.shim()``, ``.jclass(...)`` and
    imports of pyjms.bridge.java_types; the shim's classes are called through the typed
    channel and pyjms.api.bulk, which translate their errors."""
    bad = [
        f"{imp.module}:{imp.line} imports {imp.target}"
        for imp in imports(tree)
        if imp.target == f"{tree.root_package}.bridge.java_types" and _above_the_wire(imp.module)
    ]
    for module, node in tree.modules.items():
        if not _above_the_wire(module):
            continue
        for n in ast.walk(node):
            if isinstance(n, ast.Attribute) and n.attr in _RAW_JAVA_ATTRIBUTES:
                bad.append(f"{module}:{n.lineno} uses .{n.attr}")
    return sorted(bad)


def test_no_codec_above_the_client(pyjms_tree: Tree) -> None:
    assert codec_imports(pyjms_tree) == []


def test_no_raw_java_above_the_client(pyjms_tree: Tree) -> None:
    assert raw_java_uses(pyjms_tree) == []


# ---------------------------------------------------------------------------- the checks can fail

_SYNTHETIC = {
    "pyjms/__init__.py": "from pyjms.api.context import Context\n",
    "pyjms/errors.py": "class Error(Exception):\n    pass\n",
    "pyjms/api/__init__.py": "",
    "pyjms/api/context.py": """
        from pyjms.errors import Error

        class Context:
            def __init__(self):
                self._channel = None
    """,
    "pyjms/delay/__init__.py": "",
    "pyjms/delay/mechanism.py": """
        from pyjms.api.context import Context

        def probe(ctx: Context):
            return ctx.create()
    """,
}


def _tree(**changes: str) -> Tree:
    """The synthetic tree with modules added or replaced: pyjms__api__producer is
    pyjms/api/producer.py, pyjms__delay__init pyjms/delay/__init__.py."""
    sources = dict(_SYNTHETIC)
    for name, source in changes.items():
        parts = name.split("__")
        if parts[-1] == "init":
            parts[-1] = "__init__"
        sources["/".join(parts) + ".py"] = source
    return Tree.from_sources(sources)


def test_a_clean_synthetic_tree_passes() -> None:
    tree = _tree()
    assert upward_imports(tree) == []
    assert cycles(tree) == []
    assert function_imports(tree) == []
    assert private_reads(tree) == []


def test_an_upward_import_fails() -> None:
    tree = _tree(pyjms__api__producer="from pyjms.delay.mechanism import probe\n")
    assert upward_imports(tree) == [
        "pyjms.api.producer:1 (layer 'client') imports pyjms.delay.mechanism (layer 'features')",
        "pyjms.api.producer:1 (layer 'client') imports pyjms.delay (layer 'features')",
    ]


def test_a_type_only_upward_import_fails_too() -> None:
    tree = _tree(
        pyjms__api__producer="from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from pyjms.delay import mechanism\n"
    )
    assert [b.split(" imports ")[1] for b in upward_imports(tree)] == [
        "pyjms.delay.mechanism (layer 'features')",
        "pyjms.delay (layer 'features')",
    ]
    assert cycles(tree) == []  # type-only imports run nothing


def test_importing_the_asyncio_api_from_a_provider_fails() -> None:
    tree = _tree(
        pyjms__aio__init="",
        pyjms__aio__context="class JMSContext: pass\n",
        pyjms__providers__init="",
        pyjms__providers__artemis="from pyjms.aio.context import JMSContext\n",
    )
    assert upward_imports(tree) == [
        "pyjms.providers.artemis:1 (layer 'providers') imports pyjms.aio.context (layer 'asyncio')",
        "pyjms.providers.artemis:1 (layer 'providers') imports pyjms.aio (layer 'asyncio')",
    ]


def test_importing_the_facade_from_a_layer_fails() -> None:
    tree = _tree(pyjms__delay__conformance="import pyjms\n")
    assert upward_imports(tree) == ["pyjms.delay.conformance:1 (layer 'features') imports pyjms (the facade)"]


def test_an_import_cycle_fails() -> None:
    tree = _tree(
        pyjms__api__producer="from pyjms.api import consumer\n",
        pyjms__api__consumer="from pyjms.api.producer import send\n",
    )
    assert cycles(tree) == [["pyjms.api.consumer", "pyjms.api.producer"]]


def test_a_cycle_through_a_package_init_fails() -> None:
    # importing pyjms.delay.staging runs pyjms/delay/__init__.py first, which imports the
    # processor, which imports the browse package, whose browser imports pyjms.delay.staging
    tree = _tree(
        pyjms__delay__init="from pyjms.delay.processor import run\n",
        pyjms__delay__processor="from pyjms.browse.options import FIRST\ndef run(): pass\n",
        pyjms__delay__staging="QUEUE = 'Q'\n",
        pyjms__browse__init="from pyjms.browse.browser import Browser\n",
        pyjms__browse__options="FIRST = 1\n",
        pyjms__browse__browser="from pyjms.delay.staging import QUEUE\nclass Browser: pass\n",
    )
    assert cycles(tree) == [["pyjms.browse", "pyjms.browse.browser", "pyjms.delay", "pyjms.delay.processor"]]


def test_a_package_importing_its_own_modules_is_no_cycle() -> None:
    tree = _tree(
        pyjms__delay__init="from pyjms.delay.processor import run\n",
        pyjms__delay__processor="from pyjms.delay.mechanism import probe\ndef run(): pass\n",
    )
    assert cycles(tree) == []


def test_an_import_inside_a_function_fails() -> None:
    tree = _tree(
        pyjms__api__producer="""
        def send():
            from pyjms.api.context import Context
            import jpype
            import pyspark.sql
            import json
            return Context
    """
    )
    assert function_imports(tree) == [
        "pyjms.api.producer:3 imports pyjms.api.context inside a function",
        "pyjms.api.producer:6 imports json inside a function",
    ]


def test_a_private_read_across_packages_fails() -> None:
    tree = _tree(
        pyjms__delay__mechanism="""
        from pyjms.api.context import Context
        from pyjms.api import context

        def probe(ctx: Context):
            ctx.channel()
            return ctx._channel, context._hidden, ctx._own

        class Own:
            def __init__(self):
                self._own = 1
    """
    )
    assert private_reads(tree) == [
        "pyjms.delay.mechanism:7 reads ._channel (defined in pyjms.api)",
        "pyjms.delay.mechanism:7 reads context._hidden of pyjms.api.context",
    ]


def test_a_module_over_500_lines_fails(tmp_path: Path) -> None:
    package = tmp_path / "pyjms"
    (package / "api").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "api" / "context.py").write_text("x = 1\n" * MAX_MODULE_LINES, encoding="utf-8")
    (package / "api" / "producer.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1), encoding="utf-8")
    assert long_modules(package) == ["pyjms/api/producer.py: 501 lines"]
    # lines as splitlines counts them: a last line without its newline counts too
    (package / "api" / "context.py").write_text("x = 1\n" * MAX_MODULE_LINES + "y = 2", encoding="utf-8")
    assert long_modules(package) == ["pyjms/api/context.py: 501 lines", "pyjms/api/producer.py: 501 lines"]


def test_a_module_outside_every_layer_fails() -> None:
    with pytest.raises(AssertionError, match="pyjms.extra is in no layer"):
        layer_of("pyjms.extra")


def test_the_codec_above_the_client_fails() -> None:
    tree = _tree(
        pyjms__bridge__init="",
        pyjms__bridge__codec="T_STRING = 8\n",
        pyjms__api__message="from pyjms.bridge import codec as C\n",
        pyjms__dlq__init="",
        pyjms__dlq__handler="from pyjms.bridge import codec as C\nfrom pyjms.bridge.codec import T_STRING\n",
    )
    assert codec_imports(tree) == [
        "pyjms.dlq.handler:1 imports pyjms.bridge.codec",
        "pyjms.dlq.handler:2 imports pyjms.bridge.codec",
    ]


def test_raw_java_above_the_client_fails() -> None:
    tree = _tree(
        pyjms__bridge__init="",
        pyjms__bridge__jvm="def shim(): pass\n",
        pyjms__bridge__java_types="class JavaChannel: pass\n",
        pyjms__api__consumer="def wire(c):\n    return c.java\n",
        pyjms__delay__sorter="""
        from pyjms.bridge import jvm
        from pyjms.bridge.java_types import JavaChannel

        def file(ctx, consumer):
            filer = jvm.shim().jclass("org.pyjms.shim.delay.SlotFiler")
            return filer(ctx.channel.java).file(consumer.wire_receiver().java)
    """,
    )
    assert raw_java_uses(tree) == [
        "pyjms.delay.sorter:3 imports pyjms.bridge.java_types",
        "pyjms.delay.sorter:6 uses .jclass",
        "pyjms.delay.sorter:6 uses .shim",
        "pyjms.delay.sorter:7 uses .java",
        "pyjms.delay.sorter:7 uses .java",
    ]
