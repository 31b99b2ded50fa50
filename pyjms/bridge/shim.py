"""Finds the shim jar: the one ``pip install`` built, or one built from a source checkout."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pyjms.bridge import shimbuild
from pyjms.bridge.classpath import cache_dir
from pyjms.errors import SetupError

PACKAGE_DIR = Path(__file__).resolve().parent.parent
PACKAGED_JAR = PACKAGE_DIR / "_shim" / shimbuild.JAR_NAME
SOURCE_DIR = PACKAGE_DIR.parent / "java"  # present in a source checkout / editable install


def shim_jar(compile_classpath: Sequence[str]) -> str:
    """The shim jar to put on the classpath, building it from sources (against
    ``compile_classpath``) when needed."""
    try:
        if SOURCE_DIR.is_dir() and shimbuild.sources(SOURCE_DIR):
            # a checkout: the sources are the truth, so a stale packaged jar is never used
            digest = shimbuild.source_hash(SOURCE_DIR, compile_classpath)
            jar = cache_dir() / f"pyjms-shim-{digest}.jar"
            if not jar.exists():
                shimbuild.build(SOURCE_DIR, compile_classpath, jar)
            return str(jar)
        if PACKAGED_JAR.exists():
            return str(PACKAGED_JAR)
    except shimbuild.ShimBuildError as e:
        raise SetupError(str(e)) from None
    raise SetupError(
        f"the pyjms shim jar is missing ({PACKAGED_JAR}) and no Java sources are at hand: "
        "reinstall pyjms-jakarta with a JDK 17 on the PATH so that pip builds it"
    )
