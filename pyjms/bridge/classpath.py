"""Where the JVM's jars come from, resolved in one place.

Order: the jars a caller names (an argument), then ``PYJMS_CLASSPATH``, then the bundled
default provider (ActiveMQ Classic 6.1.7 from the ``jmspy`` wheel, used for its jars only;
its Python code is never imported). Entries may be jar files or directories of jars.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Iterable

from pyjms.errors import SetupError

#: the default provider's jars inside the jmspy wheel, in classpath order
DEFAULT_PROVIDER_JARS = (
    "activemq-all-6.1.7.jar",
    "jakarta.jms-api-3.1.0.jar",
    "log4j-api-2.25.0.jar",
    "log4j-core-2.25.0.jar",
)


def _expand(entry: str) -> list[str]:
    p = Path(entry).expanduser()
    if p.is_dir():
        return sorted(str(j) for j in p.glob("*.jar"))
    if not p.exists():
        raise SetupError(f"classpath entry '{entry}' does not exist")
    return [str(p)]


def default_provider_dir() -> Path:
    """The jmspy wheel's libs/ folder, found without importing jmspy."""
    spec = importlib.util.find_spec("jmspy")
    if spec is None or not spec.submodule_search_locations:
        raise SetupError(
            "the default JMS provider jars are missing: install them with "
            "'pip install jmspy' (pyjms uses only the ActiveMQ jars it ships)"
        )
    return Path(list(spec.submodule_search_locations)[0]) / "libs"


def default_provider_jars() -> list[str]:
    libs = default_provider_dir()
    jars = [libs / name for name in DEFAULT_PROVIDER_JARS]
    missing = [str(j) for j in jars if not j.exists()]
    if missing:
        raise SetupError(
            f"the default provider jars are incomplete (missing {', '.join(missing)}): "
            "reinstall with 'pip install --force-reinstall jmspy'"
        )
    return [str(j) for j in jars]


def resolve(user_entries: Iterable[str] = (), *, include_default: bool = True) -> list[str]:
    """The provider classpath: named jars first, then PYJMS_CLASSPATH, then the default."""
    out: list[str] = []
    for entry in user_entries:
        out.extend(_expand(entry))
    env = os.environ.get("PYJMS_CLASSPATH", "")
    for entry in filter(None, env.split(os.pathsep)):
        out.extend(_expand(entry))
    if include_default:
        out.extend(default_provider_jars())
    seen: set[str] = set()
    return [j for j in out if not (j in seen or seen.add(j))]
