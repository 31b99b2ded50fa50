"""Builds the wheel's Java parts: the lock of the providers' jars, the default provider's jars
and the shim (javac, no Gradle).

The lock (pyjms/bridge/jars.lock.json, committed) names each provider's jars with their sha256,
as Maven resolves java/pom.xml; the wheel carries it, so an installed pyjms downloads any
provider's jars without Maven. When the committed lock is older than the pom, the build writes
a new one into the wheel with Maven. The jars themselves come by the lock (HTTPS, sha256
checked, cached in ~/.cache/pyjms). An editable install (pip install -e) builds nothing: a
source checkout downloads and builds into ~/.cache/pyjms on first use."""

import importlib.util
import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


class BuildJava(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        bridge = HERE / "pyjms" / "bridge"
        maven = _load("_pyjms_maven", bridge / "maven.py")
        jarlock = _load("_pyjms_jarlock", bridge / "jarlock.py")
        shimbuild = _load("_pyjms_shimbuild", bridge / "shimbuild.py")
        pom = HERE / "java" / "pom.xml"
        cache = maven.default_cache_dir()
        package = Path(self.build_lib) / "pyjms"
        # the lock travels in the wheel (package data, copied by build_py); written afresh by
        # Maven when the committed one was written from another pom
        lock_file = package / "bridge" / jarlock.LOCK_NAME
        committed = jarlock.read(bridge / jarlock.LOCK_NAME)
        if committed.pom_sha256 != maven.pom_sha256(pom):
            maven.stderr_progress(
                f"{jarlock.LOCK_NAME} is older than java/pom.xml: writing the wheel's lock with Maven"
            )
            lock_file.write_text(maven.lock_text(pom))
        lock = jarlock.read(lock_file)
        # the default provider's jars travel in the wheel, with their order
        jars = jarlock.fetch(lock, maven.DEFAULT_PROVIDER, cache)
        bundle = package / "_jars" / maven.DEFAULT_PROVIDER
        bundle.mkdir(parents=True, exist_ok=True)
        for jar in jars:
            shutil.copyfile(jar, bundle / Path(jar).name)
        (bundle / "classpath.txt").write_text("\n".join(Path(j).name for j in jars) + "\n")
        compile_cp = maven.merge(*(jarlock.fetch(lock, p, cache) for p in maven.SHIM_PROVIDERS))
        shimbuild.build(HERE / "java", compile_cp, package / "_shim" / shimbuild.JAR_NAME)


setup(cmdclass={"build_py": BuildJava})
