"""Builds the wheel's Java parts: the shim (javac, no Gradle) and the default provider's jars,
resolved from Maven Central by java/pom.xml. An editable install (pip install -e) builds
nothing: a source checkout resolves and builds into ~/.cache/pyjms on first use."""

import importlib.util
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildJava(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        bridge = HERE / "pyjms" / "bridge"
        maven = _load("_pyjms_maven", bridge / "maven.py")
        shimbuild = _load("_pyjms_shimbuild", bridge / "shimbuild.py")
        pom = HERE / "java" / "pom.xml"
        cache = maven.default_cache_dir()
        package = Path(self.build_lib) / "pyjms"
        # the default provider's jars travel in the wheel, with their order
        jars = maven.resolve(pom, maven.DEFAULT_PROVIDER, cache)
        bundle = package / "_jars" / maven.DEFAULT_PROVIDER
        bundle.mkdir(parents=True, exist_ok=True)
        for jar in jars:
            shutil.copyfile(jar, bundle / Path(jar).name)
        (bundle / "classpath.txt").write_text("\n".join(Path(j).name for j in jars) + "\n")
        # the pom, so that an installed pyjms can resolve the other providers on demand
        (package / "_shim").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(pom, package / "_shim" / "pom.xml")
        compile_cp = maven.merge(*(maven.resolve(pom, p, cache) for p in maven.SHIM_PROVIDERS))
        shimbuild.build(HERE / "java", compile_cp, package / "_shim" / shimbuild.JAR_NAME)


setup(cmdclass={"build_py": BuildJava})
